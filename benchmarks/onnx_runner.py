"""Part 5: ONNX's own backend-test runner against this harness, on the same gather/scatter node tests.

ONNX side: ``onnx.backend.test.BackendTest`` with ``onnxruntime.backend``, restricted to the node tests whose
names start with ``test_gather`` or ``test_scatter`` (26 in onnx 1.23.2; TensorScatter's start with
``test_tensorscatter``), run by pytest in a fresh process. Harness side: pytest over the same tests imported as
cases (``gsc import onnx-node`` writes ``cases/imported/onnx_node_<op>.yaml``) on onnxruntime, default
variant (one run per test, as ONNX's runner does), in a fresh process. Both are timed as whole commands: start,
imports, collection, runs. Claim: the harness is at least 10 times faster.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, Row, interleaved, median

LIMIT = 10.0
PATTERN = r"^test_(gather|scatter)"
IMPORTED = ROOT / "cases" / "imported"
_ONNX_TESTS = f"""
import onnx.backend.test
import onnxruntime.backend as backend

backend_test = onnx.backend.test.BackendTest(backend, __name__)
backend_test.include({PATTERN!r})
globals().update(backend_test.test_cases)
"""


def imported_files(given: str = "") -> list[Path]:
    """The imported node-test case files: ``given`` (a file or directory), else cases/imported/onnx_node*."""
    if given:
        path = Path(given)
        return sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
    found = sorted(IMPORTED.glob("onnx_node*.yaml")) + sorted((IMPORTED / "onnx_node").rglob("*.yaml"))
    return found


def _passed(out: str) -> int:
    got = re.findall(r"(\d+) (passed|failed|xfailed|skipped|error)", out)
    return sum(int(n) for n, _ in got)


def _timed(cmd: list[str], cwd: Path) -> tuple[float, int, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # 1: some tests failed, still a complete run
        raise RuntimeError(f"{' '.join(cmd[:4])}... exited {proc.returncode}: {proc.stdout[-800:]}{proc.stderr[-800:]}")
    return elapsed, _passed(proc.stdout), proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


def _harness_command(files: list[Path], tmp: Path) -> tuple[list[str], Path]:
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--framework", "onnxruntime",
            "--variants", "default"]
    if all(f.resolve().is_relative_to(ROOT) for f in files):
        return base + [str(f.resolve().relative_to(ROOT)) for f in files], ROOT
    # Files outside the project: a rootdir above them (case ids are relative to the invocation directory). The
    # command still runs from the project root, so `harness` and `adapters` import from here.
    common = Path(*Path(files[0]).resolve().parts[:-1])
    while not all(f.resolve().is_relative_to(common) for f in files):
        common = common.parent
    ini = tmp / "pytest.ini"
    ini.write_text("[pytest]\n")
    return base + ["--rootdir", str(common.parent), "-c", str(ini),
                   *[str(f.resolve()) for f in files]], ROOT


def run(reps: int = 3, cases_file: str = "") -> list[Row]:
    """One row: ONNX runner time / harness time, or a skip row when the imported cases are not there."""
    files = imported_files(cases_file)
    if not files:
        return [Row("onnx-runner", "onnx runner / harness", None, f">= {LIMIT:g}", None, "x",
                    "skipped: run `gsc import onnx-node` first")]
    with tempfile.TemporaryDirectory(prefix="gsc-onnx-runner-") as name:
        tmp = Path(name)
        (tmp / "test_onnx_node_gather_scatter.py").write_text(_ONNX_TESTS)
        onnx_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(tmp / "none.ini"),
                    "--rootdir", str(tmp), str(tmp / "test_onnx_node_gather_scatter.py")]
        (tmp / "none.ini").write_text("[pytest]\n")
        harness_cmd, cwd = _harness_command(files, tmp)
        counts: dict[str, tuple[int, str]] = {}

        def side(name: str, cmd: list[str], where: Path) -> float:
            elapsed, n, last = _timed(cmd, where)
            counts[name] = (n, last)
            return elapsed

        side("harness", harness_cmd, cwd)  # warm-up: parse cache, page cache
        times = interleaved({"onnx": lambda: side("onnx", onnx_cmd, tmp),
                             "harness": lambda: side("harness", harness_cmd, cwd)}, reps)
    t_onnx, t_harness = median(times["onnx"]), median(times["harness"])
    ratio = t_onnx / t_harness
    return [Row("onnx-runner", "onnx runner / harness", ratio, f">= {LIMIT:g}", ratio >= LIMIT, "x",
                f"onnx runner {t_onnx:.2f} s ({counts['onnx'][1]}), harness {t_harness:.2f} s "
                f"({counts['harness'][1]}), medians of {reps}")]
