"""What a release of each framework needs in its environment: the one table of distribution names, companion
packages and the limits old wheels put on their neighbours.

Old wheels were built against NumPy 1.x and fail to import under NumPy 2 (``numpy.core.multiarray failed to
import``); old ONNX runtimes reject models of a newer IR version than they know. Each rule names the first release
that no longer needs it, so the table reads as the frameworks' own release notes do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import Version


@dataclass(frozen=True)
class Framework:
    """How to install one framework's releases: its distribution, what runs beside it, and the release limits."""

    distribution: str  # what `pip install <distribution>==<release>` installs (tensorflow-cpu: no CUDA libraries)
    module: str  # the module the adapter imports, whose __version__ a working environment reports
    extra: tuple[str, ...] = ()  # companion packages, every release (onnx: the adapters build ONNX models)
    numpy2_since: str | None = None  # the first release built against NumPy 2; older ones get numpy<2
    ir_version_before: tuple[tuple[str, int], ...] = ()  # (first release that accepts IR 10, the IR before it)
    requirement: str = "{distribution}=={release}"  # how one release is pinned (jax needs its jaxlib)
    pinned: tuple[str, ...] = field(default=())  # extra requirements every release needs whatever its age
    # Python that must run in a working environment: importing the module, and reaching the API the adapter calls
    # (a release without it is recorded as import-failed with the reason, not run into a column of errors).
    check: str = ""

    def check_code(self) -> str:
        """The import check's code (the module imported, then ``check``)."""
        return f"import {self.module}" + (f"; {self.check}" if self.check else "")


FRAMEWORKS: dict[str, Framework] = {
    # onnxruntime 1.19 is the first built against NumPy 2 (release notes); 1.16/1.17 know IR 9 at most
    # ("Unsupported model IR version: 10, max supported IR version: 9"), 1.18 knows IR 10.
    "onnxruntime": Framework("onnxruntime", "onnxruntime", extra=("onnx==1.23.2",), numpy2_since="1.19.0",
                             ir_version_before=(("1.18.0", 9),)),
    # OpenVINO: NumPy 2 from 2024.3; its ONNX frontend reads IR 10 models in every release swept here.
    # Its top-level API (ov.Core, ov.__version__), which the adapter calls, exists from 2023.1 on.
    "openvino": Framework("openvino", "openvino", extra=("onnx==1.23.2",), numpy2_since="2024.3.0",
                          check="openvino.Core; openvino.__version__"),
    # tensorflow-cpu is the CPU-only wheel of the same release; NumPy 2 from 2.18.
    "tensorflow": Framework("tensorflow-cpu", "tensorflow", numpy2_since="2.18.0"),
    # jax's [cpu] extra brings the jaxlib of the same release; NumPy 2 from 0.4.27.
    "jax": Framework("jax", "jax", numpy2_since="0.4.27", requirement="jax[cpu]=={release}"),
    # MXNet 1.x never moved past NumPy 1.23 (np.bool and friends were removed in 1.24).
    "mxnet": Framework("mxnet", "mxnet", pinned=("numpy<1.24",)),
    # torch from the package index is a CUDA build of several GB; only the pinned CPU wheel is on this disk.
    # torch.compile's inductor builds its kernels with setuptools' compiler helpers, which uv environments lack
    # (2.9: "No module named 'setuptools'").
    "torch": Framework("torch", "torch", extra=("setuptools",), numpy2_since="2.3.0"),
}
# Every environment also needs what the harness's worker side imports: NumPy and ml_dtypes (harness/cases/dtypes.py).
WORKER = ("ml_dtypes",)


def framework(name: str) -> Framework:
    """The install rules of ``name``; a KeyError names the frameworks that have some."""
    if name not in FRAMEWORKS:
        raise KeyError(f"no release rules for {name!r}; known: {', '.join(FRAMEWORKS)}")
    return FRAMEWORKS[name]


def requirements(name: str, release: str) -> list[str]:
    """The requirement strings of one release's environment: the framework pinned, its companions, NumPy's limit."""
    fw = framework(name)
    out = [fw.requirement.format(distribution=fw.distribution, release=release), *fw.extra, *WORKER, *fw.pinned]
    if fw.numpy2_since and Version(release) < Version(fw.numpy2_since):
        out.append("numpy<2")
    elif not any(r.startswith("numpy") for r in fw.pinned):
        out.append("numpy")
    return out


def environment(name: str, release: str) -> dict[str, str]:
    """Variables a run of this release needs (the ONNX IR version an old runtime accepts)."""
    for first_release, ir in framework(name).ir_version_before:
        if Version(release) < Version(first_release):
            from adapters.onnx_graph import IR_VERSION_ENV

            return {IR_VERSION_ENV: str(ir)}
    return {}
