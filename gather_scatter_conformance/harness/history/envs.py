"""One cached environment per framework release: created once (with uv where it is installed, else venv and pip),
checked by importing the framework, and reused while its requirements stay the same.

Environments live in ``$GSC_ENV_CACHE`` (default ``~/.cache/gather-scatter-conformance/envs``), named
``<framework>-<release>-py<XY>``; a marker file holds what was installed. A release that cannot be installed or
imported raises :class:`EnvError` with the reason, which the sweep records.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from gather_scatter_conformance.harness.history.pins import framework, requirements

CACHE_ENV = "GSC_ENV_CACHE"
MARKER = ".gsc-env.json"
INSTALL_TIMEOUT = 1800  # seconds: a TensorFlow wheel is several hundred MB


class EnvError(Exception):
    """A release's environment could not be made (``stage`` install) or its framework not imported (import)."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(f"{stage}: {reason}")
        self.stage = stage
        self.reason = reason


@dataclass
class Env:
    """A ready environment: its interpreter, the versions installed, how long making it took (0 if reused), and the
    variables a run in it needs (an npm release's folder, under its ReleaseRules.folder_env)."""

    python: str
    packages: dict[str, str]
    created_s: float
    tool: str  # uv | pip | npm | reused
    variables: dict[str, str] = field(default_factory=dict)


def cache_root() -> Path:
    """Where release environments are kept."""
    configured = os.environ.get(CACHE_ENV)
    base = Path(configured) if configured else Path.home() / ".cache" / "gather-scatter-conformance" / "envs"
    return base


def env_path(name: str, release: str, root: Path | None = None) -> Path:
    """The folder of ``name``==``release``'s environment for this interpreter's Python version."""
    return (root or cache_root()) / f"{name}-{release}-py{sys.version_info.major}{sys.version_info.minor}"


def drop(name: str, release: str, root: Path | None = None) -> int:
    """Remove ``name``==``release``'s environment (a sweep's ``--drop-envs``: a TensorFlow release's takes about
    1 GB, a torch release with CUDA 4-6 GB); returns the bytes freed, 0 where there was none."""
    path = env_path(name, release, root)
    if not path.is_dir():
        return 0
    size = sum(os.lstat(os.path.join(folder, f)).st_size for folder, _, files in os.walk(path) for f in files)
    shutil.rmtree(path, ignore_errors=True)
    return size


def uv_command() -> list[str] | None:
    """How to call uv here: the ``uv`` beside this interpreter or on PATH, else None."""
    beside = Path(sys.executable).with_name("uv")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("uv")
    return [found] if found else None


def _find_links() -> list[str]:
    # Wheels pip is configured to find on disk (the CPU build of torch here): uv reads no pip configuration.
    links = os.environ.get("PIP_FIND_LINKS", "").split()
    try:
        listed = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"],
                                capture_output=True, text=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError):
        listed = []
    return [link for link in dict.fromkeys(links + listed) if link]


def _run(cmd: list[str], stage: str, timeout: float = INSTALL_TIMEOUT, cwd: Path | None = None) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as exc:
        raise EnvError(stage, f"{' '.join(cmd[:3])}... took over {timeout:g} s") from exc
    if proc.returncode:
        raise EnvError(stage, reason(proc.stderr or proc.stdout) or f"exit {proc.returncode}")
    return proc.stdout


_WHY = re.compile(r"(?i)error|no solution|no matching|not supported|requires|because|unsatisfiable|failed")
# hints, and the log lines a framework prints while importing (glog's "W1201 06:40:49.405000 ...", which can say
# "will be an error in a future release")
_HINT = re.compile(r"(?i)^(note|hint):|see above|this is an issue with the package|^[IWE]\d{4} \d\d:\d\d:\d\d")


def reason(output: str) -> str:
    """The lines of a failed command's output that say why (errors, unsatisfiable requirements), not its hints."""
    lines = [ln.strip(" │╰─>") for ln in output.strip().splitlines() if ln.strip()]
    telling = [ln for ln in lines if _WHY.search(ln) and not _HINT.search(ln)]
    return " / ".join((telling or lines)[-4:])[-600:]


def _create(path: Path, reqs: list[str]) -> str:
    """Make the environment at ``path`` with ``reqs`` installed; returns the tool that did it."""
    uv = uv_command()
    uv_failed = ""
    if uv:
        _run([*uv, "venv", "-q", "--python", sys.executable, str(path)], "install")
        links = [a for link in _find_links() for a in ("--find-links", link)]
        try:
            _run([*uv, "pip", "install", "-q", "--python", str(path / "bin" / "python"), *links, *reqs], "install")
            return "uv"
        except EnvError as exc:
            uv_failed = exc.reason
            shutil.rmtree(path, ignore_errors=True)  # pip's own configuration may reach what uv cannot
    _run([sys.executable, "-m", "venv", str(path)], "install")
    try:
        _run([str(path / "bin" / "python"), "-m", "pip", "install", "-q", *reqs], "install")
    except EnvError as exc:
        raise EnvError("install", f"uv: {uv_failed}; pip: {exc.reason}" if uv_failed else exc.reason) from None
    return "pip"


def _ensure_npm(name: str, release: str, root: Path | None) -> Env:
    """:func:`ensure` for an npm framework: a folder where npm installed the release and its companions (exactly
    those versions), checked by Node running the rules' ``check`` there; the cases then run in this interpreter,
    the folder named to the adapter by the rules' ``folder_env``."""
    rules = framework(name)
    reqs = requirements(name, release)
    path = env_path(name, release, root)
    variables = {rules.folder_env: str(path)} if rules.folder_env else {}
    marker = path / MARKER
    if marker.exists():
        saved = json.loads(marker.read_text())
        if saved.get("requirements") == reqs:
            return Env(sys.executable, saved["packages"], 0.0, "reused", variables)
    npm, node = shutil.which("npm"), shutil.which("node")
    if not (npm and node):
        raise EnvError("install", "npm and node are needed (Debian's nodejs and npm)")
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    start = time.perf_counter()
    pinned = dict(req.rsplit("@", 1) for req in reqs)  # "@scope/name@1.2.3": the last @ ends the name
    (path / "package.json").write_text(json.dumps({"private": True, "dependencies": pinned}, indent=1))
    _run([npm, "install", "--prefix", str(path), "--no-audit", "--no-fund", "--save-exact"], "install")
    _run([node, "-e", rules.check_code()], "import", timeout=300, cwd=path)  # require() resolves from the folder
    created = time.perf_counter() - start
    packages = {}
    for package in [*pinned, *rules.reported]:
        with contextlib.suppress(OSError, ValueError, KeyError):
            packages[package] = json.loads((path / "node_modules" / package / "package.json").read_text())["version"]
    marker.write_text(json.dumps({"requirements": reqs, "packages": packages, "tool": "npm"}, indent=1))
    return Env(sys.executable, packages, created, "npm", variables)


def installed(python: str, names: list[str]) -> dict[str, str]:
    """Installed versions of the distributions ``names`` in the interpreter ``python`` (absent ones left out)."""
    code = ("import importlib.metadata as m, json, sys\n"
            "def has(n):\n    try:\n        m.version(n)\n        return True\n    except m.PackageNotFoundError:\n"
            "        return False\n"
            "print(json.dumps({n: m.version(n) for n in sys.argv[1:] if has(n)}))")
    return json.loads(_run([python, "-c", code, *names], "import", timeout=120))


def _requirement_names(reqs: list[str]) -> list[str]:
    names = []
    for req in reqs:
        name = req.split("[")[0]
        for sep in ("==", "<", ">", "~", "!", ";"):
            name = name.split(sep)[0]
        names.append(name.strip())
    return names


def ensure(name: str, release: str, root: Path | None = None) -> Env:
    """A working environment for ``name``==``release``: reused when its marker lists the same requirements, else
    made afresh and checked by importing the framework. Raises EnvError with the reason otherwise."""
    if framework(name).registry == "npm":
        return _ensure_npm(name, release, root)
    reqs = requirements(name, release)
    path = env_path(name, release, root)
    python = str(path / "bin" / "python")
    marker = path / MARKER
    if marker.exists():
        saved = json.loads(marker.read_text())
        if saved.get("requirements") == reqs and Path(python).exists():
            return Env(python, saved["packages"], 0.0, "reused")
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    tool = _create(path, reqs)
    _run([python, "-c", framework(name).check_code()], "import", timeout=300)
    created = time.perf_counter() - start
    names = _requirement_names(reqs) + list(framework(name).reported)
    packages = installed(python, names)
    marker.write_text(json.dumps({"requirements": reqs, "packages": packages, "tool": tool}, indent=1))
    return Env(python, packages, created, tool)
