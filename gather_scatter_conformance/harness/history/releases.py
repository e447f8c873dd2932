"""Release specs: an explicit list (``1.16.3,1.17.3``) or a range (``">=1.16"``: each minor release's newest patch),
resolved against the package index that pip is configured for."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from functools import cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from gather_scatter_conformance.harness.history.pins import framework

_OPERATORS = re.compile(r"[<>=!~]")


class ReleaseSpecError(ValueError):
    """A release spec that names nothing installable, or cannot be read."""


@cache
def index_versions(distribution: str, registry: str = "pypi") -> tuple[str, ...]:
    """Every final release of ``distribution`` the package index offers, oldest first (``pip index versions``; for
    ``registry`` npm, ``npm view <package> versions``)."""
    if registry == "npm":
        texts = _npm_versions(distribution)
    else:
        proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", distribution],
                              capture_output=True, text=True, timeout=300)
        match = re.search(r"Available versions:\s*(.+)", proc.stdout)
        if proc.returncode or not match:
            raise ReleaseSpecError(f"the package index lists no releases of {distribution}: "
                                   f"{(proc.stderr or proc.stdout).strip()[-300:]}")
        texts = match.group(1).split(",")
    versions = []
    for text in texts:
        try:
            v = Version(text.strip())
        except InvalidVersion:
            continue
        if not (v.is_prerelease or v.is_devrelease):
            versions.append(v)
    return tuple(str(v) for v in sorted(set(versions)))


def _npm_versions(package: str) -> list[str]:
    """The versions npm's registry lists for ``package`` (``npm view --json``)."""
    npm = shutil.which("npm")
    if not npm:
        raise ReleaseSpecError(f"npm is not installed, so the releases of {package} cannot be listed")
    proc = subprocess.run([npm, "view", package, "versions", "--json"], capture_output=True, text=True, timeout=300)
    try:
        listed = json.loads(proc.stdout) if proc.returncode == 0 else None
    except ValueError:
        listed = None
    if not isinstance(listed, list):
        raise ReleaseSpecError(f"npm lists no releases of {package}: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return [str(v) for v in listed]


def newest_patches(versions: list[str]) -> list[str]:
    """Each (major, minor) series' newest release, oldest series first."""
    newest: dict[tuple[int, int], Version] = {}
    for text in versions:
        v = Version(text)
        key = (v.major, v.minor)
        if key not in newest or v > newest[key]:
            newest[key] = v
    return [str(newest[k]) for k in sorted(newest)]


def resolve(name: str, spec: str, available: tuple[str, ...] | None = None) -> list[str]:
    """The releases ``spec`` names for framework ``name``, oldest first.

    A list without comparison operators is taken as written (each must parse as a version); a specifier such as
    ``>=1.16`` or ``>=2023.0,<2026.5`` picks each minor series' newest patch among the index's releases inside it.
    ``available`` replaces the index (tests).
    """
    if not _OPERATORS.search(spec):
        out = [s.strip() for s in spec.split(",") if s.strip()]
        for text in out:
            try:
                Version(text)
            except InvalidVersion as exc:
                raise ReleaseSpecError(f"{text!r} is not a release number") from exc
        if not out:
            raise ReleaseSpecError("the release list is empty")
        return sorted(out, key=Version)
    try:
        specifier = SpecifierSet(spec)
    except InvalidSpecifier as exc:
        raise ReleaseSpecError(f"{spec!r} is neither a release list nor a version range: {exc}") from exc
    rules = framework(name)
    releases = available if available is not None else index_versions(rules.distribution, rules.registry)
    inside = [v for v in releases if Version(v) in specifier]
    if not inside:
        raise ReleaseSpecError(f"no release of {framework(name).distribution} matches {spec!r}")
    return newest_patches(inside)
