"""Part 2: the full CPU matrix end to end (``gsc run``) against calling every framework directly.

Harness: ``gsc run --results R`` over every case on every CPU framework that can run here
(MXNet in .venv-mxnet), once on two pytest-xdist workers (``-n 2``) and once serially; wall time of the command.
Floor: per framework, a fresh process of its interpreter imports it (timed: ``adapter.warm()``), then runs every
item of the ``-n 2`` run, each case x variant, as a direct user script would: ``adapter.prepare`` (building
sessions, compiling) and ``to_numpy(call.run())``, ``repeat`` times where the case says so; timed inside that
process. Items the harness recorded as unsupported (no native call), crash or timeout (a plain loop cannot
survive or finish them) are not run; the floor is the sum over frameworks of import + calls.
Claims: serial <= 1.5x the floor; ``-n 2`` < 1.0x the floor.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, Row
from benchmarks.overhead import _Floor, _pythons

SERIAL_LIMIT, PARALLEL_LIMIT = 1.5, 1.0
ITEM_TIMEOUT = 120.0  # as the harness's default --case-timeout
SKIP = ("unsupported", "crash", "timeout")


def _harness(results: Path, workers: int, frameworks: str, log: Path) -> float:
    # --no-cache: the harness side measures every record, as the floor calls every item (docs/cache.md)
    cmd = [sys.executable, "-m", "gather_scatter_conformance", "run", "--results", str(results), "--no-cache",
           "--workers", str(workers)]
    if frameworks:
        cmd += ["--framework", frameworks]
    start = time.perf_counter()
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, timeout=4 * 3600)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"harness run exited {proc.returncode}; see {log}")
    return elapsed


def _items(results: Path) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """framework -> [(variant, payload)] for every recorded item that made a native call and survived it."""
    from gather_scatter_conformance.harness.cases.load import Case, load_file
    from gather_scatter_conformance.harness.run.records import read
    from gather_scatter_conformance.harness.run.runner import payload

    cases: dict[str, Case] = {}
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        for entry in load_file(path, path.relative_to(ROOT).as_posix()):
            if isinstance(entry, Case):
                cases[entry.nodeid] = entry
    out: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for rec in read([results]):
        if rec["outcome"] not in SKIP and rec["case"] in cases:
            out[rec["framework"]].append((rec["variant"], payload(cases[rec["case"]])))
    return out


def _floor(framework: str, python: str, items: list[tuple[str, dict[str, Any]]]) -> dict[str, float]:
    """Import time and the summed time of the direct calls, timed inside one process of the framework.

    Items go one message each (messaging is outside the timed calls). A plain loop has no isolation: a call that
    kills the process, or hangs past ITEM_TIMEOUT, is counted as lost and the process started again (its import
    not counted twice).
    """
    floor = _Floor(python)
    result = {"import": float(floor.call("import", framework)), "calls": 0.0, "lost": 0.0, "items": len(items)}
    for item in items:
        try:
            result["calls"] += float(floor.call("direct", framework, [item], timeout=ITEM_TIMEOUT))
        except Exception:  # died or hung: that item is lost, the next one gets a fresh process
            floor.kill()
            result["lost"] += 1
            floor = _Floor(python)
            floor.call("import", framework)
    floor.close()
    return result


def run(workers: tuple[int, ...] = (1, 2), frameworks: str = "") -> list[Row]:
    """Rows: serial and -n 2 against the floor, plus the floor's per-framework import and call times."""
    pythons = _pythons()
    with tempfile.TemporaryDirectory(prefix="gsc-matrix-") as name:
        tmp = Path(name)
        logs = Path(os.environ.get("GSC_BENCH_LOGS", tmp))
        parallel = max(workers)
        wall: dict[int, float] = {parallel: _harness(tmp / f"n{parallel}.jsonl", parallel, frameworks,
                                                     logs / f"matrix-n{parallel}.log")}
        items = _items(tmp / f"n{parallel}.jsonl")
        floors = {fw: _floor(fw, pythons.get(fw, sys.executable), its) for fw, its in sorted(items.items())}
        for n in workers:
            if n not in wall:
                wall[n] = _harness(tmp / f"n{n}.jsonl", n, frameworks, logs / f"matrix-n{n}.log")
        records = sum(1 for _ in open(tmp / f"n{parallel}.jsonl"))
    floor_total = sum(f["import"] + f["calls"] for f in floors.values())
    rows = []
    for n in sorted(wall):
        limit, strict = (SERIAL_LIMIT, False) if n == 1 else (PARALLEL_LIMIT, True)
        ratio = wall[n] / floor_total
        label = "gsc run" + ("" if n == 1 else f" -n {n}")
        rows.append(Row("matrix", label, ratio, f"{'<' if strict else '<='} {limit:g}",
                        ratio < limit if strict else ratio <= limit, "x",
                        f"harness {wall[n]:.0f} s, floor {floor_total:.0f} s ({records} records)"))
    for fw, f in floors.items():
        lost = f" ({int(f['lost'])} lost to a crash)" if f["lost"] else ""
        rows.append(Row("matrix", f"  floor {fw}", f["import"] + f["calls"], "", None, "s",
                        f"import {f['import']:.1f} s + {int(f['items'])} calls {f['calls']:.1f} s{lost}"))
    print(json.dumps({"wall": wall, "floors": floors}), file=sys.stderr)
    return rows
