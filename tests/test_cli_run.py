"""`python -m harness run` runs every case by default and only the given case paths when there are some."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(tmp_path: Path, *extra: str) -> list[dict]:
    out = tmp_path / "r.jsonl"
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--framework", "numpy", "--results", str(out),
                           *extra], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_run_narrows_to_given_case_files(tmp_path: Path) -> None:
    records = _run(tmp_path, "cases/found/gather_nd.yaml", "cases/gather_nd.yaml")
    files = {r["case_file"] for r in records}
    assert files == {"cases/found/gather_nd.yaml", "cases/gather_nd.yaml"}, files


def test_run_without_paths_runs_every_case_directory(tmp_path: Path) -> None:
    records = _run(tmp_path, "-k", "fuzz-gathernd or onnx_node_gather_nd or tensorflow-")
    dirs = {r["case_file"].rsplit("/", 1)[0] for r in records}
    assert {"cases/found", "cases/imported", "cases/regression"} <= dirs, dirs
