"""What a release of each framework needs in its environment: each adapter's ReleaseRules (its distribution,
companion packages and the limits old wheels put on their neighbours), turned into requirements.

Old wheels were built against NumPy 1.x and fail to import under NumPy 2 (``numpy.core.multiarray failed to
import``); old ONNX runtimes reject models of a newer IR version than they know; old TVM releases link against an
apache-tvm-ffi older than the newest (``companions_before``: a companion that depends on the release). Each rule
names the first release that no longer needs it, so the table reads as the frameworks' own release notes do.
"""

from __future__ import annotations

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.base import ReleaseRules

# Every environment also needs what the harness's worker side imports: NumPy and ml_dtypes (harness/cases/dtypes.py).
WORKER = ("ml_dtypes",)


def sweepable() -> list[str]:
    """The registered adapters whose releases can be swept (they declare ReleaseRules)."""
    return [n for n in adapters.names() if not adapters.is_path(n) and adapters.get(n).releases is not None]


def framework(name: str) -> ReleaseRules:
    """The install rules of ``name`` (its adapter's ``releases``); a KeyError names the frameworks that have some."""
    rules = adapters.get(name).releases if name in adapters.table() else None
    if rules is None:
        raise KeyError(f"no release rules for {name!r}; known: {', '.join(sweepable())}")
    return rules


def distribution_of(requirement: str) -> str:
    """The normalized distribution name a requirement string names (``apache_tvm_ffi<0.1.13`` -> apache-tvm-ffi)."""
    return canonicalize_name(Requirement(requirement).name)


def companions(name: str, release: str) -> list[str]:
    """The companions of ``name``==``release``: its rules' ``extra`` (``{release}`` in one is the release: a
    companion released in lockstep, as IREE's runtime is with its compiler), where each distribution that
    ``companions_before`` names for an older release takes the first of those rules newer than ``release`` (the
    rules are oldest first), in place of its ``extra`` entry or beside the others where ``extra`` has none."""
    fw = framework(name)
    chosen: dict[str, str] = {}
    for first_release, requirement in fw.companions_before:
        if Version(release) < Version(first_release):
            chosen.setdefault(distribution_of(requirement), requirement)
    out = [chosen.pop(distribution_of(r), r) for r in (r.format(release=release) for r in fw.extra)]
    return out + list(chosen.values())


def requirements(name: str, release: str) -> list[str]:
    """The requirement strings of one release's environment: the framework pinned, its companions, NumPy's limit
    (an npm framework's: ``package@version`` for the framework and each companion)."""
    fw = framework(name)
    if fw.registry == "npm":
        return [f"{fw.distribution}@{release}", *(r.format(release=release) for r in fw.extra)]
    out = [fw.requirement.format(distribution=fw.distribution, release=release), *companions(name, release),
           *WORKER, *fw.pinned]
    if fw.numpy2_since and Version(release) < Version(fw.numpy2_since):
        out.append("numpy<2")
    elif not any(r.startswith("numpy") for r in fw.pinned):
        out.append("numpy")
    return out


def environment(name: str, release: str) -> dict[str, str]:
    """Variables a run of this release needs (the ONNX IR version an old runtime accepts)."""
    for first_release, ir in framework(name).ir_version_before:
        if Version(release) < Version(first_release):
            from gather_scatter_conformance.adapters.onnx_graph import IR_VERSION_ENV

            return {IR_VERSION_ENV: str(ir)}
    return {}
