"""The project's own test suite against its budgets (issue #38): `make test` (CI) within 25 minutes, `make check`
(the developer lane) within 3.

`make test` is not rerun here (it takes most of the budget): its row reads the times the last one recorded
(``--record-times``: build/test-times.json, else the committed tests/times.json, which orders the suite). The lane
is timed: the same command as `make check`'s pytest line, ``reps`` times, a fresh process each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import ROOT, Row, median

TEST_BUDGET_S = 25 * 60
CHECK_BUDGET_S = 3 * 60
CHECK_COMMAND = [sys.executable, "-m", "pytest", "tests", "--no-frameworks", "-m", "not slow", "-n", "auto", "-q",
                 "-p", "no:cacheprovider"]


def recorded(paths: tuple[Path, ...] = (ROOT / "build" / "test-times.json", ROOT / "tests" / "times.json")) -> \
        tuple[Path, dict] | None:
    """The first times file that exists and reads, with its content."""
    for path in paths:
        try:
            return path, json.loads(path.read_text())
        except (OSError, ValueError):
            continue
    return None


def test_row() -> list[Row]:
    """`make test`'s recorded wall time against 25 minutes, and the files that took longest (context)."""
    found = recorded()
    if found is None:
        return [Row("suite", "make test (recorded)", None, f"<= {TEST_BUDGET_S}", None, "s",
                    "no times recorded: run make test (it writes build/test-times.json)")]
    path, data = found
    files = data.get("files", {})
    top = ", ".join(f"{Path(f).name} {s:.0f} s" for f, s in list(files.items())[:5])
    wall = float(data["wall_s"])
    return [Row("suite", "make test (recorded)", wall, f"<= {TEST_BUDGET_S}", wall <= TEST_BUDGET_S, "s",
                f"{data.get('tests')} tests on {data.get('workers')} workers, {sum(files.values()):.0f} worker-s; "
                f"longest: {top} ({path.relative_to(ROOT)})")]


def check_row(reps: int) -> list[Row]:
    """`make check`'s pytest line, timed ``reps`` times: the median wall time against 3 minutes."""
    walls = []
    for _ in range(reps):
        start = time.perf_counter()
        done = subprocess.run(CHECK_COMMAND, cwd=ROOT, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        if done.returncode != 0:
            tail = (done.stdout.strip().splitlines() or [""])[-1]
            return [Row("suite", "make check", None, f"<= {CHECK_BUDGET_S}", None, "s", f"failed: {tail}")]
    tail = done.stdout.strip().splitlines()[-1]
    wall = median(walls)
    return [Row("suite", "make check", wall, f"<= {CHECK_BUDGET_S}", wall <= CHECK_BUDGET_S, "s",
                f"median of {reps}: {tail}")]


def run(reps: int = 1) -> list[Row]:
    """Both rows."""
    return test_row() + check_row(reps)
