"""onnxruntime: a one-node ONNX model per case, run by ``onnxruntime.InferenceSession``.

Variants are ONNX operator versions (newest first, :data:`adapters.onnx_graph.VERSIONS`): ``Gather-13`` means the
node is resolved as that version of the operator (Take's are Gather's, which it is translated to). The deprecated
``Scatter`` op (ScatterElements' ancestor) is offered as ``Scatter-11`` and ``Scatter-9``.
Sessions are cached by signature (op, version, attributes, input shapes and dtypes, providers, threads): cases that
differ only in values reuse one session; the session is created lazily inside ``Call.run`` so that a model
onnxruntime rejects is a recorded error with its ``api`` string, not an exception from ``prepare``.

Execution providers: CPU by default; ``GSC_ORT_PROVIDERS`` (comma-separated; the pytest option
``--gsc-ort-providers`` sets it) selects others. A provider that is not installed is a usage error naming the
installed ones (:func:`provider_problem`), never a silent run on CPU. Where providers other than CPU run, the record
says which provider ran each node (``providers``, from the session's graph assignment) and whether any node fell
back to another provider than the first requested (``fallback``). A ``--device gpu`` run uses the CUDA (else ROCm)
provider of an onnxruntime-gpu install, and never a silent CPU fallback: a session that would fall back skips the
test (no GPU here).
Sessions run with one intra-op thread (``GSC_ORT_THREADS`` overrides; 0 is onnxruntime's default, one per physical
core): a per-session thread pool costs far more than the one-node model itself, 256 cached sessions would each hold
one, and a single thread makes the order of duplicate-index writes deterministic.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.base import (
    Adapter,
    Call,
    CaseData,
    NoDevice,
    ReleaseRules,
    Unsupported,
    delegation,
)
from gather_scatter_conformance.adapters.cache import LRU
from gather_scatter_conformance.vocab import variants
from gather_scatter_conformance.vocab.dimensions import DUPLICATE_TARGET_OPS

PROVIDERS_ENV = "GSC_ORT_PROVIDERS"
THREADS_ENV = "GSC_ORT_THREADS"
CACHE_SIZE = 256
# Case operator -> the deprecated ONNX operator also offered, after the current one's versions (Scatter-11, Scatter-9:
# ScatterElements' ancestor).
_DEPRECATED = {"ScatterElements": "Scatter"}
# Provider -> the device recorded for results.
_DEVICES = {
    "CPUExecutionProvider": "cpu",
    "CUDAExecutionProvider": "gpu",
    "TensorrtExecutionProvider": "gpu",
    "ROCMExecutionProvider": "gpu",
    "MIGraphXExecutionProvider": "gpu",
    "DmlExecutionProvider": "gpu",
    "OpenVINOExecutionProvider": "openvino",
    "CoreMLExecutionProvider": "coreml",
}
_RESHAPE_SHAPE_INPUT = 5  # Reshape takes its shape as an input since Reshape-5 (Reshape-1 had an attribute)


def variant_target(op: str, variant: str) -> tuple[str | None, int]:
    """(ONNX op type override or None, operator version) that ``variant`` of ``op`` names (``Gather-13``)."""
    if variant not in _variants(op):
        raise ValueError(f"unknown onnxruntime variant {variant!r} for {op}; expected one of {_variants(op)}")
    onnx_type, version = variants.op_version(variant) or ("", 0)  # every variant is an operator version
    return (None if onnx_type == _onnx_type(op) else onnx_type), version


def _onnx_type(op: str) -> str:
    return onnx_graph.ONNX_TYPE.get(op, op)


def _variants(op: str) -> list[str]:
    """``<OnnxOp>-<N>`` for every version of the operator ``op`` becomes (newest, the default, first), then those of
    its deprecated ancestor; [] for an operator no ONNX node is built for (not mapped)."""
    types = [_onnx_type(op)] + ([_DEPRECATED[op]] if op in _DEPRECATED else [])
    versions = [f"{t}-{v}" for t in types for v in sorted(onnx_graph.VERSIONS.get(t, ()), reverse=True)]
    # The newest version again with the indices an initializer (index provenance, onnx_graph.CONSTANT), and with
    # symbolic input dimensions (dynamic shapes, onnx_graph.dynamic_shapes).
    if not versions:
        return []
    threads = [variants.twin(versions[0], variants.THREADS_MODE)] if op in DUPLICATE_TARGET_OPS else []
    return versions + variants.twins(versions[0]) + threads


_GPU_PROVIDERS = ("CUDAExecutionProvider", "ROCMExecutionProvider")  # what a --device gpu run picks, in order


def requested_providers() -> list[str]:
    """The execution providers GSC_ORT_PROVIDERS asks for, in priority order ([] where it is unset)."""
    return [p.strip() for p in os.environ.get(PROVIDERS_ENV, "").split(",") if p.strip()]


def provider_problem(requested: list[str], available: list[str]) -> str | None:
    """One line naming the ``requested`` providers that are not among the ``available`` ones, and those; None when
    every one is available."""
    missing = [p for p in requested if p not in available]
    if not missing:
        return None
    return (f"execution provider{'s' * (len(missing) > 1)} {', '.join(missing)} not available in this onnxruntime; "
            f"available: {', '.join(available)}")


def available_providers(python: str) -> list[str]:
    """``onnxruntime.get_available_providers()`` of the interpreter ``python`` (asked in a subprocess, so the
    caller imports no onnxruntime and asks the one its cases will run on). RuntimeError says why it cannot tell."""
    import subprocess

    code = "import onnxruntime; print(','.join(onnxruntime.get_available_providers()))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"cannot list onnxruntime's execution providers with {python}: {last}")
    return [p for p in done.stdout.strip().split(",") if p]


def providers(device: str = "cpu") -> list[str]:
    """The execution providers for ``device``: those requested through GSC_ORT_PROVIDERS that run on it; else CPU
    for "cpu", and the first installed of CUDA, ROCm for "gpu" (NoDevice when none is). ValueError
    (:func:`provider_problem`'s line) where a requested provider is not installed."""
    requested = requested_providers()
    problem = provider_problem(requested, sorted(_available())) if requested else None
    if problem:
        raise ValueError(problem)
    chosen = _chosen(requested, device)
    if chosen:
        return chosen
    if device == "cpu":
        return ["CPUExecutionProvider"]
    gpu = [p for p in _GPU_PROVIDERS if p in _available()]
    if not gpu:
        import onnxruntime as ort

        raise NoDevice(f"onnxruntime {ort.__version__} has no GPU execution provider (available: "
                       f"{', '.join(sorted(_available()))}); install onnxruntime-gpu")
    return gpu[:1]


def _chosen(requested: list[str], device: str) -> list[str]:
    """The ``requested`` providers that run on ``device`` (the GPU ones for "gpu", the others for any other)."""
    return [p for p in requested if (device_of(p) == "gpu") == (device == "gpu")]


@functools.cache
def _available() -> frozenset[str]:
    import onnxruntime as ort

    return frozenset(ort.get_available_providers())


def threads() -> int:
    """Intra-op threads per session from GSC_ORT_THREADS (default 1; 0 lets onnxruntime pick, one per core)."""
    return int(os.environ.get(THREADS_ENV, "1"))


def device_of(provider: str) -> str:
    """The device name recorded for results run on ``provider`` ("cpu", "gpu", "openvino", ...)."""
    return _DEVICES.get(provider, provider.removesuffix("ExecutionProvider").lower())


def build_model(case: CaseData, onnx_type: str | None, held: tuple[str, ...] = (),
                dynamic: bool = False) -> tuple[Any, str, tuple[Any, ...]]:
    """(ModelProto, node description, the operator part of the cache key) for ``case``; the inputs named in
    ``held`` are initializers, and their values part of the key; with ``dynamic`` the inputs' dimensions are
    symbolic."""
    op, version, attrs = onnx_graph.onnx_op(case, onnx_type)
    model, _, text = onnx_graph.build(case, onnx_type, held, dynamic)
    flat = onnx_graph.flattens(case)  # not when the axis is omitted: then the Gather node has no axis (default 0)
    if flat:
        # onnx_graph imports opset max(version, 13) for its Reshape, which silently turns Gather-1/11 into
        # Gather-13. Reshape has taken its shape as an input since version 5, so importing max(version, 5) keeps
        # the requested Gather version and a valid Reshape.
        model.opset_import[0].version = max(version, _RESHAPE_SHAPE_INPUT)
        text = f"Reshape(data, [-1]) -> {text}"
    values = tuple((n, case.inputs[n].tobytes()) for n in held if n in case.inputs)
    return model, text, (op, version, tuple(sorted(attrs.items())), flat, values, dynamic)


def variant_model(case: CaseData, variant: str) -> tuple[Any, str, tuple[Any, ...]]:
    """:func:`build_model` of ``case`` at the operator version ``variant`` names: the default (first) variant
    honours a case's own opset, the others pin their version. Raises Unsupported where ONNX cannot say the case."""
    onnx_type, version = variant_target(case.op, variant)
    target = case if variant == _variants(case.op)[0] else dataclasses.replace(case, opset=version)
    return build_model(target, onnx_type, onnx_graph.constant_inputs(variant), onnx_graph.dynamic_shapes(variant))


_RECORD_ASSIGNMENT = "session.record_ep_graph_assignment_info"  # session config key: keep each node's provider


def new_session(model: Any, provider_list: list[str], intra_op_threads: int = 1) -> Any:
    """An InferenceSession of ``model`` on ``provider_list`` with ``intra_op_threads`` intra-op threads; one that
    runs on more than the CPU provider also records which provider each node was assigned (:func:`placement`)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    if provider_list != ["CPUExecutionProvider"]:
        options.add_session_config_entry(_RECORD_ASSIGNMENT, "1")
    return ort.InferenceSession(model.SerializeToString(), sess_options=options, providers=provider_list)


def placement(session: Any, first: str) -> dict[str, Any]:
    """Which provider runs each node of ``session``: ``{"providers": {"Gather": "CPUExecutionProvider"},
    "fallback": True}`` (nodes by op type; ``fallback`` when any node runs elsewhere than on ``first``, the
    provider asked for first). Empty where this onnxruntime cannot say (no get_provider_graph_assignment_info,
    which 1.24.1 and 1.31.1 have) or the session was made without recording it."""
    if not hasattr(session, "get_provider_graph_assignment_info"):
        return {}
    nodes = {node.op_type: subgraph.ep_name for subgraph in session.get_provider_graph_assignment_info()
             for node in subgraph.get_nodes()}
    if not nodes:
        return {}
    return delegation(nodes, first)


def _is_bfloat16(arr: np.ndarray) -> bool:
    return arr.dtype.name == "bfloat16"


def _bfloat16_out(value: Any) -> np.ndarray:
    """A bfloat16 OrtValue as an ml_dtypes array: OrtValue.numpy() has no NumPy type for it, so copy its bytes."""
    import ctypes

    import ml_dtypes

    shape = tuple(value.shape())
    nbytes = value.tensor_size_in_bytes()
    if nbytes == 0:
        return np.empty(shape, dtype=ml_dtypes.bfloat16)
    raw = (ctypes.c_uint8 * nbytes).from_address(value.data_ptr())
    return np.frombuffer(bytes(raw), dtype=np.uint16).view(ml_dtypes.bfloat16).reshape(shape)


@dataclasses.dataclass
class _Plan:
    """Everything a run needs to get its session: the cache key, the model, and how to build the session."""

    key: tuple[Any, ...]
    model: Any
    providers: list[str]
    threads: int


class OnnxruntimeAdapter(Adapter):
    name = "onnxruntime"
    requires = ("onnxruntime",)
    extra = "onnxruntime"
    mapping = "docs/mapping/onnxruntime.md"
    # onnxruntime 1.19 is the first built against NumPy 2 (release notes); 1.16/1.17 know IR 9 at most
    # ("Unsupported model IR version: 10, max supported IR version: 9"), 1.18 knows IR 10.
    releases = ReleaseRules("onnxruntime", "onnxruntime", extra=("onnx==1.23.2",), numpy2_since="1.19.0",
                            ir_version_before=(("1.18.0", 9),))
    devices = ("cpu", "gpu")

    @property
    def fork_after_run(self) -> bool:  # type: ignore[override]
        """Forked after a warm-up on the CPU provider: its environment cost 0.15 s per cold child (checked on the
        pinned release). Forked cold where other providers are asked for: a child of a worker warmed up on
        OpenVINO's provider waited on a lock (a futex) until the case timed out, on every risky case (1.24.1)."""
        return all(p == "CPUExecutionProvider" for p in requested_providers())

    def __init__(self) -> None:
        # Sessions keyed by everything that shapes one but not the input values; a failed build caches nothing.
        self.cache: LRU[Any] = LRU(CACHE_SIZE)

    def version(self) -> str:
        import onnxruntime as ort

        return ort.__version__

    def variants(self, op: str) -> list[str]:
        return _variants(op)

    def is_slow(self, variant: str) -> bool:
        # a constant twin: a session per index value, not per signature; a dynamic one: a twin, run where they run
        return variants.twin_of(variant) is not None

    def record_device(self, device: str) -> str:
        # As prepare's Call: the first requested provider's device (an OpenVINO EP run files under "openvino"), so
        # a crash of that provider is not filed with the CPU provider's cells.
        chosen = _chosen(requested_providers(), device)
        return device_of(chosen[0]) if chosen else device

    def prepare(self, case: CaseData, variant: str) -> Call:
        provider_list = providers(case.device)
        # a threads twin: a thread a core where the parent has one (GSC_ORT_THREADS)
        n_threads = (os.cpu_count() or 1) if variants.threads_of(variant) else threads()
        try:
            model, text, op_key = variant_model(case, variant)
        except Unsupported as exc:  # ONNX cannot say the case: filed with the cells of the provider's device
            raise Unsupported(*exc.args, device=device_of(provider_list[0])) from exc
        signature = tuple((n, tuple(v.shape), str(v.dtype)) for n, v in case.inputs.items())
        held = onnx_graph.constant_inputs(variant)
        # the repro's variables; the model's inputs carry ONNX's names (onnx_graph)
        names = [n for n in case.inputs if n not in held]
        plan = _Plan((op_key, signature, tuple(provider_list), n_threads), model, provider_list, n_threads)
        inputs = onnx_graph.feeds(case, held)
        comment = f"  # {', '.join(provider_list)}, intra_op_num_threads={n_threads}"
        device = device_of(provider_list[0])
        session = (f"session = onnxruntime.InferenceSession(model.SerializeToString(), providers={provider_list!r}, "
                   f"sess_options=options)")
        head = [onnx_graph.model_source(model), "import onnxruntime", "options = onnxruntime.SessionOptions()",
                f"options.intra_op_num_threads = {n_threads}", session]
        facts: dict[str, Any] = {}  # filled by the run: which provider ran each node, where others than CPU run
        if not any(_is_bfloat16(v) for v in inputs.values()):
            api = f"onnxruntime.InferenceSession(model: {text}).run(None, {{{', '.join(inputs)}}}){comment}"
            source = [*head, f"result = session.run(None, {onnx_graph.feeds_source(names, case.op)})[0]"]
            return Call(api, lambda: self._session(plan, facts).run(None, inputs)[0], device,
                        source="\n".join(source), facts=facts)
        # sess.run() cannot take ml_dtypes.bfloat16 arrays ("Numpy_type 256 can't be converted to MLDataType"):
        # a user wraps the raw 16-bit words in OrtValues typed BFLOAT16 and reads the result's bytes back.
        feeds = ", ".join(
            f"{n}: OrtValue.ortvalue_from_numpy_with_onnx_type({n}.view(np.uint16), TensorProto.BFLOAT16)"
            if _is_bfloat16(v) else f"{n}: OrtValue.ortvalue_from_numpy({n})" for n, v in inputs.items())
        variables = dict(zip(inputs, names, strict=True))  # ONNX input name -> the repro's variable
        api = f"onnxruntime.InferenceSession(model: {text}).run_with_ort_values(None, {{{feeds}}}){comment}"
        source = [*head, "from onnxruntime import OrtValue",
                  *(f"{n} = np.ascontiguousarray({n}).reshape({n}.shape)" for n in names),
                  "out = session.run_with_ort_values(None, {" + ", ".join(
                      f"{n!r}: " + (f"OrtValue.ortvalue_from_numpy_with_onnx_type({variables[n]}.view(np.uint16), "
                                    "TensorProto.BFLOAT16)" if _is_bfloat16(v)
                                    else f"OrtValue.ortvalue_from_numpy({variables[n]})")
                      for n, v in inputs.items()) + "})[0]",
                  "if out.data_type() == 'tensor(bfloat16)':  # OrtValue.numpy() has no bfloat16: copy the bytes",
                  "    import ctypes",
                  "    raw = (ctypes.c_uint8 * out.tensor_size_in_bytes()).from_address(out.data_ptr())",
                  "    result = np.frombuffer(bytes(raw), np.uint16).view(ml_dtypes.bfloat16).reshape(out.shape())",
                  "else:",
                  "    result = out.numpy()"]
        return Call(api, lambda: self._run_ort_values(plan, inputs, facts), device, source="\n".join(source),
                    facts=facts)

    def _session(self, plan: _Plan, facts: dict[str, Any] | None = None) -> Any:
        """The cached session of ``plan``; ``facts`` gets its nodes' placement where others than CPU run."""
        session = self.cache.get_or_make(plan.key, lambda: self.new_session(plan))
        if facts is not None and plan.providers != ["CPUExecutionProvider"]:
            facts.update(placement(session, plan.providers[0]))
        # onnxruntime falls back to CPU (with a warning) when a requested provider fails to initialise; the
        # recorded device would then be wrong, so that is reported as an error of this run.
        used = session.get_providers()[0]
        if used != plan.providers[0] and device_of(plan.providers[0]) == "gpu" and device_of(used) == "cpu":
            raise NoDevice(f"{plan.providers[0]} is installed but could not start (no GPU here?): fell back to {used}")
        if used != plan.providers[0]:
            raise RuntimeError(f"session runs on {used}, not the requested {plan.providers[0]}")
        return session

    @staticmethod
    def new_session(plan: _Plan) -> Any:
        """The session a cache miss of ``plan`` builds."""
        return new_session(plan.model, plan.providers, plan.threads)

    def _run_ort_values(self, plan: _Plan, inputs: dict[str, np.ndarray],
                        facts: dict[str, Any] | None = None) -> np.ndarray:
        import onnxruntime as ort
        from onnx import TensorProto

        session = self._session(plan, facts)
        # OrtValues alias their arrays (no copy): `arrays` keeps every buffer alive until the run returns.
        # np.ascontiguousarray makes 0-d arrays 1-d (scalar indices became shape (1,)): keep the shape.
        arrays = {n: np.ascontiguousarray(v).reshape(v.shape) for n, v in inputs.items()}
        feeds = {
            n: ort.OrtValue.ortvalue_from_numpy_with_onnx_type(v.view(np.uint16), TensorProto.BFLOAT16)
            if _is_bfloat16(v) else ort.OrtValue.ortvalue_from_numpy(v)
            for n, v in arrays.items()
        }
        out = session.run_with_ort_values(None, feeds)[0]
        return _bfloat16_out(out) if out.data_type() == "tensor(bfloat16)" else out.numpy()

    def to_numpy(self, out: Any) -> np.ndarray:
        return np.asarray(out)

    def release(self) -> None:
        self.cache.clear()


ADAPTER = OnnxruntimeAdapter()
