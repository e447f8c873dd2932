"""The TensorFlow.js adapter: real calls through Node (no mocks), values against the reference engine, the wasm
scatter of tensorflow/tfjs#8743, delegation read from tfjs, dtype handling, Node crashes charged to the case, and
repro sources that run on their own. Skips where node or the npm packages (`make tfjs`) are missing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

from gather_scatter_conformance.adapters import tfjs
from gather_scatter_conformance.adapters.base import CaseData, NativeCrash, Unsupported
from gather_scatter_conformance.adapters.node_worker import NodeProcess
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.vocab.ops import with_defaults

ADAPTER = tfjs.ADAPTER
WHY = ADAPTER.unavailable()
pytestmark = [pytest.mark.framework, pytest.mark.skipif(WHY is not None, reason=WHY or "")]
DATA = np.arange(12, dtype=np.float32).reshape(3, 4)


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _run(case: CaseData, variant: str) -> np.ndarray:
    return ADAPTER.to_numpy(ADAPTER.prepare(case, variant).run())


def test_variants_name_the_api_and_the_backend_cpu_first() -> None:
    assert ADAPTER.variants("Gather") == ["gather/cpu", "gather/wasm"]
    assert ADAPTER.variants("ScatterND") == ["tensorScatterUpdate/cpu", "tensorScatterUpdate/wasm", "scatterND/cpu",
                                             "scatterND/wasm"]
    assert ADAPTER.version() == "4.22.0"


IN_RANGE = [
    _case("Gather", {"axis": 1}, data=DATA, indices=np.array([[3, 0], [1, 1]])),
    _case("GatherND", data=DATA, indices=np.array([[2, 1], [0, 3]])),
    _case("GatherElements", {"axis": 1}, data=DATA, indices=np.array([[3, 0], [1, 1], [2, 2]])),
    _case("ScatterElements", {"axis": 0}, data=DATA, indices=np.array([[2, 0, 1, 2]]),
          updates=np.full((1, 4), 9, np.float32)),
    _case("ScatterND", data=DATA, indices=np.array([[1], [2]]), updates=np.full((2, 4), 7, np.float32)),
    _case("Take", {"axis": None, "mode": "raise"}, data=DATA, indices=np.array([11, 0])),
]


@pytest.mark.parametrize("backend", tfjs.BACKENDS)
@pytest.mark.parametrize("case", IN_RANGE, ids=[f"{c.op}-{i}" for i, c in enumerate(IN_RANGE)])
def test_in_range_calls_equal_the_reference(case: CaseData, backend: str) -> None:
    variant = ADAPTER.variants(case.op)[tfjs.BACKENDS.index(backend)]
    out = _run(case, variant)
    want = compute(case.op, case.inputs, case.attrs)
    assert out.dtype == want.dtype and np.array_equal(out, want), (variant, out, want)


def test_gather_batch_dims_cpu_is_right_and_wasm_wrong_tfjs_8658() -> None:
    """tensorflow/tfjs#8658 (open): the wasm GatherV2 with batchDims gives other values than the cpu backend."""
    case = _case("Gather", {"axis": 1, "batch_dims": 1}, data=np.arange(24, dtype=np.float32).reshape(4, 6),
                 indices=np.array([[1], [2], [3], [4]]))
    want = compute(case.op, case.inputs, case.attrs)
    assert np.array_equal(_run(case, "gather/cpu"), want)
    assert not np.array_equal(_run(case, "gather/wasm"), want)


def test_an_empty_gather_nd_comes_back_empty() -> None:
    case = _case("GatherND", data=DATA, indices=np.zeros((0, 2), np.int64))
    for backend in tfjs.BACKENDS:
        assert _run(case, f"gatherND/{backend}").shape == (0,)


@pytest.mark.parametrize("backend", tfjs.BACKENDS)
def test_delegation_is_read_from_tfjs_after_the_call(backend: str) -> None:
    call = ADAPTER.prepare(IN_RANGE[0], f"gather/{backend}")
    call.run()
    assert call.facts["providers"] == {"GatherV2": backend} and call.facts["fallback"] is False
    assert call.facts["ops"] == ["GatherV2"]


def test_scatter_nd_sums_duplicates_into_zeros() -> None:
    case = _case("ScatterND", data=np.zeros(4, np.float32), indices=np.array([[1], [1]]),
                 updates=np.array([1, 2], np.float32))
    for backend in tfjs.BACKENDS:
        assert _run(case, f"scatterND/{backend}").tolist() == [0, 3, 0, 0]
    with pytest.raises(Unsupported, match="not all zeros"):
        ADAPTER.prepare(_case("ScatterND", data=DATA, indices=[[1]], updates=np.ones((1, 4), np.float32)),
                        "scatterND/cpu")


def test_tfjs_errors_are_raised_with_their_javascript_name() -> None:
    case = _case("Gather", data=np.arange(4, dtype=np.float32), indices=np.array([4]))
    for backend in tfjs.BACKENDS:
        with pytest.raises(tfjs.TfjsError, match="GatherV2: the index value 4 is not in") as info:
            _run(case, f"gather/{backend}")
        assert f"{type(info.value).__module__}.{type(info.value).__name__}" == "tfjs.Error"


def test_tfjs_8743_cpu_throws_and_wasm_damages_its_heap() -> None:
    """tf.tensorScatterUpdate(tf.zeros([100]), [[-1]], [42]): the CPU backend throws; the WASM backend writes the 42
    outside the output (measured: all zeros come back) and freeing the tensors then traps. The Node worker is
    replaced afterwards and the next call runs normally."""
    case = _case("ScatterND", data=np.zeros(100, np.float32), indices=np.array([[-1]], np.int32),
                 updates=np.array([42], np.float32))
    with pytest.raises(tfjs.TfjsError, match="Invalid indices: -1 does not index into 100"):
        _run(case, "tensorScatterUpdate/cpu")
    with pytest.raises(NativeCrash, match=r"returned a float32 \[100\] value, then freeing its tensors raised "
                                          r"RuntimeError: memory access out of bounds"):
        _run(case, "tensorScatterUpdate/wasm")
    assert _run(IN_RANGE[4], "tensorScatterUpdate/wasm").tolist() == compute(
        "ScatterND", IN_RANGE[4].inputs, IN_RANGE[4].attrs).tolist()


def test_dtypes_tfjs_cannot_hold() -> None:
    ints = _case("Gather", data=np.arange(4, dtype=np.int32), indices=np.array([1], np.int64))
    call = ADAPTER.prepare(ints, "gather/cpu")
    assert "indices: int64 -> int32" in call.api and ADAPTER.to_numpy(call.run()).tolist() == [1]
    with pytest.raises(Unsupported, match="tfjs has no float64 tensors"):
        ADAPTER.prepare(_case("Gather", data=np.arange(4.0), indices=np.array([1])), "gather/cpu")
    with pytest.raises(Unsupported, match="do not fit int32"):
        ADAPTER.prepare(_case("Gather", data=np.arange(4, dtype=np.float32), indices=np.array([2**40])),
                        "gather/cpu")


def test_unsupported_attributes_and_reductions() -> None:
    with pytest.raises(Unsupported, match="no batchDims"):
        ADAPTER.prepare(_case("GatherND", {"batch_dims": 1}, data=DATA, indices=[[1], [2], [0]]), "gatherND/cpu")
    with pytest.raises(Unsupported, match="reduction='mul'"):
        ADAPTER.prepare(_case("ScatterND", {"reduction": "mul"}, data=DATA, indices=[[1]],
                              updates=np.ones((1, 4), np.float32)), "tensorScatterUpdate/cpu")
    with pytest.raises(Unsupported, match="mode='clip'"):
        ADAPTER.prepare(_case("Take", {"axis": 0, "mode": "clip"}, data=DATA, indices=[5]), "gather/cpu")


def test_a_node_that_dies_mid_call_is_a_native_crash_and_the_next_call_starts_afresh() -> None:
    node = NodeProcess(tfjs.node_executable() or "node", "-e",
                       ["require('readline').createInterface({input: process.stdin}).on('line', (l) => "
                        "l === '\"die\"' ? process.kill(process.pid, 'SIGSEGV') : "
                        "process.stdout.write(JSON.stringify({echo: l}) + '\\n'))"])
    try:
        with pytest.raises(NativeCrash) as info:
            node.request("die")  # type: ignore[arg-type]
        assert info.value.signal == "SIGSEGV"
        assert node.request("hello") == {"echo": '"hello"'}  # type: ignore[arg-type]
    finally:
        node.close()


def test_node_exits_when_its_parent_dies(tmp_path: Any) -> None:
    """A worker the harness kills (a hang) leaves no Node behind: PR_SET_PDEATHSIG on Linux."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    code = textwrap.dedent(f"""
        import sys, time
        from gather_scatter_conformance.adapters.node_worker import NodeProcess
        node = NodeProcess({tfjs.node_executable()!r}, '-e', ['setInterval(() => {{}}, 1000)'])
        proc = node._started()
        print(proc.pid, flush=True)
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        subprocess.run(["sleep", "0.1"], check=False)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError("node outlived its parent")


@pytest.mark.slow
@pytest.mark.parametrize("backend", tfjs.BACKENDS)
def test_repro_sources_run_on_their_own(backend: str) -> None:
    """Call.source is a standalone script: the same JavaScript, run by `node -e` on the NumPy inputs."""
    case = IN_RANGE[2]
    call = ADAPTER.prepare(case, f"gatherND/{backend}")
    script = "\n".join(["import numpy as np",
                        *(f"{n} = np.array({a.tolist()!r}, dtype=np.{a.dtype.name})" for n, a in case.inputs.items()),
                        call.source, "print(result.tolist())"])
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == str(compute(case.op, case.inputs, case.attrs).tolist())


def test_an_api_the_release_lacks_is_unsupported_not_an_error() -> None:
    """A release from before an API (tf.tensorScatterUpdate came in the 4.x series; 3.21.0 and 4.0.0 raise
    "TypeError: tf.tensorScatterUpdate is not a function") has no behaviour of it: unsupported, so a release sweep
    counts where the API arrived. The pinned release lacks no API, so the call here names one no release has; any
    other TypeError stays the error it is."""
    from gather_scatter_conformance.adapters.base import Call

    data = np.arange(3, dtype=np.float32)
    for expr, function, raised in [("tf.noSuchScatter(data)", "tf.noSuchScatter", Unsupported),
                                   ("tf.gather(data, null)", "tf.gather", tfjs.TfjsError)]:
        request = {"backend": "cpu", "names": ["data"], "body": tfjs.js_function(("data",), [], expr),
                   "inputs": {"data": tfjs.spec(data)}}
        with pytest.raises(raised) as info:
            ADAPTER._run(Call(expr, lambda: None), request, function)
        assert raised is tfjs.TfjsError or "has no tf.noSuchScatter" in str(info.value)
