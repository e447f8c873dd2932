"""The parse cache: a hit gives exactly what a fresh load gives, and anything a load depends on invalidates it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gather_scatter_conformance.harness.cases import cache as casecache
from gather_scatter_conformance.harness.cases import yamlsrc
from gather_scatter_conformance.harness.cases.errors import CaseFileError
from gather_scatter_conformance.harness.cases.load import Case, load_file

ROOT = Path(__file__).resolve().parent.parent

GOOD = """\
op: Gather
cases:
  - id: small
    source: test
    tags: [seed]
    inputs: {data: [1, 2, 3], indices: [2, 0]}
    expected: [3, 1]
  - id: generated
    source: test
    dimension: oob-positive
    inputs:
      data: {random: {shape: [4, 3], seed: 1}}
      indices: {generate: {kind: in-range, shape: [5], seed: 2}}
    attrs: {axis: 0}
"""


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(casecache.ENV, str(where))
    return where


def _file(tmp_path: Path, text: str, name: str = "gather.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed although the cache should have answered")

    monkeypatch.setattr(yamlsrc, "load", refuse)


def _summary(entries: list[Case | CaseFileError]) -> list[object]:
    out: list[object] = []
    for e in entries:
        if isinstance(e, CaseFileError):
            out.append(str(e))
        else:
            inputs = {k: v.tolist() for k, v in e.inputs().items()}
            ref = e.reference()
            out.append((e.nodeid, e.line, e.tags, e.dimension, e.attrs, e.spec.model_dump(), inputs,
                        ref.tolist() if isinstance(ref, np.ndarray) else repr(ref)))
    return out


def test_a_hit_is_what_a_fresh_load_gives_without_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           cache_dir: Path) -> None:
    path = _file(tmp_path, GOOD)
    fresh = load_file(path, "cases/gather.yaml")
    assert len(list(cache_dir.glob("*.pickle"))) == 1
    _no_parsing(monkeypatch)
    cached = load_file(path, "cases/gather.yaml")
    assert all(isinstance(c, Case) for c in cached)
    assert _summary(cached) == _summary(fresh)
    assert cached[0].dimension is None and cached[1].dimension == "oob-positive" and cached[0].tags == ["seed"]


def test_changed_content_is_loaded_again(tmp_path: Path) -> None:
    path = _file(tmp_path, GOOD)
    load_file(path)
    path.write_text(GOOD.replace("indices: [2, 0]}\n    expected: [3, 1]", "indices: [1, 0]}\n    expected: [2, 1]"))
    assert load_file(path)[0].inputs()["indices"].tolist() == [1, 0]
    path.write_text(GOOD.replace("expected: [3, 1]", "expected: [3, 3]"))
    first = load_file(path)[0]
    assert isinstance(first, CaseFileError) and "disagrees with the reference engine" in str(first)


def test_errors_come_back_with_file_line_and_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _file(tmp_path, GOOD.replace("indices: [2, 0]}", "indices: [2, 0.5]}"))
    fresh = [str(e) for e in load_file(path, "cases/gather.yaml")]
    assert "cases/gather.yaml:6: cases[0].inputs.indices" in fresh[0]
    broken = _file(tmp_path, "op: Gather\ncases: [\n", "broken.yaml")
    syntax = str(load_file(broken)[0])
    assert "YAML syntax error" in syntax
    _no_parsing(monkeypatch)
    assert [str(e) for e in load_file(path, "cases/gather.yaml")] == fresh
    assert str(load_file(broken)[0]) == syntax


def test_a_change_in_the_code_invalidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _file(tmp_path, GOOD)
    load_file(path)
    calls: list[str] = []
    real = yamlsrc.load

    def counting(text: str, file: str) -> object:
        calls.append(file)
        return real(text, file)

    monkeypatch.setattr(yamlsrc, "load", counting)
    load_file(path)
    assert calls == []
    monkeypatch.setattr(casecache, "code_fingerprint", lambda: "other code")
    load_file(path)
    assert calls == [str(path)]


def test_the_fingerprint_covers_every_harness_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    before = casecache.code_fingerprint()
    fake = tmp_path / "harness"
    fake.mkdir()
    for src in casecache.HARNESS.rglob("*.py"):
        dst = fake / src.relative_to(casecache.HARNESS)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    monkeypatch.setattr(casecache, "HARNESS", fake)
    casecache.code_fingerprint.cache_clear()
    try:
        assert casecache.code_fingerprint() == before
        casecache.code_fingerprint.cache_clear()
        (fake / "reference" / "take.py").write_text((fake / "reference" / "take.py").read_text() + "\n# edited\n")
        assert casecache.code_fingerprint() != before
    finally:
        casecache.code_fingerprint.cache_clear()


def test_the_display_name_is_part_of_the_key(tmp_path: Path) -> None:
    path = _file(tmp_path, GOOD)
    assert load_file(path, "a.yaml")[0].nodeid == "a.yaml::small"
    assert load_file(path, "b.yaml")[0].nodeid == "b.yaml::small"


def test_a_corrupt_entry_is_a_miss(tmp_path: Path, cache_dir: Path) -> None:
    path = _file(tmp_path, GOOD)
    fresh = _summary(load_file(path))
    for entry in cache_dir.glob("*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert _summary(load_file(path)) == fresh


def test_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_dir: Path) -> None:
    monkeypatch.setenv(casecache.ENV, "off")
    assert isinstance(load_file(_file(tmp_path, GOOD))[0], Case)
    assert not cache_dir.exists()


def test_a_cached_load_imports_neither_yaml_nor_pydantic(tmp_path: Path, cache_dir: Path) -> None:
    path = _file(tmp_path, GOOD)
    load_file(path)
    script = (
        "import json, sys; from pathlib import Path; "
        "from gather_scatter_conformance.harness.cases.load import load_file; "
        f"entries = load_file(Path({str(path)!r})); "
        "print(json.dumps([len(entries), 'yaml' in sys.modules, 'pydantic' in sys.modules]))"
    )
    env = {**os.environ, casecache.ENV: str(cache_dir), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout) == [2, False, False]
