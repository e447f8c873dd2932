"""The default-axis probe end to end: every adapter leaves an omitted axis out of its native call.

Each case below says ``omit: [axis]`` (dimension default-axis), so an adapter must call its API without the axis
argument and let the framework's own default decide; where the API has no default it raises Unsupported
("... axis is required (no default)"), which harness/classify.py labels ``required``. The labels are what each
(framework, variant) measured here, next to the framework's documented default. A regression in an adapter shows
up twice: as a different label, and as ``axis=`` in the recorded api string of a call that ran.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import adapters
from harness.cases import Case, load_file
from harness.runner import InProcess, execute

_DATA_2X3 = "data: {value: [[1, 2, 3], [4, 5, 6]], dtype: float32}"
# name -> (operator, inputs, attrs). Indices are valid on every reading of the axis and give a different output
# on each (axis 0, last axis, flattened), so the label names exactly one behaviour.
CASES: dict[str, tuple[str, str, str]] = {
    # axis 0 -> rows swapped (2,3); last axis -> [[2, 1], [5, 4]]; flattened -> [2, 1]
    "gather": ("Gather", f"{{{_DATA_2X3}, indices: {{value: [1, 0], dtype: int64}}}}", "{}"),
    # batch_dims 1 on data (2,3,4), indices (2,2): first non-batch axis (1) -> (2,2,4); last -> (2,3,2)
    "gather-batch-dims": (
        "Gather",
        "{data: {value: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24],"
        " shape: [2, 3, 4], dtype: float32}, indices: {value: [[2, 0], [1, 2]], dtype: int64}}",
        "{batch_dims: 1}",
    ),
    # axis 0 -> [[4, 2, 6], [1, 5, 3]]; last axis -> [[2, 1, 2], [4, 5, 4]]
    "gather-elements": (
        "GatherElements",
        f"{{{_DATA_2X3}, indices: {{value: [[1, 0, 1], [0, 1, 0]], dtype: int64}}}}",
        "{}",
    ),
    # axis 0 writes column-wise, axis 1 row-wise: different outputs, no duplicate targets on either
    "scatter-elements": (
        "ScatterElements",
        f"{{{_DATA_2X3}, indices: {{value: [[1, 0], [0, 1]], dtype: int64}},"
        " updates: {value: [[10, 20], [30, 40]], dtype: float32}}",
        "{}",
    ),
    # Take (canonical: axis None flattens); mode raise is the default, mode clip reaches tnp.take and jnp.take
    "take": ("Take", f"{{{_DATA_2X3}, indices: {{value: [1, 0], dtype: int64}}}}", "{}"),
    "take-clip": ("Take", f"{{{_DATA_2X3}, indices: {{value: [1, 0], dtype: int64}}}}", "{mode: clip}"),
}

U = "unsupported"  # the API cannot express the case at all, whatever the axis (a mode, batch_dims, ...)
R = "required"  # the API has no default axis

# (framework, case) -> {variant: label}, as measured (numpy 2.4, onnx 1.23, onnxruntime 1.31, openvino 2026.4,
# tensorflow 2.21, torch 2.13, jax 0.10.2).
EXPECTED: dict[tuple[str, str], dict[str, str]] = {
    # --- NumPy ------------------------------------------------------------------------------------------------
    # np.take: "By default, the flattened input array is used."
    # https://numpy.org/doc/stable/reference/generated/numpy.take.html
    ("numpy", "gather"): {"take": "flatten"},
    # np.take has no batch_dims; the advanced-indexing translation needs a stated axis
    ("numpy", "gather-batch-dims"): {"take": R},
    # np.take_along_axis(arr, indices, axis=-1): "Changed in version 2.3: The default value is now -1."
    # https://numpy.org/doc/stable/reference/generated/numpy.take_along_axis.html
    ("numpy", "gather-elements"): {"take_along_axis": "last"},
    # np.put_along_axis(arr, indices, values, axis): axis has no default
    # https://numpy.org/doc/stable/reference/generated/numpy.put_along_axis.html
    ("numpy", "scatter-elements"): {"put_along_axis": R},
    ("numpy", "take"): {"take": "flatten"},  # np.take, as above
    ("numpy", "take-clip"): {"take": "flatten"},
    # --- ONNX (reference evaluator, onnxruntime, OpenVINO's ONNX frontend): a node without the axis attribute ----
    # Gather: "axis : int (default is 0)" https://onnx.ai/onnx/operators/onnx__Gather.html
    ("onnx-reference", "gather"): {"ReferenceEvaluator": "axis-0"},
    ("onnx-reference", "gather-batch-dims"): {"ReferenceEvaluator": U},  # ONNX Gather has no batch_dims
    # GatherElements: "axis : int (default is 0)" https://onnx.ai/onnx/operators/onnx__GatherElements.html
    ("onnx-reference", "gather-elements"): {"ReferenceEvaluator": "axis-0"},
    # ScatterElements: "axis : int (default is 0)" https://onnx.ai/onnx/operators/onnx__ScatterElements.html
    ("onnx-reference", "scatter-elements"): {"ReferenceEvaluator": "axis-0"},
    # Take maps to Gather; without an axis Gather's default 0 applies (not Take's flattening)
    ("onnx-reference", "take"): {"ReferenceEvaluator": "axis-0"},
    ("onnx-reference", "take-clip"): {"ReferenceEvaluator": U},  # Gather has no mode
    ("onnxruntime", "gather"): {"Gather-13": "axis-0", "Gather-11": "axis-0", "Gather-1": "axis-0"},  # as above
    ("onnxruntime", "gather-batch-dims"): {"Gather-13": U, "Gather-11": U, "Gather-1": U},
    ("onnxruntime", "gather-elements"): {"GatherElements-13": "axis-0", "GatherElements-11": "axis-0"},
    ("onnxruntime", "scatter-elements"): {
        "ScatterElements-18": "axis-0",
        "ScatterElements-16": "axis-0",
        "ScatterElements-13": "axis-0",
        "ScatterElements-11": "axis-0",
        # Scatter (default axis 0, https://onnx.ai/onnx/operators/onnx__Scatter.html) is deprecated at opset 11:
        # onnxruntime rejects the Scatter-11 model whatever the axis ("Op registered for Scatter is deprecated"),
        # and classify labels any error on the default-axis dimension `required`.
        "Scatter-11": R,
        "Scatter-9": "axis-0",
    },
    ("onnxruntime", "take"): {"Gather-13": "axis-0", "Gather-11": "axis-0", "Gather-1": "axis-0"},
    ("onnxruntime", "take-clip"): {"Gather-13": U, "Gather-11": U, "Gather-1": U},
    # --- OpenVINO ---------------------------------------------------------------------------------------------
    # Gather-1/7/8: axis is the third input, "Required: yes"; ov.opsetN.gather(data, indices, axis, ...) has no
    # default. https://docs.openvino.ai/2025/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-8.html
    ("openvino", "gather"): {"Gather-8": R, "Gather-7": R, "Gather-1": R, "read_model": "axis-0"},
    ("openvino", "gather-batch-dims"): {"Gather-8": R, "Gather-7": R, "Gather-1": R, "read_model": U},
    # The Python API's gather_elements(data, indices, axis=0) defaults to 0 (the IR spec marks axis required).
    # https://docs.openvino.ai/2025/api/ie_python_api/_autosummary/openvino.opset6.gather_elements.html
    ("openvino", "gather-elements"): {"GatherElements-6": "axis-0", "read_model": "axis-0"},
    # ScatterElementsUpdate-3/12: axis is the fourth input, required.
    # https://docs.openvino.ai/2025/documentation/openvino-ir-format/operation-sets/operation-specs/movement/scatter-elements-update-12.html
    ("openvino", "scatter-elements"): {
        "ScatterElementsUpdate-12": R,
        "ScatterElementsUpdate-3": R,
        "read_model": "axis-0",
    },
    ("openvino", "take"): {"Gather-8": R, "read_model": "axis-0"},
    ("openvino", "take-clip"): {"Gather-8": U, "read_model": U},  # Gather has no mode
    # --- TensorFlow (eager, tf.function, XLA alike) -----------------------------------------------------------
    # tf.gather: "axis ... Defaults to the first non-batch dimension" (batch_dims, itself 0 by default).
    # https://www.tensorflow.org/api_docs/python/tf/gather
    ("tensorflow", "gather"): {"gather/eager": "axis-0", "gather/function": "axis-0", "gather/xla": "axis-0"},
    ("tensorflow", "gather-batch-dims"): {
        "gather/eager": "first-non-batch",
        "gather/function": "first-non-batch",
        "gather/xla": "first-non-batch",
    },
    # tf.experimental.numpy.take_along_axis(arr, indices, axis): no default.
    # https://www.tensorflow.org/api_docs/python/tf/experimental/numpy/take_along_axis
    ("tensorflow", "gather-elements"): {
        "take_along_axis/eager": R,
        "take_along_axis/function": R,
        "take_along_axis/xla": R,
    },
    # tf.tensor_scatter_nd_update takes full coordinates; the axis they put indices on must be stated.
    # https://www.tensorflow.org/api_docs/python/tf/tensor_scatter_nd_update
    ("tensorflow", "scatter-elements"): {
        "tensor_scatter_nd/eager": R,
        "tensor_scatter_nd/function": R,
        "tensor_scatter_nd/xla": R,
    },
    # take/*: tnp.take rejects mode='raise'; gather/*: tf.gather(data, indices), axis 0 (see above)
    ("tensorflow", "take"): {
        "take/eager": U,
        "take/function": U,
        "take/xla": U,
        "gather/eager": "axis-0",
        "gather/function": "axis-0",
        "gather/xla": "axis-0",
    },
    # tf.experimental.numpy.take(a, indices, axis=None, ...): NumPy's default, the flattened array.
    # https://www.tensorflow.org/api_docs/python/tf/experimental/numpy/take
    ("tensorflow", "take-clip"): {
        "take/eager": "flatten",
        "take/function": "flatten",
        "take/xla": "flatten",
        "gather/eager": U,
        "gather/function": U,
        "gather/xla": U,  # tf.gather has no mode
    },
    # --- PyTorch (eager and torch.compile alike) --------------------------------------------------------------
    # torch.index_select(input, dim, index): dim has no default.
    # https://pytorch.org/docs/stable/generated/torch.index_select.html
    # data[indices] indexes the first dim (NumPy-style integer array indexing).
    # https://numpy.org/doc/stable/user/basics.indexing.html#integer-array-indexing
    ("torch", "gather"): {
        "index_select": R,
        "indexing": "axis-0",
        "index_select/compile": R,
        "indexing/compile": "axis-0",
    },
    # index_select has no batch_dims; batched indexing places indices at a stated dim
    ("torch", "gather-batch-dims"): {
        "index_select": U,
        "indexing": R,
        "index_select/compile": U,
        "indexing/compile": R,
    },
    # torch.gather(input, dim, index): dim has no default. https://pytorch.org/docs/stable/generated/torch.gather.html
    ("torch", "gather-elements"): {"gather": R, "gather/compile": R},
    # Tensor.scatter(dim, index, src): dim has no default.
    # https://pytorch.org/docs/stable/generated/torch.Tensor.scatter_.html
    ("torch", "scatter-elements"): {
        "scatter": R,
        "scatter_reduce": U,
        "scatter/compile": R,
        "scatter_reduce/compile": U,
    },  # scatter_reduce has no plain assignment
    # torch.take: "The input tensor is treated as if it were viewed as a 1-D tensor."
    # https://pytorch.org/docs/stable/generated/torch.take.html
    # Take's index_select variant needs a dim (an axis), which the probe leaves out.
    ("torch", "take"): {"take": "flatten", "take/compile": "flatten", "index_select": R, "index_select/compile": R},
    ("torch", "take-clip"): {"take": U, "take/compile": U, "index_select": U, "index_select/compile": U},  # no mode
    # --- JAX (eager and jax.jit alike) ------------------------------------------------------------------------
    # jnp.take: "axis ... If not specified, a is flattened"
    # https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take.html
    ("jax", "gather"): {"take": "flatten", "take/jit": "flatten", "indexing": "axis-0"},  # data[indices]: first axis
    # jax.vmap(jnp.take): each batch element is flattened (the classifier's per-batch flatten candidate)
    ("jax", "gather-batch-dims"): {"take": "flatten", "take/jit": "flatten", "indexing": R},
    # jnp.take_along_axis(arr, indices, axis=-1, ...): the signature's default is -1 (the prose says "flattened").
    # https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take_along_axis.html
    ("jax", "gather-elements"): {"take_along_axis": "last", "take_along_axis/jit": "last"},
    # data.at[coordinates]: the axis the coordinates put indices on must be stated.
    # https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html
    ("jax", "scatter-elements"): {"at": R, "at/jit": R},
    ("jax", "take"): {"take": U, "take/jit": U},  # jnp.take has no working mode='raise'
    ("jax", "take-clip"): {"take": "flatten", "take/jit": "flatten"},  # jnp.take, as above
}

# framework -> the module that must be importable for its test to run
MODULES = {
    "numpy": "numpy",
    "onnx-reference": "onnx",
    "onnxruntime": "onnxruntime",
    "openvino": "openvino",
    "tensorflow": "tensorflow",
    "torch": "torch",
    "jax": "jax",
}

_YAML = """\
op: {op}
cases:
  - id: default-axis-{name}
    source: "tests/test_default_axis.py: which axis does the API use when none is given?"
    dimension: default-axis
    omit: [axis]
    inputs: {inputs}
    attrs: {attrs}
"""


def _case(tmp_path: Path, name: str) -> Case:
    op, inputs, attrs = CASES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(_YAML.format(op=op, name=name, inputs=inputs, attrs=attrs)), encoding="utf-8")
    (case,) = load_file(path)
    assert isinstance(case, Case), case
    return case


def test_every_framework_and_case_has_expectations() -> None:
    assert {fw for fw, _ in EXPECTED} == set(MODULES)
    assert set(EXPECTED) == {(fw, name) for fw in MODULES for name in CASES}


@pytest.mark.parametrize(("framework", "name"), sorted(EXPECTED), ids=[f"{f}-{n}" for f, n in sorted(EXPECTED)])
def test_default_axis_label(tmp_path: Path, framework: str, name: str) -> None:
    pytest.importorskip(MODULES[framework])
    if not adapters.is_available(framework):
        pytest.skip(f"no {framework} adapter in this interpreter")
    case = _case(tmp_path, name)
    adapter = adapters.get(framework)
    got: dict[str, str] = {}
    for variant in adapter.variants(case.op):
        record = execute(case, framework, variant, InProcess())
        got[variant] = record["label"]
        if record["outcome"] in ("ok", "error"):
            # The call ran without the argument: the api string must not pass one either.
            assert "axis=" not in record["api"], (variant, record["api"])
        if record["label"] == "required" and record["outcome"] == "unsupported":
            assert "axis is required (no default)" in record["reason"], (variant, record["reason"])
    assert got == EXPECTED[(framework, name)]
