"""The LiteRT adapter: every seed case on every variant, the ops the converter emits, the edge labels, the repro."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance.adapters import litert, litert_model
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.harness.run.runner import InProcess, execute
from gather_scatter_conformance.vocab.ops import with_defaults

require("ai_edge_litert")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ADAPTER = litert.ADAPTER
ROOT = Path(__file__).resolve().parents[1]
DATA = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _probe(name: str) -> Case:
    file, case_id = name.split("::")
    return next(c for c in load_file(ROOT / file, file) if isinstance(c, Case) and c.id == case_id)


# --- variants, version, laziness -------------------------------------------------------------------------------


def test_variants_name_the_builtin_each_operator_lowers_to() -> None:
    assert {op: ADAPTER.variants(op) for op in ("Gather", "Take", "GatherElements", "GatherND", "ScatterElements",
                                                  "ScatterND")} == {
        "Gather": ["GATHER"], "Take": ["GATHER"], "GatherElements": ["GATHER_ND"], "GatherND": ["GATHER_ND"],
        "ScatterElements": ["SCATTER_ND"], "ScatterND": ["SCATTER_ND", "SCATTER_ND/zeros"]}
    with pytest.raises(ValueError, match="litert has no variant"):
        ADAPTER.prepare(_case("Gather", data=DATA, indices=[0]), "GATHER_ND")


def test_version_imports_no_framework() -> None:
    code = ("import sys; from gather_scatter_conformance import adapters; adapters.get('litert').version(); "
            "assert 'tensorflow' not in sys.modules and 'ai_edge_litert' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


def test_version_is_ai_edge_litert() -> None:
    assert ADAPTER.version() == litert_model.version() == importlib.metadata.version("ai-edge-litert")


# The seed cases against known/litert.yaml: tests/test_known_deviations.py's plan for litert (each pair once in
# make test).


def test_in_range_results_equal_the_reference() -> None:
    cases = [
        (_case("Gather", {"axis": 1}, data=DATA, indices=[[2, 0], [1, 1]]), "GATHER"),
        (_case("Gather", {"axis": 2, "batch_dims": 1}, data=DATA, indices=[[0, 3], [2, 1]]), "GATHER"),
        (_case("Take", {"axis": None, "mode": "raise"}, data=DATA, indices=[23, 0, 7]), "GATHER"),
        (_case("Take", {"axis": 0, "mode": "clip"}, data=DATA, indices=[5, 0]), "GATHER"),
        (_case("Take", {"axis": 1, "mode": "wrap"}, data=DATA, indices=[5, -1]), "GATHER"),
        (_case("GatherElements", {"axis": -1}, data=DATA, indices=np.full((2, 3, 2), 3)), "GATHER_ND"),
        (_case("GatherND", {"batch_dims": 1}, data=DATA, indices=[[1, 2], [0, 3]]), "GATHER_ND"),
        (_case("ScatterElements", {"axis": 1, "reduction": "add"}, data=DATA, indices=np.zeros((2, 2, 4), np.int64),
               updates=np.ones((2, 2, 4), np.float32)), "SCATTER_ND"),
        (_case("ScatterND", data=DATA, indices=[[1, 2], [0, 0]], updates=-np.ones((2, 4), np.float32)), "SCATTER_ND"),
    ]
    for case, variant in cases:
        out = ADAPTER.to_numpy(ADAPTER.prepare(case, variant).run())
        np.testing.assert_allclose(out, compute(case.op, case.inputs, case.attrs), err_msg=case.op)


# --- the ops the converter emits (facts["ops"]) ----------------------------------------------------------------


@pytest.mark.parametrize(("case", "variant", "ops"), [
    (_case("Gather", {"axis": 1}, data=DATA, indices=[0]), "GATHER", ["GATHER"]),
    (_case("Gather", {"axis": 1, "batch_dims": 1}, data=DATA, indices=[[0], [1]]), "GATHER", ["GATHER"]),
    (_case("Take", {"axis": None, "mode": "raise"}, data=DATA, indices=[0]), "GATHER", ["RESHAPE", "GATHER"]),
    (_case("Take", {"axis": 0, "mode": "clip"}, data=DATA, indices=[0]), "GATHER", ["MINIMUM", "MAXIMUM", "GATHER"]),
    (_case("Take", {"axis": 0, "mode": "wrap"}, data=DATA, indices=[0]), "GATHER", ["FLOOR_MOD", "GATHER"]),
    (_case("GatherElements", {"axis": 0}, data=DATA, indices=np.zeros((1, 3, 4), np.int64)), "GATHER_ND",
     ["PACK", "GATHER_ND"]),
    (_case("GatherND", data=DATA, indices=[[0, 1]]), "GATHER_ND", ["GATHER_ND"]),
    (_case("GatherND", {"batch_dims": 1}, data=DATA, indices=[[0], [1]]), "GATHER_ND", ["CONCATENATION", "GATHER_ND"]),
    (_case("ScatterND", data=DATA, indices=[[0, 1]], updates=np.ones((1, 4), np.float32)), "SCATTER_ND",
     ["BROADCAST_TO", "CAST", "SCATTER_ND", "SUB", "MUL", "SCATTER_ND", "ADD"]),
    (_case("ScatterND", {"reduction": "add"}, data=DATA, indices=[[0, 1]], updates=np.ones((1, 4), np.float32)),
     "SCATTER_ND", ["GATHER_ND", "ADD", "BROADCAST_TO", "CAST", "SCATTER_ND", "SUB", "MUL", "SCATTER_ND", "ADD"]),
    (_case("ScatterND", data=np.zeros(4, np.float32), indices=[[1]], updates=np.ones(1, np.float32)),
     "SCATTER_ND/zeros", ["CAST", "SCATTER_ND"]),
], ids=lambda v: v if isinstance(v, str) else None)
def test_ops_are_the_models_builtins_in_execution_order(case: CaseData, variant: str, ops: list[str]) -> None:
    call = ADAPTER.prepare(case, variant)
    assert call.facts["ops"] == ops
    assert call.api.endswith(f" -> [{', '.join(ops)}]).invoke()")


def test_ops_reach_the_record() -> None:
    rec = execute(_probe("cases/probes/gather.yaml::probe-negative-indices"), "litert", "GATHER", InProcess())
    assert rec.ops == ["GATHER"] and rec.outcome == "error"


# --- what builtins-only TFLite cannot express ------------------------------------------------------------------


@pytest.mark.parametrize(("case", "variant", "why"), [
    (_case("ScatterND", {"reduction": "max"}, data=DATA, indices=[[0, 1]], updates=np.ones((1, 4), np.float32)),
     "SCATTER_ND", "TF Select ops: TensorScatterMax"),
    (_case("ScatterND", {"reduction": "mul"}, data=DATA, indices=[[0, 1]], updates=np.ones((1, 4), np.float32)),
     "SCATTER_ND", "no multiplying scatter"),
    (_case("Gather", data=DATA.astype(np.float64), indices=[0]), "GATHER", "no builtins-only TFLite model"),
    (_case("Take", {"axis": 0, "mode": "fill"}, data=DATA, indices=[0]), "GATHER", "mode='fill'"),
    (_case("ScatterND", data=DATA, indices=[[0, 1]], updates=np.ones((1, 4), np.float32)), "SCATTER_ND/zeros",
     "data is not all zeros"),
])
def test_unsupported_says_why(case: CaseData, variant: str, why: str) -> None:
    with pytest.raises(Unsupported, match=why.replace("(", r"\(")):
        ADAPTER.prepare(case, variant)


# --- negative and out-of-bound indices, duplicates: measured labels --------------------------------------------

LABELS = {
    ("cases/probes/gather.yaml::probe-negative-indices", "GATHER"): "error",
    ("cases/probes/gather.yaml::probe-oob-positive", "GATHER"): "error",
    ("cases/probes/gather.yaml::probe-oob-negative", "GATHER"): "error",
    ("cases/probes/gather_nd.yaml::probe-negative-indices", "GATHER_ND"): "error",
    ("cases/probes/gather_nd.yaml::probe-oob-positive", "GATHER_ND"): "error",
    ("cases/probes/gather_elements.yaml::probe-negative-indices", "GATHER_ND"): "error",
    ("cases/probes/scatter_nd.yaml::probe-negative-indices", "SCATTER_ND"): "error",
    ("cases/probes/scatter_nd.yaml::probe-oob-positive", "SCATTER_ND"): "error",
    ("cases/probes/scatter_nd.yaml::probe-oob-negative-zero-data", "SCATTER_ND/zeros"): "error",
    # tensor_scatter_nd_update's lowering: data * (1 - count) + sum(updates): neither update
    ("cases/probes/scatter_nd.yaml::probe-duplicates", "SCATTER_ND"): "garbage",
    ("cases/probes/scatter_elements.yaml::probe-duplicates", "SCATTER_ND"): "garbage",
    ("cases/probes/scatter_nd.yaml::probe-duplicates-zero-data", "SCATTER_ND/zeros"): "accumulate",
    ("cases/probes/scatter_nd.yaml::probe-duplicates-add", "SCATTER_ND"): "reduce-all",
}


@pytest.mark.parametrize(("probe", "variant"), list(LABELS), ids=[f"{p.split('::')[1]}-{v}" for p, v in LABELS])
def test_edge_labels(probe: str, variant: str) -> None:
    rec = execute(_probe(probe), "litert", variant, InProcess())
    assert rec.label == LABELS[(probe, variant)], rec.error_message or rec.reason


def test_negative_index_error_names_the_kernel_check() -> None:
    case = _case("Gather", data=np.arange(5, dtype=np.float32), indices=[-1])
    with pytest.raises(RuntimeError, match="indices_has_only_positive_elements"):
        ADAPTER.prepare(case, "GATHER").run()


def test_duplicate_update_is_data_times_one_minus_count_plus_sum() -> None:
    data = np.array([10, 20, 30, 40], np.float32)
    case = _case("ScatterND", data=data, indices=[[1], [1], [3]], updates=np.array([1, 2, 3], np.float32))
    out = ADAPTER.to_numpy(ADAPTER.prepare(case, "SCATTER_ND").run())
    np.testing.assert_array_equal(out, [10, 20 * (1 - 2) + 1 + 2, 30, 3])


# --- the repro source, caching, the module-level functions -----------------------------------------------------


@pytest.mark.parametrize(("case", "variant"), [
    (_case("Gather", {"axis": 1}, data=DATA, indices=[[2, 0]]), "GATHER"),
    (_case("Take", {"axis": None, "mode": "raise"}, data=DATA, indices=[3]), "GATHER"),
    (_case("GatherElements", {"axis": 1}, data=DATA, indices=np.ones((2, 1, 4), np.int64)), "GATHER_ND"),
    (_case("ScatterElements", {"axis": 0}, data=DATA, indices=np.ones((1, 3, 4), np.int32),
           updates=np.zeros((1, 3, 4), np.float32)), "SCATTER_ND"),
    (_case("ScatterND", data=np.zeros(3, np.float32), indices=[[2]], updates=np.full(1, 5, np.float32)),
     "SCATTER_ND/zeros"),
    (_case("Gather", data=np.array(["a", "bc", ""], dtype=object), indices=[1, 2]), "GATHER"),
])
def test_repro_source_runs_standalone_and_agrees(case: CaseData, variant: str) -> None:
    call = ADAPTER.prepare(case, variant)
    out = ADAPTER.to_numpy(call.run())
    namespace: dict[str, Any] = {"np": np, **case.inputs}
    exec(compile(call.source, "<repro>", "exec"), namespace)
    assert namespace["result"].dtype == out.dtype
    np.testing.assert_array_equal(namespace["result"], out)
    assert ADAPTER.describe(case, variant)[1] == call.source


def test_models_are_cached_by_signature_and_released() -> None:
    ADAPTER.release()
    a = _case("Gather", {"axis": 0}, data=DATA, indices=[1])
    ADAPTER.prepare(a, "GATHER").run()
    ADAPTER.prepare(_case("Gather", {"axis": 0}, data=DATA + 1, indices=[0]), "GATHER").run()  # values only
    assert (ADAPTER.cache.misses, ADAPTER.cache.hits) == (1, 1)
    ADAPTER.prepare(_case("Gather", {"axis": 0}, data=DATA, indices=[1, 0]), "GATHER")  # another shape
    ADAPTER.prepare(_case("Gather", {"axis": 1}, data=DATA, indices=[1]), "GATHER")  # another attribute
    assert ADAPTER.cache.misses == 3
    ADAPTER.release()
    assert len(ADAPTER.cache) == 0


def test_a_converted_model_is_kept_on_disk_for_the_next_process(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """#38: a model depends on the call and the input signature, never the values: kept under the conversion cache,
    the next process (an empty in-memory cache here) loads it instead of converting; a damaged entry is converted
    anew and replaced."""
    from gather_scatter_conformance.adapters.convert.path import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    ADAPTER.release()
    case = _case("GatherND", {"batch_dims": 0}, data=DATA, indices=[[1, 2]])
    first = ADAPTER.prepare(case, "GATHER_ND").run()
    (entry,) = (tmp_path / "litert").iterdir()
    assert entry.suffix == ".tflite" and entry.read_bytes()[4:8] == b"TFL3"  # a TFLite flatbuffer's identifier
    convert = litert_model.convert

    def no_conversion(*args: Any) -> Any:
        raise AssertionError("converted again")

    monkeypatch.setattr(litert_model, "convert", no_conversion)
    ADAPTER.release()
    other_values = _case("GatherND", {"batch_dims": 0}, data=DATA * 2, indices=[[0, 1]])
    np.testing.assert_array_equal(ADAPTER.prepare(other_values, "GATHER_ND").run(), [DATA[0, 1] * 2])
    with pytest.raises(AssertionError, match="converted again"):  # another shape is another model
        ADAPTER.prepare(_case("GatherND", {"batch_dims": 0}, data=DATA, indices=[[1]]), "GATHER_ND")
    entry.write_bytes(b"not a model")
    ADAPTER.release()
    with pytest.raises(AssertionError, match="converted again"):
        ADAPTER.prepare(case, "GATHER_ND")
    monkeypatch.setattr(litert_model, "convert", convert)
    ADAPTER.release()
    np.testing.assert_array_equal(ADAPTER.prepare(case, "GATHER_ND").run(), first)
    assert entry.read_bytes() != b"not a model"  # converted anew and stored again
    ADAPTER.release()


def test_module_functions_convert_list_ops_and_run() -> None:
    import tensorflow as tf

    fn = tf.function(lambda indices, data: tf.gather(data, indices),
                     input_signature=[tf.TensorSpec([2], tf.int32), tf.TensorSpec([3], tf.float32)])
    model = litert_model.convert(fn.get_concrete_function())
    assert isinstance(model, bytes)
    assert litert_model.ops(model) == ["GATHER"]
    # The model orders its inputs by name, not by the function's arguments: run() takes the model's order.
    assert litert_model.input_names(litert_model.interpreter(model)) == ["data", "indices"]
    out = litert_model.run(model, [np.array([1.5, 2.5, 3.5], np.float32), np.array([2, 0], np.int32)])
    np.testing.assert_array_equal(out, [3.5, 1.5])
    flex = tf.function(lambda d, i, u: tf.tensor_scatter_nd_min(d, i, u),
                       input_signature=[tf.TensorSpec([3], tf.float32), tf.TensorSpec([1, 1], tf.int32),
                                        tf.TensorSpec([1], tf.float32)])
    with pytest.raises(Exception) as exc:  # the converter's own ConverterError
        litert_model.convert(flex.get_concrete_function())
    assert litert_model.needs_flex(exc.value) == "TF Select ops: TensorScatterMin"


def test_forked_children_of_a_cold_template_run_models() -> None:
    # litert's fork_after_run is False: a child of a template that had converted a model hung converting the next.
    # The template as the worker makes it (imported, no case run) must serve several children in a row.
    assert not ADAPTER.fork_after_run
    code = """
import numpy as np
from gather_scatter_conformance.harness.run import worker
from gather_scatter_conformance.vocab import wire
worker.describe('litert')
assert worker.start_template('litert')
for n in (4, 5):
    p = {'op': 'ScatterND', 'attrs': {'reduction': 'none'}, 'inputs': {
        'data': wire.encode(np.zeros(n, np.float32)), 'indices': wire.encode(np.array([[n - 1]])),
        'updates': wire.encode(np.ones(1, np.float32))}}
    r = worker.run_forked('litert', 'SCATTER_ND', p, 120)['result']
    assert r['outcome'] == 'ok', r
    assert wire.decode(r['value']).tolist() == [0.0] * (n - 1) + [1.0], r
worker.stop_templates()
"""
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=300)
