"""The PaddlePaddle adapter: every shipped seed case on every variant, and the translation in detail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters import paddle_calls
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.paddle import ADAPTER
from gather_scatter_conformance.adapters.paddle_calls import expression
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.harness.reference.compare import compare
from gather_scatter_conformance.vocab.ops import with_defaults

require("paddle")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ROOT = Path(__file__).resolve().parents[1]
F = np.arange(12, dtype=np.float32).reshape(3, 4)
R = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _run(case: CaseData, variant: str) -> np.ndarray:
    return ADAPTER.to_numpy(ADAPTER.prepare(case, variant).run())


def _api(case: CaseData, variant: str) -> str:
    return ADAPTER.prepare(case, variant).api


# --- variants --------------------------------------------------------------------------------------------------


def test_variants_default_first_and_static_twins() -> None:
    assert ADAPTER.variants("Gather") == ["gather", "index_select", "gather/static", "index_select/static"]
    assert ADAPTER.variants("GatherElements") == ["take_along_axis", "gather", "take_along_axis/static",
                                                  "gather/static"]
    assert ADAPTER.variants("GatherND") == ["gather_nd", "gather_nd/static"]
    assert ADAPTER.variants("ScatterElements") == ["put_along_axis", "scatter", "put_along_axis/static",
                                                   "scatter/static"]
    assert ADAPTER.variants("ScatterND") == ["index_put", "scatter_nd_add", "scatter", "index_put/static",
                                             "scatter_nd_add/static", "scatter/static"]
    assert ADAPTER.variants("Take") == ["take", "gather", "take/static", "gather/static"]
    with pytest.raises(ValueError, match="no variant"):
        ADAPTER.prepare(_case("Take", {"axis": None, "mode": "raise"}, data=F, indices=[0]), "index_select")


def test_translation_imports_no_paddle() -> None:
    # (adapters' variants and facts import no framework: tests/test_registry_lists.py, for every adapter)
    code = ("import sys; from gather_scatter_conformance.adapters import paddle_calls as c; "
            "c.expression('Gather', 'gather', {'data': (2, 3), 'indices': (2,)}, {'axis': 1, 'batch_dims': 0}); "
            "assert 'paddle' not in sys.modules, 'paddle imported'")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_version_and_registry() -> None:
    import paddle

    assert ADAPTER.version() == paddle.__version__
    assert adapters.get("paddle") is ADAPTER
    assert ADAPTER.prepare(_case("Gather", data=F, indices=[0]), "gather").device == "cpu"


# The seed cases against known/paddle.yaml: tests/test_known_deviations.py's plan for paddle (each pair once in
# make test).


# --- the translation, per API -----------------------------------------------------------------------------------


def test_gather_passes_axis_and_flattens_other_index_ranks() -> None:
    case = _case("Gather", {"axis": 1}, data=R, indices=[[0, 2], [1, 1]])
    assert _api(case, "gather") == "paddle.gather(data, indices.reshape([-1]), axis=1).reshape([2, 2, 2, 4])"
    assert _api(case, "index_select") == ("paddle.index_select(data, indices.reshape([-1]), axis=1)"
                                          ".reshape([2, 2, 2, 4])")
    want = compute("Gather", case.inputs, case.attrs)
    for variant in ADAPTER.variants("Gather"):
        np.testing.assert_array_equal(_run(case, variant), want)
    scalar = _case("Gather", {"axis": -1}, data=R, indices=np.array(3))
    assert _api(scalar, "gather") == "paddle.gather(data, indices, axis=-1)"  # a 0-d index drops the dim
    assert _api(scalar, "index_select") == "paddle.index_select(data, indices.reshape([-1]), axis=-1).reshape([2, 3])"
    np.testing.assert_array_equal(_run(scalar, "gather"), R[..., 3])
    with pytest.raises(Unsupported, match="no batch_dims"):
        ADAPTER.prepare(_case("Gather", {"axis": 1, "batch_dims": 1}, data=R, indices=[[0], [1]]), "gather")


def test_gather_default_axis_is_zero() -> None:
    case = CaseData(op="Gather", inputs={"data": F, "indices": np.array([2, 0])}, attrs={"axis": 1, "batch_dims": 0},
                    omit=("axis",))
    assert _api(case, "gather") == "paddle.gather(data, indices)"
    np.testing.assert_array_equal(_run(case, "gather/static"), F[[2, 0]])


def test_take_is_flat_with_modes_and_gather_takes_an_axis() -> None:
    idx = np.array([[0, -1], [13, -14]])
    for mode, want in {"wrap": [[0, 11], [1, 10]], "clip": [[0, 0], [11, 0]]}.items():
        case = _case("Take", {"axis": None, "mode": mode}, data=F, indices=idx)
        assert _api(case, "take") == f"paddle.take(data, indices, mode={mode!r})"
        np.testing.assert_array_equal(_run(case, "take"), np.array(want, np.float32))
        np.testing.assert_array_equal(_run(case, "take/static"), np.array(want, np.float32))
    with pytest.raises(Unsupported, match="no mode='fill'"):
        ADAPTER.prepare(_case("Take", {"axis": None, "mode": "fill"}, data=F, indices=[0]), "take")
    with pytest.raises(Unsupported, match="has no axis"):
        ADAPTER.prepare(_case("Take", {"axis": 1, "mode": "raise"}, data=F, indices=[0]), "take")
    flat = _case("Take", {"axis": -1, "mode": "raise"}, data=F[0], indices=[3, 1])  # 1-D: axis 0 is the flat read
    assert _api(flat, "take") == "paddle.take(data, indices, mode='raise')"
    np.testing.assert_array_equal(_run(flat, "take"), F[0, [3, 1]])
    along = _case("Take", {"axis": 1, "mode": "raise"}, data=F, indices=[3, 0])
    assert _api(along, "gather") == "paddle.gather(data, indices, axis=1)"
    np.testing.assert_array_equal(_run(along, "gather"), F[:, [3, 0]])
    with pytest.raises(Unsupported, match="no mode='wrap'"):
        ADAPTER.prepare(_case("Take", {"axis": 1, "mode": "wrap"}, data=F, indices=[0]), "gather")


def test_gather_elements_take_along_axis_and_the_torch_style_gather() -> None:
    idx = np.array([[[0, 2, 1, 1]] * 3, [[2, 0, 0, 1]] * 3])
    case = _case("GatherElements", {"axis": 1}, data=R, indices=idx)
    assert _api(case, "take_along_axis") == "paddle.take_along_axis(data, indices, axis=1)"
    assert _api(case, "gather") == "paddle.gather(data, 1, indices)"
    want = compute("GatherElements", case.inputs, case.attrs)
    for variant in ADAPTER.variants("GatherElements"):
        np.testing.assert_array_equal(_run(case, variant), want)
    # indices smaller than data off the axis: take_along_axis broadcasts them (its default broadcast=True) and
    # fails; paddle.gather(data, dim, index) is take_along_axis with broadcast=False and returns ONNX's shape.
    small = _case("GatherElements", {"axis": 1}, data=F, indices=[[0], [1]])
    np.testing.assert_array_equal(_run(small, "gather"), compute("GatherElements", small.inputs, small.attrs))
    with pytest.raises(ValueError, match="expand"):
        _run(small, "take_along_axis")


def test_gather_nd() -> None:
    case = _case("GatherND", data=R, indices=[[1, 2], [0, -1]])
    assert _api(case, "gather_nd") == "paddle.gather_nd(data, indices)"
    for variant in ADAPTER.variants("GatherND"):
        np.testing.assert_array_equal(_run(case, variant), compute("GatherND", case.inputs, case.attrs))
    with pytest.raises(Unsupported, match="no batch_dims"):
        ADAPTER.prepare(_case("GatherND", {"batch_dims": 1}, data=R, indices=[[1], [0]]), "gather_nd")


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_reductions(reduction: str) -> None:
    idx = np.array([[[1, 0, 0, 2]] * 3, [[0, 0, 2, 1]] * 3])
    upd = np.arange(24, dtype=np.float32).reshape(idx.shape) - 5
    case = _case("ScatterElements", {"axis": 1, "reduction": reduction}, data=R, indices=idx, updates=upd)
    extra = "" if reduction == "none" else f", reduce={paddle_calls.PUT_REDUCE[reduction]!r}"
    assert _api(case, "put_along_axis") == f"paddle.put_along_axis(data, indices, updates, axis=1{extra})"
    assert _api(case, "scatter") == f"paddle.scatter(data, 1, indices, updates{extra})"
    want = compute("ScatterElements", case.inputs, case.attrs)
    for variant in ADAPTER.variants("ScatterElements"):
        result = compare(_run(case, variant), want)
        assert result.equal, (variant, result.reason)


def test_scatter_nd_index_put_scatter_nd_add_and_row_scatter() -> None:
    idx = np.array([[1, 2], [0, 0]])
    upd = np.ones((2, 4), np.float32)
    none = _case("ScatterND", {"reduction": "none"}, data=R, indices=idx, updates=upd)
    add = _case("ScatterND", {"reduction": "add"}, data=R, indices=idx, updates=upd)
    assert _api(none, "index_put") == ("paddle.index_put(data, tuple(indices.unbind(-1)), updates, "
                                       "accumulate=False)")
    assert _api(add, "index_put").endswith("accumulate=True)")
    assert _api(add, "scatter_nd_add") == "paddle.scatter_nd_add(data, indices, updates)"
    for case, variants in ((none, ["index_put", "index_put/static"]),
                           (add, ["index_put", "scatter_nd_add", "index_put/static", "scatter_nd_add/static"])):
        for variant in variants:
            np.testing.assert_array_equal(_run(case, variant), compute("ScatterND", case.inputs, case.attrs))
    with pytest.raises(Unsupported, match="only adds"):
        ADAPTER.prepare(none, "scatter_nd_add")
    with pytest.raises(Unsupported, match="only assigns or adds"):
        ADAPTER.prepare(_case("ScatterND", {"reduction": "mul"}, data=R, indices=idx, updates=upd), "index_put")
    rows = _case("ScatterND", data=F, indices=[[[2]], [[0]]], updates=np.ones((2, 1, 4), np.float32))
    assert _api(rows, "scatter") == "paddle.scatter(data, indices.reshape([-1]), updates.reshape([2, 4]))"
    np.testing.assert_array_equal(_run(rows, "scatter"), compute("ScatterND", rows.inputs, rows.attrs))
    with pytest.raises(Unsupported, match="indices of shape"):
        ADAPTER.prepare(none, "scatter")
    with pytest.raises(Unsupported, match="no reduction='add'"):
        ADAPTER.prepare(add, "scatter")


def test_omitted_axis_is_required_where_the_api_has_no_default() -> None:
    shapes = {"data": (3, 4), "indices": (1, 4), "updates": (1, 4)}
    for op, variant in (("GatherElements", "take_along_axis"), ("GatherElements", "gather"),
                        ("ScatterElements", "put_along_axis"), ("ScatterElements", "scatter")):
        with pytest.raises(Unsupported, match="axis is required"):
            expression(op, variant, shapes, with_defaults(op, {}), ("axis",))


# --- dtypes -----------------------------------------------------------------------------------------------------


def test_bfloat16_goes_through_float32_both_ways_and_unsigned_wide_types_are_unsupported() -> None:
    bf = np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16)
    out = _run(_case("Gather", data=bf, indices=[2, 0]), "gather")
    assert out.dtype == np.dtype(ml_dtypes.bfloat16) and out.tolist() == [3.0, 1.5]
    for dtype in ("uint16", "uint32", "uint64"):
        with pytest.raises(Unsupported, match=dtype):
            ADAPTER.prepare(_case("Gather", data=np.arange(3, dtype=dtype), indices=[0]), "gather")
    with pytest.raises(Unsupported, match="string"):
        ADAPTER.prepare(_case("Gather", data=np.array(["a", "b"], dtype=object), indices=[0]), "gather")


def test_narrow_index_dtypes_are_read_as_garbage_by_take_along_axis() -> None:
    # Measured on 3.3.1: take_along_axis does not check the index dtype and reads int16 indices as wider ints.
    case = _case("GatherElements", {"axis": 0}, data=np.arange(5, dtype=np.float32),
                 indices=np.array([1, 2], np.int16))
    assert not np.array_equal(_run(case, "take_along_axis"), np.array([1, 2], np.float32))


# --- probes: negative and out-of-range indices (labels from the probe run) -----------------------------------


@pytest.mark.parametrize("variant", ["gather", "index_select", "gather/static"])
def test_gather_wraps_negative_indices(variant: str) -> None:
    case = _case("Gather", {"axis": 1}, data=F, indices=[-1, 0])
    np.testing.assert_array_equal(_run(case, variant), F[:, [3, 0]])


@pytest.mark.parametrize(("variant", "error", "message"), [
    ("gather", IndexError, r"The element of Index must be less than the size of input dim size of axis which is 4"),
    ("index_select", ValueError, r"expected >= -4 and < 4, but got 4"),
])
def test_gather_raises_on_out_of_range(variant: str, error: type[Exception], message: str) -> None:
    case = _case("Gather", {"axis": 1}, data=F, indices=[4])
    with pytest.raises(error, match=message):
        _run(case, variant)


def test_take_raise_wraps_indices_just_below_minus_s_and_raises_further_out() -> None:
    # Measured on 3.3.1: paddle.take(mode='raise') adds s to a negative index before its range check, so an index
    # in [-2s, -s) is read as index + 2s (no error) where numpy.take's 'raise' (and the canonical Take) raise.
    data = np.array([10, 20, 30, 40, 50], np.float32)
    for variant in ("take", "take/static"):
        case = _case("Take", {"axis": 0, "mode": "raise"}, data=data, indices=[-7, -10])
        np.testing.assert_array_equal(_run(case, variant), np.array([40, 10], np.float32))
        with pytest.raises(ValueError, match=r"expected >= -5 and < 5"):
            _run(_case("Take", {"axis": 0, "mode": "raise"}, data=data, indices=[-11]), variant)


BASELINE = ROOT / "baselines" / "paddle.yaml"


@pytest.mark.parametrize(("probe", "label"), [
    ("gather.yaml::probe-negative-indices[gather]", "wrap"),
    ("gather.yaml::probe-oob-positive[index_select]", "error"),
    ("gather_elements.yaml::probe-oob-negative[take_along_axis]", "error"),
    ("scatter_elements.yaml::probe-duplicates[put_along_axis]", "last-wins"),
    ("scatter_nd.yaml::probe-oob-positive[index_put]", "crash:"),
    ("scatter_nd.yaml::probe-oob-negative[index_put/static]", "crash:"),
    ("scatter_nd.yaml::probe-oob-alias[index_put]", "alias-write"),  # the scatter wrote its neighbour
    ("take.yaml::probe-oob-negative[take]", "wrap"),
    ("take.yaml::probe-oob-positive[take]", "error"),
])
def test_probe_labels_in_the_baseline(probe: str, label: str) -> None:
    """The labels the probe run recorded (baselines/paddle.yaml), checked where they are findings."""
    import yaml

    observed = yaml.safe_load(BASELINE.read_text())["labels"][f"cases/probes/{probe}"]
    # index_put writes outside the tensor: the heap corruption surfaces as SIGABRT or SIGSEGV (both measured).
    assert observed.startswith(label) if label.endswith(":") else observed == label


# --- the repro source -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["put_along_axis", "put_along_axis/static"])
def test_repro_source_runs_standalone_and_gives_the_same_result(variant: str, tmp_path: Path) -> None:
    idx = np.array([[1, 0, 2, 0]])
    upd = np.full((1, 4), 7.0, np.float32)
    case = _case("ScatterElements", {"axis": 0, "reduction": "add"}, data=F, indices=idx, updates=upd)
    call = ADAPTER.prepare(case, variant)
    direct = ADAPTER.to_numpy(call.run())
    script = tmp_path / "repro.py"
    body = "\n".join(f"    {line}" for line in call.source.splitlines())
    script.write_text("import numpy as np\nimport ml_dtypes\n\n"
                      f"def run(data, indices, updates):\n{body}\n    return result\n\n"
                      f"out = run(np.load({str(tmp_path / 'd.npy')!r}), np.array({idx.tolist()!r}), "
                      f"np.full((1, 4), 7.0, np.float32))\n"
                      f"np.save({str(tmp_path / 'out.npy')!r}, out)\n")
    np.save(tmp_path / "d.npy", F)
    subprocess.run([sys.executable, str(script)], cwd=tmp_path, check=True, capture_output=True)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), direct)


def test_static_runs_record_the_programs_operators() -> None:
    case = _case("ScatterND", {"reduction": "add"}, data=R, indices=[[1, 2]], updates=np.ones((1, 4), np.float32))
    call = ADAPTER.prepare(case, "index_put/static")
    call.run()
    assert call.facts["ops"] == ["pd_op.unbind", "builtin.split", "builtin.combine", "pd_op.index_put"]
    eager = ADAPTER.prepare(case, "scatter_nd_add")
    eager.run()
    assert eager.facts == {}  # the dynamic graph builds no program


def test_function_is_traceable_by_to_static_with_input_specs() -> None:
    import paddle

    shapes = {"data": (3, 4), "indices": (2, 2), "updates": (2,)}
    attrs = with_defaults("ScatterND", {"reduction": "add"})
    names, fn = paddle_calls.function(paddle, "ScatterND", "scatter_nd_add", shapes, attrs)
    assert names == ("data", "indices", "updates")
    specs = [paddle.static.InputSpec([3, 4], "float32", "data"), paddle.static.InputSpec([2, 2], "int64", "indices"),
             paddle.static.InputSpec([2], "float32", "updates")]
    static = paddle.jit.to_static(fn, input_spec=specs, full_graph=True)
    inputs = {"data": F, "indices": np.array([[0, 1], [2, 3]]), "updates": np.array([5.0, 6.0], np.float32)}
    out = static(*(paddle.to_tensor(inputs[n]) for n in names)).numpy()
    np.testing.assert_array_equal(out, compute("ScatterND", inputs, attrs))


# --- forked workers ---------------------------------------------------------------------------------------------

_FORK = """
import os, signal, sys
import numpy as np
from gather_scatter_conformance.adapters.paddle import ADAPTER
from gather_scatter_conformance.adapters.base import CaseData
case = CaseData(op='Gather', inputs={'data': np.arange(6, dtype=np.float32), 'indices': np.array([2, 0])},
                attrs={'axis': 0, 'batch_dims': 0})
ADAPTER.warm()
if sys.argv[1] == 'warm':
    [ADAPTER.prepare(case, v).run() for v in ADAPTER.variants('Gather')]
pid = os.fork()
if pid == 0:
    signal.alarm(8)
    [ADAPTER.prepare(case, v).run() for v in ADAPTER.variants('Gather')]
    os._exit(0)
print('child', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_paddle_forks_from_a_cold_template_only() -> None:
    """Why paddle's fork_after_run is False: a child forked after the parent ran a case hangs (here: killed by its
    alarm), while a child of a parent that only imported paddle runs every Gather variant."""
    assert not ADAPTER.fork_after_run
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    cold = subprocess.run([sys.executable, "-c", _FORK, "cold"], cwd=ROOT, env=env, capture_output=True)
    warm = subprocess.run([sys.executable, "-c", _FORK, "warm"], cwd=ROOT, env=env, capture_output=True)
    assert b"child 0" in cold.stdout, cold.stderr[-2000:]
    assert b"child -14" in warm.stdout, warm.stderr[-2000:]  # SIGALRM: the child hung
