"""A run split into shards of equal recorded time (issue #38): every cell in exactly one shard, no shard longer
than the mean plus one cell, the same split in every process, and `gsc merge` refusing an incomplete set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gather_scatter_conformance.harness.run import shards
from scripts import ci_matrix

ROOT = Path(__file__).resolve().parents[1]


def test_a_shard_is_k_of_n() -> None:
    assert shards.parse("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError, match="K/N with 1 <= K <= N"):
            shards.parse(bad)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=100.0), min_size=1, max_size=60), st.integers(1, 7))
def test_every_cell_in_one_shard_and_no_shard_past_the_mean_plus_one_cell(times: list[float], n: int) -> None:
    cells = [(f"c{i}", "fw", "v", "cpu") for i in range(len(times))]
    seconds = dict(zip(cells, times, strict=True))
    where = shards.assign(cells, seconds, n)
    assert set(where) == set(cells) and set(where.values()) <= set(range(n))
    loads = shards.loads(cells, seconds, n)
    assert max(loads) <= sum(times) / n + max(times) + 1e-9
    assert shards.assign(list(reversed(cells)), seconds, n) == where  # the order cells come in changes nothing


def test_a_cell_no_record_times_counts_as_the_median() -> None:
    cells = [(c, "fw", "v", "cpu") for c in "abcd"]
    assert shards.loads(cells, {cells[0]: 1.0, cells[1]: 3.0, cells[2]: 5.0}, 1) == [1.0 + 3.0 + 5.0 + 3.0]


def test_the_nightly_splits_an_environment_longer_than_its_share() -> None:
    envs = {"convert": {"runs": ["a~b~c", "d~e~f"]}, "numpy": {"runs": ["numpy"]}}
    jobs = ci_matrix.sharded(["convert", "numpy"], envs, {"a~b~c": 3000.0, "d~e~f": 3000.0, "numpy": 60.0},
                             share_s=40 * 60, cores=2)  # convert: 6000 s on 2 cores = 50 min: 2 shards of 40
    assert jobs == [{"env": "convert", "shard": "1/2", "part": "convert-1of2"},
                    {"env": "convert", "shard": "2/2", "part": "convert-2of2"},
                    {"env": "numpy", "shard": "1/1", "part": "numpy"}]


@pytest.mark.slow
def test_shards_of_a_real_run_hold_its_cells_once_and_merge_back(tmp_path: Path) -> None:
    def gsc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gather_scatter_conformance", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)

    def keys(name: str) -> list[tuple[str, ...]]:
        lines = (tmp_path / name).read_text().splitlines()[1:]
        return [tuple(json.loads(x)[k] for k in ("case", "framework", "variant", "device")) for x in lines]

    run = ("run", "--framework", "numpy", "--workers", "1", "--gsc-case-tags=probe")
    assert gsc(*run, "--results", "whole.jsonl").returncode == 0
    for k in (1, 2, 3):
        done = gsc(*run, "--results", f"s{k}.jsonl", "--shard", f"{k}/3", "--shard-times", "whole.jsonl")
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads((tmp_path / f"s{k}.jsonl").open().readline())["gsc_manifest"]["shard"] == f"{k}/3"
    parts = [keys(f"s{k}.jsonl") for k in (1, 2, 3)]
    assert sorted(k for p in parts for k in p) == sorted(keys("whole.jsonl"))  # each cell once, none lost
    assert all(parts)
    missing = gsc("merge", "s1.jsonl", "s3.jsonl", "--out", "m.jsonl")
    assert missing.returncode != 0 and "shard(s) 2/3 missing" in missing.stderr and not (tmp_path / "m.jsonl").exists()
    whole = gsc("merge", "s1.jsonl", "s2.jsonl", "s3.jsonl", "--out", "m.jsonl")
    assert whole.returncode == 0, whole.stderr
    head = json.loads((tmp_path / "m.jsonl").open().readline())["gsc_manifest"]
    assert head["records"] == len(keys("whole.jsonl")) == head["systems"]["numpy"]["planned"]
    bad = gsc(*run, "--results", "x.jsonl", "--shard", "4/3")
    assert bad.returncode == 4 and "K/N with 1 <= K <= N" in bad.stderr + bad.stdout


def test_a_manifest_whose_shard_is_not_k_of_n_is_refused() -> None:
    from pydantic import ValidationError

    from gather_scatter_conformance.harness.run.records import Manifest

    assert Manifest(run_id="r", harness_version="0", shard="2/3").shard == "2/3"
    for hostile in ("x/<b>../y", "0/2", "1/2; rm -rf /", "1/2\n"):
        with pytest.raises(ValidationError):
            Manifest(run_id="r", harness_version="0", shard=hostile)
