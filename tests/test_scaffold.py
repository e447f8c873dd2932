"""gsc new-adapter: the package it writes installs as an adapter (tests/test_toy_runtime.py walks the whole gate path
from it); here its files, its refusals, and that it never overwrites."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gather_scatter_conformance.harness.cli import main


def test_the_package_has_its_entry_point_an_unmapped_adapter_and_a_test(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-adapter", "my_rt", "--out", str(tmp_path)]) == 0
    root = tmp_path / "gsc-my_rt"
    assert str(root) in capsys.readouterr().out
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    meta = tomllib.loads((root / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["gather_scatter_conformance.adapters"] == {
        "my_rt": "gsc_my_rt.adapter:ADAPTER"}
    source = (root / "gsc_my_rt" / "adapter.py").read_text()
    tree = ast.parse(source)  # the files are Python, whatever the name
    ast.parse((root / "tests" / "test_my_rt_conformance.py").read_text())
    assert 'name = "my_rt"' in source and "VARIANTS: ClassVar[dict[str, tuple[str, ...]]] = {}" in source
    assert [n.name for n in tree.body if isinstance(n, ast.ClassDef)] == ["MyRtAdapter"]


@pytest.mark.parametrize(("name", "said"), [("numpy", "an adapter the harness has already"),
                                            ("My-RT", "no adapter name"), ("x; rm -rf /", "no adapter name")])
def test_a_bad_or_taken_name_is_refused_in_one_line(name: str, said: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-adapter", name, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and not any(tmp_path.iterdir())


def test_nothing_is_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "gsc-mine").mkdir()
    (tmp_path / "gsc-mine" / "pyproject.toml").write_text("mine")
    assert main(["new-adapter", "mine", "--out", str(tmp_path)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert (tmp_path / "gsc-mine" / "pyproject.toml").read_text() == "mine"


def test_the_example_is_the_toy_runtime_and_never_overwrites(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # The README's `gsc new-adapter --example && pip install ./toy-runtime` from a pip install: the package data is
    # examples/toy-runtime itself (tests/test_installed_wheel.py installs it from the wheel and finds its bug).
    toy = Path(__file__).resolve().parent.parent / "examples" / "toy-runtime"
    assert main(["new-adapter", "--example", "--out", str(tmp_path)]) == 0
    assert "pip install " + str(tmp_path / "toy-runtime") in capsys.readouterr().out
    written = {p.relative_to(tmp_path / "toy-runtime"): p.read_bytes()
               for p in (tmp_path / "toy-runtime").rglob("*") if p.is_file()}
    shipped = {p.relative_to(toy): p.read_bytes() for p in toy.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)}
    assert written == shipped and Path("toy_runtime/adapter.py") in written
    assert main(["new-adapter", "--example", "--out", str(tmp_path)]) == 2
    assert "exists already" in capsys.readouterr().err
