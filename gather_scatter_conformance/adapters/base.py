"""The adapter interface: how a framework module turns a case into one native call.

An adapter can do three things with a case: say it cannot be expressed in the framework's API (raise
:class:`Unsupported`), return the native output, or let the framework raise. Attribute translation belongs in
the adapter; nothing about a case hides in it.

Adapter modules import their framework lazily (inside methods), so that collecting tests imports no framework.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np


class Unsupported(Exception):
    """The case cannot be expressed in this framework's API at all (not: the framework rejects the input).

    ``device``: where the case would have run, when that is not the device the run asked for (ONNX Runtime with
    its OpenVINO provider records ``openvino``): the record is then filed with that device's cells.
    """

    def __init__(self, *args: object, device: str | None = None) -> None:
        super().__init__(*args)
        self.device = device


class NoDevice(Exception):
    """The requested device does not exist here (no GPU, no CUDA build): the test is skipped, nothing is recorded."""


class NativeCrash(Exception):
    """The runtime's own process died running the case: an adapter that drives its runtime out of process (Node for
    TensorFlow.js) raises this when that process exits mid-call. Recorded as a crash, charged to the case, with
    ``signal`` (``SIGSEGV``) where the process was killed by one."""

    def __init__(self, message: str, signal: str | None = None) -> None:
        super().__init__(message)
        self.signal = signal


API_VERSION = "1"  # the version of this contract (docs/adapter-api.md); bumped on an incompatible change
ENTRY_POINT_GROUP = "gather_scatter_conformance.adapters"  # where adapters register
DEVICES = ("cpu", "gpu")  # what ``--device`` can ask for; a record's ``device`` is one of these
NOT_MAPPED = ""  # the variant of a case whose operator the adapter does not map: recorded as unsupported


def not_mapped(adapter: str, op: str) -> str:
    """The reason recorded for a case whose operator ``adapter`` declares no variant for."""
    return f"not mapped: {adapter} declares no variant for {op}"


@dataclass
class CaseData:
    """What an adapter sees of a case: the operator, its input arrays, attributes (defaults filled), ONNX opset.

    ``omit`` names attributes the adapter must NOT pass, so the framework's own default applies (the
    default-axis probe); an adapter whose API has no default for one raises Unsupported. ``device`` is where the
    call must run ("cpu" or "gpu"); an adapter that cannot reach it here raises NoDevice. ``progress`` is a file
    where a call of several stages (a converter path) notes how far it got, for a run that dies before it returns.
    ``fresh``: the case runs in a fresh process of its own (a risky case's forked child), and a memory-unsafe or
    flipping one runs so again, four more times this run and on every later run; an adapter whose compile is cheap
    keeps what it compiles on disk for the next such process only then (adapters/tvm.py).
    """

    op: str
    inputs: dict[str, np.ndarray]
    attrs: dict[str, Any]
    opset: int | None = None
    omit: tuple[str, ...] = ()
    device: str = "cpu"
    progress: str | None = None
    fresh: bool = False


@dataclass
class Call:
    """A prepared native call: ``api`` is the exact call as a user would type it; ``run`` performs it.

    ``device`` is where it runs ("cpu" or "gpu"); ``device_name`` says which one (e.g. the GPU's model).
    ``source`` is the same call as standalone Python statements for a repro script (harness.run.repro): given NumPy
    arrays named ``data``, ``indices`` (and ``updates``) and ``np``, they import the framework, convert the inputs
    to its own tensors (or build its model), make the call and assign the output, as a NumPy array, to ``result``.
    It is written next to the code that runs the call, so the two say the same thing.

    ``facts`` is what the run learns about itself, filled in by ``run`` and recorded whatever its outcome (builtins
    only): ``ops``, the operators of the graph the runtime executed as it names them (``["GATHER_ND"]``), for
    adapters that compile or convert a model; ``conversion``, a converter path's account (adapters/convert);
    ``providers`` and ``fallback``, which backend executed each operator (:func:`delegation`); ``mutates_inputs``,
    the inputs (``data``, ``updates``...) whose caller-side arrays the call wrote into, compared before and after.
    """

    api: str
    run: Callable[[], Any]
    device: str = "cpu"
    device_name: str = ""
    source: str = ""
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReleaseRules:
    """How to install one release of an adapter's framework for a release sweep (``gsc history``): its
    distribution, what runs beside it, and the limits old wheels put on their neighbours.

    Old wheels were built against NumPy 1.x and fail to import under NumPy 2; old ONNX runtimes reject models of a
    newer IR version than they know. Each rule names the first release that no longer needs it.

    Companions (``extra``) are the same for every release unless ``companions_before`` says otherwise: a companion
    that must match the release (a native library it links against: TVM's ``apache-tvm-ffi``, whose newest build
    lacks symbols older TVM releases call) gets one rule per range, ``(first release that no longer needs it,
    requirement)``, oldest first. For each distribution the first rule newer than the release applies, and its
    requirement replaces that distribution's entry in ``extra`` (harness/history/pins.py: ``companions``). A
    companion that is a tool the adapter builds its models with, not part of the runtime under test, stays pinned
    at the project's release: LiteRT's environments all get the pinned TensorFlow as the TFLite converter, so each
    release runs the same flatbuffers and a label that changes is the runtime's.
    """

    distribution: str  # what `pip install <distribution>==<release>` installs (tensorflow-cpu: no CUDA libraries)
    module: str  # the module the adapter imports, whose __version__ a working environment reports ("" for npm)
    # companion packages, every release (onnx: the adapters build ONNX models); ``{release}`` in one is the release
    # swept (a companion released in lockstep: iree-base-runtime beside iree-base-compiler)
    extra: tuple[str, ...] = ()
    numpy2_since: str | None = None  # the first release built against NumPy 2; older ones get numpy<2
    ir_version_before: tuple[tuple[str, int], ...] = ()  # (first release that accepts IR 10, the IR before it)
    requirement: str = "{distribution}=={release}"  # how one release is pinned (jax needs its jaxlib)
    # (first release that no longer needs it, requirement), oldest first: a companion of older releases, replacing
    # the same distribution's entry in extra (tvm: the apache-tvm-ffi its native libraries were built against)
    companions_before: tuple[tuple[str, str], ...] = ()
    pinned: tuple[str, ...] = ()  # extra requirements every release needs whatever its age
    # distributions the release brings with it, not named above, whose versions its records keep (jax: the jaxlib
    # its [cpu] extra resolves; executorch: the torch its release requires)
    reported: tuple[str, ...] = ()
    # Python that must run in a working environment: importing the module, and reaching the API the adapter calls
    # (a release without it is recorded as import-failed with the reason, not run into a column of errors); for an
    # npm framework, JavaScript that Node runs in the release's folder.
    check: str = ""
    # Where releases come from: "pypi" (a virtual environment per release), or "npm" (a folder per release where
    # npm installs ``distribution@release`` and ``extra``; the harness's own interpreter runs the cases, with
    # ``folder_env`` naming the folder to the adapter: TensorFlow.js's GSC_TFJS_DIR)
    registry: str = "pypi"
    folder_env: str = ""

    def check_code(self) -> str:
        """The import check's code (the module imported, then ``check``; an npm framework's ``check`` alone)."""
        if self.registry == "npm":
            return self.check
        return f"import {self.module}" + (f"; {self.check}" if self.check else "")


class Adapter:
    """Base class of adapters: the public contract (docs/adapter-api.md, version :data:`API_VERSION`).

    An adapter declares its facts once, as class attributes read without importing its framework, and implements
    :meth:`version` and :meth:`prepare`. It is registered by an entry point in the group
    ``gather_scatter_conformance.adapters`` (``name = "package.module:ADAPTER"``), the built-in ones included.
    """

    name: str = ""  # the name runs, records, baselines and known files use (``--framework NAME``)
    # Top-level modules that must be importable for the adapter to run (its framework first); nothing is imported
    # to find out.
    requires: tuple[str, ...] = ()
    # A distribution that must be installed besides (onnxruntime-directml installs the same `onnxruntime` module as
    # onnxruntime); None: the modules suffice.
    distribution: str | None = None
    extra: str = ""  # the extra of gather-scatter-conformance that installs the framework ("" where none does)
    devices: tuple[str, ...] = ("cpu",)  # the devices this adapter can target (known without importing anything)
    # True: even the default variant is slow, and runs only on focus cases (probes, regressions, seed examples)
    # unless --slow-variants all; converter paths are (adapters/convert).
    focus_only: bool = False
    # Operator -> its API variants, the first the default. An operator the adapter does not declare is not mapped:
    # its cases are recorded as unsupported ("not mapped"), never as errors.
    VARIANTS: ClassVar[Mapping[str, Sequence[str]]] = {}
    # Operator -> its variants whose API has no data input: it scatters into zeros of a given shape (tf.scatter_nd),
    # so it expresses only cases whose data is all zeros (Unsupported otherwise), and what its uncovered places
    # hold is those zeros, not data it kept (harness.judge.classify labels them zero-fill, not keep-data).
    NO_DATA_INPUT: ClassVar[Mapping[str, Sequence[str]]] = {}
    # True: a forked child of a worker that has already run cases runs cases correctly (harness.run.worker warms
    # such a framework up before forking the template that runs risky cases); False: the template is forked cold.
    fork_after_run: bool = False
    releases: ReleaseRules | None = None  # how `gsc history` installs its releases; None: it cannot sweep them
    # The program the calls run in when it is not this Python process (tfjs: "node"): `gsc memcheck` follows the
    # repro script into it, since an access made there is invisible from the Python process.
    call_process: str = ""
    mapping: str = ""  # its mapping page: how each operator is called (docs/mapping/<name>.md, or a URL)

    def version(self) -> str:
        """The framework's version string."""
        raise NotImplementedError

    def unavailable(self) -> str | None:
        """Why this framework cannot run on this machine at all (no GPU, wrong OS), as one line; None when it can.

        Must import no framework and be cheap: the pytest plugin asks it before each case, in its own process, and
        skips the case with this reason, so a missing device is neither a result record nor a deviation.
        """
        return None

    def warm(self) -> None:
        """Import whatever the framework needs to run a case, so that a case's time is the case's alone."""
        self.version()

    def variants(self, op: str) -> list[str]:
        """The API variants this adapter has for ``op``, the first the default; [] where ``op`` is not mapped
        (its cases are then recorded as unsupported, "not mapped"). Must not import the framework."""
        return list(self.VARIANTS.get(op, ()))

    def has_data_input(self, op: str, variant: str) -> bool:
        """False where ``variant`` of ``op`` is an API without a data input (:attr:`NO_DATA_INPUT`: it builds the
        output from zeros); True otherwise. Must not import the framework."""
        return variant not in self.NO_DATA_INPUT.get(op, ())

    def check_variant(self, op: str, variant: str) -> None:
        """Raise ValueError unless ``variant`` is one of ``variants(op)``: a caller's mistake, never the framework's
        (the harness only asks for declared variants)."""
        known = self.variants(op)
        if variant not in known:
            raise ValueError(f"{self.name} has no variant {variant!r} for {op}; "
                             f"known: {', '.join(known) or 'none (not mapped)'}")

    def worker_env(self, variant: str) -> dict[str, str]:
        """Environment variables the worker process that runs ``variant`` must have before the framework is
        imported (Keras reads ``KERAS_BACKEND`` once, at import). Variants whose environments differ run in separate
        worker processes, each set before anything is imported; {} (the default): every variant in one. Must not
        import the framework. Without process isolation (``--isolation none``) nothing is set: an adapter that needs
        its environment must then arrange it itself (or skip)."""
        return {}

    def is_slow(self, variant: str) -> bool:
        """True for variants that compile per input shape (seconds per case); runs limit them to focus cases."""
        return False

    def ahead(self, work: Iterable[tuple[CaseData, str]]) -> None:
        """Prepare, before a run, what the (case, variant) ``work`` will need and is cheaper made together than one
        case at a time (IREE compiles many cases in one module). An optimisation only: each case's ``prepare`` must
        still work, and fail, on its own. The default does nothing."""

    def prepare(self, case: CaseData, variant: str) -> Call:
        """Return the native call for ``case`` in ``variant``; raise Unsupported if the API cannot express it."""
        raise NotImplementedError

    def record_device(self, device: str) -> str:
        """The device a result of a case run on ``device`` is filed under where no call answered (its process died
        or hung), as ``prepare``'s Call would name it: ``device`` itself, unless the adapter files results by
        something the run chose (ONNX Runtime: its execution provider). Imports no framework: the run's controller
        asks it."""
        return device

    def describe(self, case: CaseData, variant: str) -> tuple[str, str]:
        """``(api, source)`` of the call ``prepare`` makes, without compiling or running anything the framework
        could crash in (asked again after a case killed its process). Raises as ``prepare`` does."""
        call = self.prepare(case, variant)
        return call.api, call.source

    def to_numpy(self, out: Any) -> np.ndarray:
        """Convert the framework's output to a NumPy array."""
        return np.asarray(out)

    def release(self) -> None:
        """Drop whatever the adapter keeps between cases (compiled models, sessions); the next case rebuilds it.

        A forked child calls this after its risky case, so memory the case corrupted is freed, and the corruption
        shows, while the child is still the case's own (gather_scatter_conformance.harness.run.forkrun).
        """


def delegation(placement: Mapping[str, str], asked: str) -> dict[str, Any]:
    """The facts a run records about who executed it, as read from the runtime after the run (never assumed):
    ``providers``, each operator (as the runtime names it) -> the backend that executed it (ONNX Runtime's execution
    provider, ExecuTorch's delegate or its portable kernels, IREE's dispatch, MNN's backend); ``fallback``, True
    where some operator ran elsewhere than on ``asked``, the backend the variant asked for; ``delegate``, ``asked``.
    Put it in :attr:`Call.facts` (``call.facts.update(delegation(...))``); the record and the report's delegation
    table show it.
    """
    placement = {str(op): str(backend) for op, backend in placement.items()}
    return {"providers": placement, "fallback": any(backend != asked for backend in placement.values()),
            "delegate": asked}


def lacks_converter(exc: BaseException, importer: str, says: str, op: str) -> Unsupported | None:
    """An :class:`Unsupported` naming ``importer`` and its own words where ``exc`` is the importer saying it has no
    converter for the ONNX operator ``op`` (``says``: a regex of that message with ``{op}`` where the op type
    stands); None for any other failure, which stays the runtime's result.

    An importer without a converter cannot express the operator at all (TVM 0.27's Relax frontend has no
    TensorScatter): that is a coverage fact, not a deviation. It is read from the importer's message at run time,
    never declared, so the release that adds the converter is measured as it behaves.
    """
    message = str(exc)
    if not re.search(says.format(op=re.escape(op)), message, re.DOTALL):
        return None
    line = next((ln.strip() for ln in message.splitlines() if op in ln), message.strip().splitlines()[0])
    return Unsupported(f"{importer} has no converter for ONNX {op}: {line[:300]}")


@contextmanager
def importing(importer: str, says: str, op: str) -> Iterator[None]:
    """Run an ONNX importer's step in this block: where it fails saying it has no converter for ``op``
    (:func:`lacks_converter`), the block raises that :class:`Unsupported`; any other failure passes unchanged."""
    try:
        yield
    except Exception as exc:
        missing = lacks_converter(exc, importer, says, op)
        if missing is not None:
            raise missing from exc
        raise


def fmt_attrs(**kwargs: Any) -> str:
    """Render keyword arguments as they appear in a repro call: ``axis=0, batch_dims=1``."""
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
