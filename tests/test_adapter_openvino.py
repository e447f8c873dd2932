"""The OpenVINO adapter: every shipped case on every variant, and the translation in detail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("openvino")

import ml_dtypes
from _shipped import REGRESSION_GATHER_NEG, REGRESSION_GATHER_OOB, shipped_cases

from adapters.base import CaseData, Unsupported
from adapters.openvino import (
    ADAPTER,
    OpenVinoAdapter,
    build_model,
    element_type,
    from_tensor,
    native_spec,
    to_tensor,
)
from harness.cases import Case, ExpectedError, load_file
from harness.ops import with_defaults
from harness.runner import InProcess, execute

ROOT = Path(__file__).resolve().parents[1]
G, GE, GN = "cases/gather.yaml", "cases/gather_elements.yaml", "cases/gather_nd.yaml"
SE, SN, TK = "cases/scatter_elements.yaml", "cases/scatter_nd.yaml", "cases/take.yaml"
IG, RG = "cases/imported/onnx_node_gather.yaml", "cases/regression/gather.yaml"
RGE, RGN = "cases/regression/gather_elements.yaml", "cases/regression/gather_nd.yaml"
ONNX = "read_model"
ALL_GATHER = ("Gather-8", "Gather-7", "Gather-1", ONNX)
ALL_GND = ("GatherND-8", "GatherND-5", ONNX)
ALL_SE = ("ScatterElementsUpdate-12", "ScatterElementsUpdate-3", ONNX)
ALL_SN = ("ScatterNDUpdate-15", "ScatterNDUpdate-3", "ScatterUpdate-3", ONNX)

_NEG_OLD = ("Gather-7/Gather-1 take indices in [0, dim-1] only (documented); measured: a negative index counts as "
            "out of range and yields 0")
_OOB_ZERO = "OpenVINO Gather fills out-of-range indices with zeros (documented, Gather-8 Example 7) instead of raising"
_F64 = ("the CPU plugin computes f64 as f32 (its internal precisions are f32/bf16/f16 and i32): values rounded, "
        "overflowed to f32 max or flushed to 0, returned as f64")
_I64 = ("the CPU plugin computes i64/u64 as i32: values outside 32 bits come back truncated to their low 32 bits "
        "(2**63-1 -> -1)")
_COMPLEX = "OpenVINO has no complex element type; the ONNX frontend rejects tensor(complex64) in read_model"
_STR_GE = "CPU GatherElements supports 1/2/4-byte elements only: 'unsupported inputData input precision: string'"
_STR_GND = "CPU GatherND: 'unsupported data input precision: string'"
_STR_SCATTER = "CPU plugin: 'does not support string for use with oneDNN' when compiling the scatter node"
_GND5 = ("GatherND-5 flattens the batch dims into one output dim (documented: output shape starts with the product "
         "of the batch dims); GatherND-8 keeps them")
_SU_SCALAR = ("CPU ScatterUpdate rejects 0-D indices ('do not support scalar input') although the ScatterUpdate-3 "
              "spec allows them; rank-1 ScatterND indices become indices[..., 0], a scalar")
_SU_NEG = ("ScatterUpdate-3 raises on negative indices (documented: 'If an index ... is negative, then an exception "
           "is raised')")


def _known(file: str, ids: tuple[str, ...], variants: tuple[str, ...], reason: str) -> dict[tuple[str, str], str]:
    return {(f"{file}::{i}", v): reason for i in ids for v in variants}


# cases/regression/gather.yaml: an index outside [-s, s) (zero fill), or an in-range negative one (Gather-7/1)
_REG_OOB = REGRESSION_GATHER_OOB
_REG_NEG = REGRESSION_GATHER_NEG

# (case nodeid, variant) -> why OpenVINO's result differs from canonical semantics. Measured with 2026.4.1 on CPU.
# Refusing index types outside ONNX's type constraints (GatherElements: uint*/int16; ScatterND: all but int64)
# conforms, so it is not listed.
KNOWN_DEVIATIONS: dict[tuple[str, str], str] = {
    **_known(G, ("ov-gather8-example-6", "onnx-gather13-negative-indices", "gather-negative-axis-last",
                 "gather-scalar-negative-index-1d", "gather-negative-indices-2d", "gather-index-int16-negative",
                 "gen-gather-axis-neg1-rank4-with-negatives"), ("Gather-7", "Gather-1"), _NEG_OLD),
    **_known(G, ("ov-gather8-example-7",), ALL_GATHER, _OOB_ZERO),
    **_known(TK, ("take-mode-raise-out-of-range",), ("Gather-8", ONNX), _OOB_ZERO),
    **_known(G, ("gather-dtype-float64",), ALL_GATHER, _F64),
    **_known(G, ("gather-dtype-int64-large",), ALL_GATHER, _I64),
    **_known(TK, ("take-dtype-float64",), ("Gather-8", ONNX), _F64),
    **_known(TK, ("take-dtype-int64-large",), ("Gather-8", ONNX), _I64),
    **_known(GE, ("ge-dtype-float64",), ("GatherElements-6", ONNX), _F64),
    **_known(GE, ("ge-dtype-int64-large",), ("GatherElements-6", ONNX), _I64),
    **_known(GE, ("ge-dtype-string",), ("GatherElements-6", ONNX), _STR_GE),
    **_known(GN, ("gathernd-dtype-float64",), ALL_GND, _F64),
    **_known(GN, ("gen-gathernd-batch-dims2-rank4",), ("GatherND-8", ONNX), _F64),
    **_known(GN, ("gathernd-dtype-int64-large",), ALL_GND, _I64),
    **_known(GN, ("gathernd-dtype-string",), ALL_GND, _STR_GND),
    **_known(GN, ("trt-gathernd-elementwise-dims-2", "trt-gathernd-elementwise-dims-3",
                  "trt-gathernd-elementwise-dims-2-slices", "gathernd-batch-dims-2",
                  "gathernd-batch-dims-2-extra-index-dim"), ("GatherND-5",), _GND5),
    **_known(GN, ("gen-gathernd-batch-dims2-rank4",), ("GatherND-5",), f"{_GND5}; and {_F64}"),
    **_known(SE, ("se-dtype-float64",), ALL_SE, _F64),
    **_known(SE, ("se-dtype-int64-large",), ALL_SE, _I64),
    **_known(SE, ("se-dtype-string",), ALL_SE, _STR_SCATTER),
    **_known(SN, ("scatternd-dtype-float64",), ALL_SN, _F64),
    **_known(SN, ("gen-scatternd-k3-rank3-add-with-negatives",), ("ScatterNDUpdate-15", ONNX), _F64),
    **_known(SN, ("scatternd-dtype-int64-large",), ALL_SN, _I64),
    # scatternd-dtype-string is memory-unsafe (ScatterUpdate-3 damages the heap): it runs isolated, not here.
    **_known(SN, ("scatternd-rank1-indices-slice",), ("ScatterUpdate-3",), _SU_SCALAR),
    **_known(SN, ("scatternd-negative-indices-slices",), ("ScatterUpdate-3",), _SU_NEG),
    **{(f"{f}::{i}", ONNX): _COMPLEX for f, i in ((G, "gather-dtype-complex64"), (GE, "ge-dtype-complex64"),
                                                  (GN, "gathernd-dtype-complex64"), (SE, "se-dtype-complex64"),
                                                  (SN, "scatternd-dtype-complex64"), (TK, "take-dtype-complex64"))},
    # Imported ONNX node tests (cases/imported) and regression cases (cases/regression)
    **_known(IG, ("test_gather_negative_indices",), ("Gather-7", "Gather-1"), _NEG_OLD),
    **_known(RG, _REG_NEG, ("Gather-7", "Gather-1"), _NEG_OLD),
    **_known(RG, _REG_OOB, ALL_GATHER, _OOB_ZERO),
    **_known(RG, ("pytorch-11776-onnx-gather-is-take",), ALL_GATHER, _F64),
    **_known(RGE, ("pytorch-11776-torch-gather-is-gather-elements",), ("GatherElements-6", ONNX), _F64),
    **_known(RGN, ("openvino-7379-gather-nd-batch-dims-3",), ("GatherND-5",), _GND5),
}


def crash_risk(case: Case, variant: str) -> str | None:
    """Why running ``case`` on ``variant`` could kill this process (measured on 2026.4.1 in throwaway
    subprocesses); None when it is safe. These belong to the isolated run, not to an in-process test."""
    tags = case.spec.tags
    if "crash" in tags or "empty" in tags:
        return "tagged crash/empty"
    inputs = case.inputs()
    data, indices = inputs["data"], inputs["indices"]
    if indices.size == 0 or (case.op in ("Gather", "Take") and data.size == 0):
        # SIGFPE inside core.compile_model whenever a Gather's output has zero elements (any version, ONNX too).
        return "Gather with an empty output: SIGFPE in compile_model"
    if variant == "ScatterUpdate-3" and data.dtype == object:
        return "ScatterUpdate-3 on string data corrupts the heap (SIGABRT 'munmap_chunk(): invalid pointer' later)"
    if case.op == "GatherND" and isinstance(case.reference(), ExpectedError):
        return "GatherND reads out of bounds for out-of-range indices (garbage; far indices SIGSEGV)"
    if case.op == "ScatterElements":
        dim = data.shape[int(case.attrs["axis"])] if data.ndim else 0
        wide = indices.astype(np.float64)  # compare without integer wrap-around
        if np.any(wide < -dim) or np.any(wide >= 2**31):
            # below -dim the CPU node writes before the buffer; beyond 31 bits, i32 truncation may make it so
            return "ScatterElementsUpdate writes out of bounds for indices < -dim (SIGSEGV/SIGABRT)"
    return None




def test_shipped_cases_deviate_only_where_known() -> None:
    executor = InProcess()
    deviating: dict[tuple[str, str], str] = {}
    unexplained_na: list[tuple[str, str]] = []
    for case in shipped_cases():
        for variant in ADAPTER.variants(case.op):
            if crash_risk(case, variant):
                continue
            record = execute(case, "openvino", variant, executor)
            if record["verdict"] == "deviates":
                deviating[(case.nodeid, variant)] = f"{record['reason']} {record.get('error_message') or ''}"[:300]
            elif record["verdict"] == "n/a" and not record.get("reason"):
                unexplained_na.append((case.nodeid, variant))
    unexpected = {k: v for k, v in deviating.items() if k not in KNOWN_DEVIATIONS}
    fixed = sorted(set(KNOWN_DEVIATIONS) - set(deviating))
    assert not unexpected, f"new deviations: {unexpected}"
    assert not fixed, f"listed deviations that now conform (update KNOWN_DEVIATIONS): {fixed}"
    assert not unexplained_na


def test_crash_risk_names_the_known_crashers(tmp_path: Path) -> None:
    def case(op: str, text: str) -> Case:
        path = tmp_path / "c.yaml"
        path.write_text(f"op: {op}\ncases:\n  - id: c\n    source: test\n    inputs: {text}\n", encoding="utf-8")
        (entry,) = load_file(path)
        assert isinstance(entry, Case)
        return entry

    empty = case("Gather", "{data: [1, 2, 3], indices: {value: [], shape: [0]}}")
    assert "SIGFPE" in (crash_risk(empty, "Gather-8") or "")
    below = case("ScatterElements", "{data: [1, 2, 3], indices: [-4], updates: [9]}")
    assert "out of bounds" in (crash_risk(below, "ScatterElementsUpdate-12") or "")
    fine = case("ScatterElements", "{data: [1, 2, 3], indices: [-3], updates: [9]}")
    assert crash_risk(fine, "ScatterElementsUpdate-12") is None


# --- variants --------------------------------------------------------------------------------------------------


def test_variants_newest_node_first_and_onnx_frontend_last() -> None:
    assert ADAPTER.variants("Gather") == ["Gather-8", "Gather-7", "Gather-1", ONNX]
    assert ADAPTER.variants("GatherElements") == ["GatherElements-6", ONNX]
    assert ADAPTER.variants("GatherND") == ["GatherND-8", "GatherND-5", ONNX]
    assert ADAPTER.variants("ScatterElements") == ["ScatterElementsUpdate-12", "ScatterElementsUpdate-3", ONNX]
    assert ADAPTER.variants("ScatterND") == ["ScatterNDUpdate-15", "ScatterNDUpdate-3", "ScatterUpdate-3", ONNX]
    assert ADAPTER.variants("Take") == ["Gather-8", ONNX]


def test_variants_do_not_import_openvino() -> None:
    code = ("import sys, adapters.openvino as m; m.ADAPTER.variants('Gather'); "
            "assert 'openvino' not in sys.modules, 'imported'")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_warm_imports_what_the_onnx_frontend_variant_needs() -> None:
    # The template for risky cases is forked right after warm(): a child that imports onnx itself can hang.
    code = ("import sys; from harness.worker import describe; describe('openvino'); "
            "missing = [m for m in ('openvino', 'onnx', 'onnx.helper') if m not in sys.modules]; "
            "assert not missing, missing")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


@pytest.mark.parametrize(
    ("variant", "op", "type_name", "version"),
    [
        ("Gather-8", "Gather", "Gather", "opset8"),
        ("Gather-7", "Gather", "Gather", "opset7"),
        ("Gather-1", "Gather", "Gather", "opset1"),
        ("GatherElements-6", "GatherElements", "GatherElements", "opset6"),
        ("GatherND-8", "GatherND", "GatherND", "opset8"),
        ("GatherND-5", "GatherND", "GatherND", "opset5"),
        ("ScatterElementsUpdate-12", "ScatterElements", "ScatterElementsUpdate", "opset12"),
        ("ScatterElementsUpdate-3", "ScatterElements", "ScatterElementsUpdate", "opset3"),
        ("ScatterNDUpdate-15", "ScatterND", "ScatterNDUpdate", "opset15"),
        ("ScatterNDUpdate-3", "ScatterND", "ScatterNDUpdate", "opset4"),  # v3 class, registered in opset4
        ("ScatterUpdate-3", "ScatterND", "ScatterUpdate", "opset3"),
    ],
)
def test_each_variant_builds_its_node_version(variant: str, op: str, type_name: str, version: str) -> None:
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    inputs = {
        "Gather": {"data": data, "indices": np.array([1, 0])},
        "GatherElements": {"data": data, "indices": np.zeros((2, 3), np.int64)},
        "GatherND": {"data": data, "indices": np.array([[1], [0]])},
        "ScatterElements": {"data": data, "indices": np.zeros((1, 3), np.int64), "updates": data[:1]},
        "ScatterND": {"data": data, "indices": np.array([[1]]), "updates": data[:1]},
    }[op]
    model = build_model(native_spec(CaseData(op, inputs, with_defaults(op, {})), variant))
    nodes = [n for n in model.get_ordered_ops() if n.get_type_name() == type_name]
    assert len(nodes) == 1
    assert nodes[0].get_type_info().version_id == version


# --- attribute translation -------------------------------------------------------------------------------------


def _spec(op: str, variant: str, inputs: dict[str, np.ndarray], **attrs: object):
    return native_spec(CaseData(op, inputs, with_defaults(op, attrs)), variant)


_D = np.arange(6, dtype=np.float32).reshape(2, 3)
_I = np.array([[0, 1]])


def test_gather_axis_and_batch_dims() -> None:
    spec = _spec("Gather", "Gather-8", {"data": _D, "indices": _I}, axis=1, batch_dims=-1)
    assert spec.kwargs == {"axis": 1, "batch_dims": -1}
    assert spec.api().startswith("ov.opset8.gather(data, indices, axis=1, batch_dims=-1)")
    assert _spec("Gather", "Gather-1", {"data": _D, "indices": _I}, axis=-1).kwargs == {"axis": -1}
    with pytest.raises(Unsupported, match="batch_dims"):
        _spec("Gather", "Gather-1", {"data": _D, "indices": _I}, axis=1, batch_dims=1)


def test_take_flattens_without_axis_and_supports_raise_only() -> None:
    spec = _spec("Take", "Gather-8", {"data": _D, "indices": np.array([5, 0])})
    assert spec.flatten and spec.kwargs == {"axis": 0, "batch_dims": 0}
    assert "ov.opset8.reshape(data, [-1], special_zero=False)" in spec.api()
    out = ADAPTER.prepare(CaseData("Take", {"data": _D, "indices": np.array([5, 0])}, with_defaults("Take", {})),
                          "Gather-8").run()
    np.testing.assert_array_equal(out, [5.0, 0.0])
    for mode in ("wrap", "clip", "fill"):
        with pytest.raises(Unsupported, match=mode):
            _spec("Take", "Gather-8", {"data": _D, "indices": _I}, mode=mode)


@pytest.mark.parametrize(("reduction", "native"), [("none", "none"), ("add", "sum"), ("mul", "prod"),
                                                   ("max", "max"), ("min", "min")])
def test_scatter_reductions_map_to_openvino_names(reduction: str, native: str) -> None:
    se = {"data": _D, "indices": np.zeros((1, 3), np.int64), "updates": _D[:1]}
    spec = _spec("ScatterElements", "ScatterElementsUpdate-12", se, axis=-1, reduction=reduction)
    assert spec.kwargs == {"axis": -1, "reduction": native, "use_init_val": True}
    sn = {"data": _D, "indices": np.array([[1]]), "updates": _D[:1]}
    assert _spec("ScatterND", "ScatterNDUpdate-15", sn, reduction=reduction).kwargs == {"reduction": native}
    if reduction != "none":
        for op, variant, inputs in (("ScatterElements", "ScatterElementsUpdate-3", se),
                                    ("ScatterND", "ScatterNDUpdate-3", sn), ("ScatterND", "ScatterUpdate-3", sn)):
            with pytest.raises(Unsupported, match="no reduction"):
                _spec(op, variant, inputs, reduction=reduction)


def test_scatter_elements_12_reduction_runs_with_duplicates() -> None:
    inputs = {"data": np.ones(3, np.float32), "indices": np.array([1, 1, -1]), "updates": np.array([2, 3, 4], "f4")}
    case = CaseData("ScatterElements", inputs, with_defaults("ScatterElements", {"reduction": "add"}))
    np.testing.assert_array_equal(ADAPTER.prepare(case, "ScatterElementsUpdate-12").run(), [1, 6, 5])


def test_scatter_update_only_for_one_tuples_and_slices_the_last_index_dim() -> None:
    inputs = {"data": _D, "indices": np.array([[1], [0]]), "updates": _D[::-1]}
    spec = _spec("ScatterND", "ScatterUpdate-3", inputs)
    assert spec.kwargs == {"axis": 0}
    np.testing.assert_array_equal(spec.inputs["indices"], [1, 0])
    assert spec.api().startswith("ov.opset3.scatter_update(data, indices[..., 0], updates, axis=0)")
    out = ADAPTER.prepare(CaseData("ScatterND", inputs, with_defaults("ScatterND", {})), "ScatterUpdate-3").run()
    np.testing.assert_array_equal(out, _D)
    with pytest.raises(Unsupported, match="length 1"):
        _spec("ScatterND", "ScatterUpdate-3", {"data": _D, "indices": np.array([[1, 2]]), "updates": np.ones(1)})


def test_node_inputs_follow_operator_order_not_dict_order() -> None:
    inputs = {"updates": _D[:1], "data": _D, "indices": np.array([[1]])}
    assert list(_spec("ScatterND", "ScatterNDUpdate-15", inputs).inputs) == ["data", "indices", "updates"]


# --- element types ---------------------------------------------------------------------------------------------


def test_element_types() -> None:
    import openvino as ov

    assert element_type(np.zeros(1, ml_dtypes.bfloat16)) == ov.Type.bf16
    assert element_type(np.array(["a"], dtype=object)) == ov.Type.string
    assert element_type(np.zeros(1, np.uint64)) == ov.Type.u64
    assert element_type(np.zeros(1, bool)) == ov.Type.boolean
    with pytest.raises(Unsupported, match="complex"):
        element_type(np.zeros(1, np.complex64))


@pytest.mark.parametrize(
    "arr",
    [
        np.array([1.5, -2.25, 3.0], dtype=ml_dtypes.bfloat16),
        np.array([[True, False]]),
        np.array(7, dtype=np.int32),  # 0-d stays 0-d (np.ascontiguousarray would make it (1,))
        np.array([2**63 + 1], dtype=np.uint64),
        np.array([[1.0, 2.0]], dtype=np.float16)[:, ::-1],  # non-contiguous
    ],
)
def test_tensor_round_trip_keeps_element_type_and_shape(arr: np.ndarray) -> None:
    back = from_tensor(to_tensor(arr))
    assert back.dtype == arr.dtype and back.shape == arr.shape
    np.testing.assert_array_equal(back.astype(np.float64) if arr.dtype.name == "bfloat16" else back,
                                  arr.astype(np.float64) if arr.dtype.name == "bfloat16" else arr)


def test_string_tensor_round_trip_gives_object_array() -> None:
    arr = np.empty((2, 1), dtype=object)
    arr[:, 0] = ["ab", "é"]
    back = from_tensor(to_tensor(arr))
    assert back.dtype == object and back.shape == (2, 1) and back.tolist() == [["ab"], ["é"]]


def test_bfloat16_gather_returns_bfloat16() -> None:
    data = np.array([1.5, 2.0, -3.0], dtype=ml_dtypes.bfloat16)
    out = ADAPTER.prepare(CaseData("Gather", {"data": data, "indices": np.array([2, 0])},
                                   with_defaults("Gather", {})), "Gather-8").run()
    assert out.dtype == ml_dtypes.bfloat16
    assert out.astype(np.float32).tolist() == [-3.0, 1.5]


# --- compiled-model cache ---------------------------------------------------------------------------------------


def test_compiled_models_are_cached_by_node_attrs_shapes_and_types() -> None:
    adapter = OpenVinoAdapter()
    inputs = {"data": _D, "indices": np.array([1, 0])}
    case = CaseData("Gather", inputs, with_defaults("Gather", {"axis": 0}))
    first = adapter.prepare(case, "Gather-8")
    assert (adapter.cache.misses, adapter.cache.hits) == (1, 0)
    other_values = CaseData("Gather", {"data": _D + 1, "indices": np.array([0, 0])}, case.attrs)
    second = adapter.prepare(other_values, "Gather-8")  # same node, attrs, shapes, types: no recompile
    assert (adapter.cache.misses, adapter.cache.hits) == (1, 1)
    assert len(adapter.cache) == 1
    np.testing.assert_array_equal(first.run(), _D[[1, 0]])
    np.testing.assert_array_equal(second.run(), (_D + 1)[[0, 0]])
    adapter.prepare(CaseData("Gather", inputs, with_defaults("Gather", {"axis": 1})), "Gather-8")  # attrs
    adapter.prepare(CaseData("Gather", {"data": _D, "indices": np.array([1, 0], np.int32)}, case.attrs), "Gather-8")
    adapter.prepare(case, "Gather-7")  # node version
    assert (adapter.cache.misses, adapter.cache.hits) == (4, 1)


def test_onnx_frontend_reads_the_model_from_memory_and_caches_it() -> None:
    adapter = OpenVinoAdapter()
    case = CaseData("GatherElements", {"data": _D, "indices": np.array([[2, 0, 1], [0, 0, 0]])},
                    with_defaults("GatherElements", {"axis": 1}), opset=13)
    call = adapter.prepare(case, ONNX)
    assert "core.read_model(model.SerializeToString())" in call.api and "GatherElements-13" in call.api
    np.testing.assert_array_equal(call.run(), [[2.0, 0.0, 1.0], [3.0, 3.0, 3.0]])
    adapter.prepare(case, ONNX)
    assert (adapter.cache.misses, adapter.cache.hits) == (1, 1)


def test_version_is_openvinos() -> None:
    import openvino as ov

    assert ADAPTER.version() == ov.__version__ and ADAPTER.version().startswith("20")
