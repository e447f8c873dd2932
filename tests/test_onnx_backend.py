"""``--onnx-backend``: ONNX's backend API as an adapter (adapters/onnx_backend.py), run on onnxruntime.backend and on a
Backend class written here over onnx.reference; its verdicts against the native adapters' on the same cases."""

from __future__ import annotations

import subprocess
import sys
import unittest
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _cases import records_of

pytest.importorskip("onnx")

from onnx.backend.base import Backend, BackendRep

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters import onnx_backend
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run.runner import InProcess, execute

ROOT = Path(__file__).resolve().parents[1]
ORT = "onnxruntime.backend"


class ReferenceRep(BackendRep):
    """onnx.reference's evaluator behind the backend API."""

    def __init__(self, model: Any) -> None:
        from onnx.reference import ReferenceEvaluator

        self.names = [i.name for i in model.graph.input]
        self.evaluator = ReferenceEvaluator(model)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        return tuple(self.evaluator.run(None, dict(zip(self.names, inputs, strict=True))))


class ReferenceBackend(Backend):
    """A Backend as a runtime team would write one: the base class checks the model (onnx.checker.check_model)."""

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> ReferenceRep:
        super().prepare(model, device, **kwargs)
        return ReferenceRep(model)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


class DecliningBackend(Backend):
    """Declines every model the way the backend API does (onnxruntime.backend for an unreleased opset)."""

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> BackendRep:
        raise unittest.SkipTest("only released opsets are supported")


@pytest.fixture(autouse=True)
def _cpu_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both sides on onnxruntime's CPU provider: the native adapter by default, and onnxruntime.backend (which takes
    every available provider, OpenVINO's first where onnxruntime-openvino is installed) through its own switch,
    ORT_ONNX_BACKEND_EXCLUDE_PROVIDERS."""
    monkeypatch.delenv("GSC_ORT_PROVIDERS", raising=False)
    try:
        import onnxruntime
    except ImportError:
        return
    others = [p for p in onnxruntime.get_available_providers() if p != "CPUExecutionProvider"]
    monkeypatch.setenv("ORT_ONNX_BACKEND_EXCLUDE_PROVIDERS", ",".join(others))


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    """Each test's backends leave the process's registry as they found it."""
    saved = dict(adapters.table())
    yield
    adapters.use(saved)


def _cases(*names: str) -> list[Case]:
    out = []
    for name in names:
        out += [e for e in load_file(ROOT / "cases" / name, f"cases/{name}") if isinstance(e, Case)]
    return out


def _verdicts(framework: str, cases: list[Case], variants: int = 1) -> dict[tuple[str, str], tuple[Any, ...]]:
    out = {}
    for case in cases:
        for variant in adapters.get(framework).variants(case.op)[:variants]:
            r = execute(case, framework, variant, InProcess())
            out[(case.nodeid, variant)] = (r.outcome, r.verdict, r.deviation)
    return out


def test_one_adapter_per_backend_named_and_registered_for_the_workers() -> None:
    name = onnx_backend.register(ORT)
    assert name == "onnx-backend-onnxruntime.backend"
    assert adapters.table()[name] == f"gather_scatter_conformance.adapters.onnx_backend:{ORT}"
    adapter = adapters.get(name)
    assert adapter is onnx_backend._adapter(ORT) and adapter.requires == ("onnxruntime", "onnx")
    assert adapter.variants("ScatterElements") == adapters.get("onnxruntime").variants("ScatterElements")
    assert onnx_backend.adapter_name("my.pkg:MyBackend") == "onnx-backend-my.pkg.MyBackend"  # no ':' in names
    with pytest.raises(ValueError):
        adapters.register(name, "elsewhere:ADAPTER")


@pytest.mark.framework
def test_what_is_not_a_backend_says_so_in_one_line() -> None:
    assert onnx_backend.problem(ORT) is None
    assert onnx_backend.problem(f"{__name__}:ReferenceBackend") is None
    for spec, words in (("numpy", "not an ONNX backend"), ("no_such_pkg.backend", "cannot import no_such_pkg"),
                        (f"{__name__}:Missing", "has no Missing")):
        problem = onnx_backend.problem(spec)
        assert problem is not None and words in problem and "\n" not in problem, problem


@pytest.mark.framework
def test_api_and_repro_show_the_backend_calls() -> None:
    pytest.importorskip("onnxruntime")
    adapter = adapters.get(onnx_backend.register(ORT))
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    case = CaseData("Gather", {"data": data, "indices": np.array([1, -2])}, {"axis": 1, "batch_dims": 0})
    call = adapter.prepare(case, "Gather-11")
    assert call.api == f"{ORT}.prepare(model: Gather-11(data, indices, axis=1), 'CPU').run([data, indices])[0]"
    np.testing.assert_array_equal(adapter.to_numpy(call.run()), data[:, [1, 1]])
    scope: dict[str, Any] = {"np": np, "data": data, "indices": np.array([1, -2])}
    exec(call.source, scope)  # the repro statements run on their own and give the same result
    np.testing.assert_array_equal(scope["result"], data[:, [1, 1]])
    assert "import onnxruntime.backend as backend" in call.source and "backend.prepare(model, 'CPU')" in call.source


def test_a_declined_model_is_unsupported_not_an_error() -> None:
    adapter = adapters.get(onnx_backend.register(f"{__name__}:DecliningBackend"))
    case = CaseData("Gather", {"data": np.zeros(3, np.float32), "indices": np.array([0])}, {"axis": 0, "batch_dims": 0})
    with pytest.raises(Unsupported, match="declines the model: only released opsets"):
        adapter.prepare(case, "Gather-13").run()


def test_a_backend_class_gives_the_verdicts_of_the_onnx_reference_adapter() -> None:
    """A Backend that checks its models (the base class's prepare) runs every case: the models pass the checker."""
    name = onnx_backend.register(f"{__name__}:ReferenceBackend")
    cases = _cases("gather.yaml", "scatter_nd.yaml")
    # The default variants: the case's own opset, as onnx-reference builds it (its one variant, ReferenceEvaluator).
    mine = {case: v for (case, _), v in _verdicts(name, cases).items()}
    reference = {case: v for (case, _), v in _verdicts("onnx-reference", cases).items()}
    assert mine == reference
    assert sum(v[0] == "ok" for v in mine.values()) > 40


@pytest.mark.framework
def test_onnxruntime_backend_gives_the_native_adapters_verdicts_but_for_bfloat16() -> None:
    """Measured on the whole corpus (docs/onnx-backend.md): the two differ only where the inputs are bfloat16, which
    the backend API's NumPy feeds cannot carry into onnxruntime. Here: three seed files, default variants."""
    pytest.importorskip("onnxruntime")
    name = onnx_backend.register(ORT)
    cases = _cases("gather_elements.yaml", "gather_nd.yaml", "take.yaml")  # each holds a bfloat16 case
    mine, native = _verdicts(name, cases), _verdicts("onnxruntime", cases)
    assert mine.keys() == native.keys()
    bfloat16 = {c.nodeid for c in cases if any(v.dtype.name == "bfloat16" for v in c.inputs().values())}
    differ = {k for k in mine if mine[k] != native[k]}
    assert {k[0] for k in differ} <= bfloat16, sorted(differ)
    for key in differ:  # a value natively, an error through the backend API
        assert native[key][0] == "ok" and mine[key][:2] == ("error", "deviates"), (key, native[key], mine[key])
    assert differ and len(mine) - len(differ) > 100


def _case_file(folder: Path) -> None:
    folder.mkdir()
    (folder / "gather.yaml").write_text(
        "op: Gather\ncases:\n"
        "  - id: ok\n    source: test\n    inputs: {data: [1.0, 2.0, 3.0], indices: [2, -1]}\n"
        "    expected: [3.0, 3.0]\n"
        "  - id: oob\n    source: test\n    inputs: {data: [1.0, 2.0, 3.0], indices: [3]}\n"
        "    expected: {error: true}\n")


@pytest.mark.framework
def test_pytest_option_runs_the_backend_in_isolated_workers(pytester: pytest.Pytester) -> None:
    pytest.importorskip("onnxruntime")
    _case_file(pytester.path / "cases")
    result = pytester.runpytest_subprocess("cases", "--onnx-backend", ORT, "--framework", "onnxruntime",
                                           "--variants", "default", "--results", "r.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    records = records_of(pytester.path / "r.jsonl")
    by = {(r["framework"], r["case_id"]): r for r in records}
    assert set(by) == {(f, c) for f in ("onnxruntime", "onnx-backend-onnxruntime.backend") for c in ("ok", "oob")}
    for case in ("ok", "oob"):
        assert by[("onnx-backend-onnxruntime.backend", case)]["verdict"] == by[("onnxruntime", case)]["verdict"]
    assert by[("onnx-backend-onnxruntime.backend", "ok")]["outcome"] == "ok"
    assert by[("onnx-backend-onnxruntime.backend", "oob")]["api"].startswith(f"{ORT}.prepare(model: Gather-13(")


@pytest.mark.framework
def test_gsc_run_takes_the_option_and_without_framework_runs_only_the_backend(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    _case_file(tmp_path / "cases")
    done = subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "run", "cases", "--onnx-backend", ORT,
                           "--results", "r.jsonl", "--variants", "default"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    records = records_of(tmp_path / "r.jsonl")
    assert {r["framework"] for r in records} == {"onnx-backend-onnxruntime.backend"} and len(records) == 2


@pytest.mark.parametrize("spec", ["numpy", "no_such_pkg.backend"])
def test_a_module_that_is_no_backend_is_a_one_line_usage_error(pytester: pytest.Pytester, spec: str) -> None:
    _case_file(pytester.path / "cases")
    result = pytester.runpytest_subprocess("cases", "--gsc-onnx-backend", spec, "--results", "r.jsonl", "-p",
                                           "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"ERROR: --onnx-backend {spec}: "), result.stderr.lines
    assert not (pytester.path / "r.jsonl").exists()
