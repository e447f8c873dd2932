"""The extras state ranges, so that the harness installs beside a user's releases; the releases measured are pinned
in constraints/pins.txt, which `make` and tox install through. Each pin must lie inside its extras' ranges (else
the pinned environments could not be built), and every package an extra names is pinned there."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "constraints" / "pins.txt"


def _extras() -> dict[str, list[Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {name: [Requirement(r) for r in reqs] for name, reqs in project["optional-dependencies"].items()}


def _pins() -> dict[str, str]:
    out = {}
    for line in PINS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and re.fullmatch(r"[\w.]+", version), f"{PINS.name}: not NAME==VERSION: {line!r}"
            out[canonicalize_name(name)] = version
    return out


def test_extras_state_ranges_not_pins() -> None:
    pinned = [f"{extra}: {req}" for extra, reqs in _extras().items() for req in reqs
              if any(s.operator in ("==", "===") for s in req.specifier)]
    assert not pinned, f"extras must state ranges (the pins live in {PINS.name}): {pinned}"


def test_each_pin_lies_in_its_extras_ranges_and_each_framework_is_pinned() -> None:
    pins = _pins()
    own = canonicalize_name("gather-scatter-conformance")
    for extra, reqs in _extras().items():
        for req in reqs:
            name = canonicalize_name(req.name)
            if name == own or extra in ("report", "dev"):  # the groups of extras; tools stay unpinned
                continue
            if not any(s.operator in (">=", ">", "~=") for s in req.specifier):
                continue  # a limit another package needs (mxnet's numpy<1.24), not a release measured
            assert name in pins, f"[{extra}] {req.name} has no pin in {PINS.name}"
            assert req.specifier.contains(pins[name], prereleases=True), \
                f"{PINS.name} pins {req.name}=={pins[name]}, outside [{extra}]'s {req.specifier}"


def test_make_and_tox_install_through_the_pins() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"pip install .*-c \$\(PINS\) -e '\.\[cpu\]'", makefile)
    assert "PINS := constraints/pins.txt" in makefile
    tox = (ROOT / "tox.ini").read_text()
    assert re.search(r"^\[testenv\]\n(?:[^\[].*\n)*constraints = \{toxinidir\}/constraints/pins\.txt$", tox, re.M)


def _made_by_make() -> bool:
    """Whether this interpreter's environment is one the Makefile installed through the pins from this tree's
    pyproject.toml and pins.txt: its ``.installed`` stamp, written after the install, is newer than both (make
    rebuilds the environment when either changes)."""
    stamp = Path(sys.prefix) / ".installed"
    try:
        made = stamp.stat().st_mtime
        return made >= max((ROOT / "pyproject.toml").stat().st_mtime, PINS.stat().st_mtime)
    except OSError:
        return False


def _resolved_by_pip(tmp_path: Path) -> dict[str, str]:
    """What `make` runs, resolved by pip without installing (--dry-run --report), in a venv of its own."""
    src = tmp_path / "src"  # a copy: resolving builds the package's metadata in its tree
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv*", ".tox", "build", "*.egg-info", "results", "reports", "__pycache__", ".hypothesis"))
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=300)
    report = tmp_path / "report.json"
    proc = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", "--dry-run",
                           "--ignore-installed", "--report", str(report), "-c", str(PINS), f"{src}[cpu]"],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"]
            for i in json.loads(report.read_text())["install"]}


def _installed() -> dict[str, str]:
    """The distributions of this interpreter's environment, by name."""
    from importlib import metadata

    return {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}


@pytest.mark.slow
def test_the_makefiles_install_resolves_to_the_pins(tmp_path: Path) -> None:
    # Every pinned package the cpu extra asks for comes out of `make`'s install at its pin (torch as the pin's CPU
    # build where pip finds one). Where this test runs in the environment `make` installed from this very tree (make
    # test, CI), that install is the answer, read from its metadata; elsewhere pip resolves the install without
    # making it, from the indexes (about 100 s here).
    got = _installed() if _made_by_make() else _resolved_by_pip(tmp_path)
    wrong = {n: (v, got[n]) for n, v in _pins().items() if n in got and got[n].split("+")[0] != v}
    assert not wrong, f"pin, resolved: {wrong}"
    assert {"onnx", "onnxruntime", "openvino", "tensorflow", "torch", "jax", "paddlepaddle"} <= set(got)
