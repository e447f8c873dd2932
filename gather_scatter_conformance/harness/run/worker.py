"""The side of a run that touches a framework: decode a case, make the native call, encode what happened.

It runs either in the pytest process or in a worker interpreter reached through execnet (another virtual
environment, e.g. MXNet's with numpy<1.24). It only needs numpy and the adapters package, so it works there too.
"""

from __future__ import annotations

import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from gather_scatter_conformance.harness.run import faults
from gather_scatter_conformance.vocab import wire

Notify = Callable[[str], None]  # told "start" and "done" around a case's timed part (run_case)
_VERSIONS: dict[str, str] = {}  # adapter -> framework version: asked once per process, not once per case
_TEMPLATES: dict[str, Any] = {}  # adapter -> gather_scatter_conformance.harness.run.forkrun.Template of this worker


def describe(adapter_name: str) -> dict[str, Any]:
    """Version and interpreter facts about one adapter's framework in this process."""
    from gather_scatter_conformance import adapters

    adapter = adapters.get(adapter_name)
    adapter.warm()
    return {"framework_version": _version(adapter_name), "python": platform.python_version()}


def _version(adapter_name: str) -> str:
    if adapter_name not in _VERSIONS:
        from gather_scatter_conformance import adapters

        _VERSIONS[adapter_name] = str(adapters.get(adapter_name).version())
    return _VERSIONS[adapter_name]


# Which frameworks' forked children run cases correctly even when the parent has already run one is each adapter's
# fact (Adapter.fork_after_run). For those the worker first runs a tiny case through every Gather variant, so each
# child starts with the runtime initialised. The others are forked cold: TensorFlow's and JAX's children deadlock on
# thread pools such a parent started; an OpenVINO child of one hung (1 in 5) releasing its compiled model; a LiteRT
# child of a template warmed by one converted model hung converting the next; a paddle child hung 5 in 5.


def start_template(adapter_name: str, close_fds: tuple[int, ...] = ()) -> bool:
    """Fork the template that runs this adapter's risky cases (see harness.run.forkrun); False where there is no fork.

    Must be called after :func:`describe` and before this process runs any case: a framework that has started
    its thread pools cannot run in a forked child (bar those whose adapter says fork_after_run: warmed up first).
    """
    if not hasattr(os, "fork") or adapter_name in _TEMPLATES:
        return adapter_name in _TEMPLATES
    from gather_scatter_conformance import adapters
    from gather_scatter_conformance.harness.run.forkrun import Template

    if adapters.get(adapter_name).fork_after_run:
        _warm_up(adapter_name)
    _TEMPLATES[adapter_name] = Template(run_case, release, close_fds)
    return True


def _warm_up(adapter_name: str) -> None:
    """Run one tiny in-range Gather through every Gather variant (eager, compiled...), so the framework's
    runtime and compilers are initialised before the template is forked."""
    import numpy as np

    from gather_scatter_conformance import adapters

    tiny = {"op": "Gather", "attrs": {"axis": 0, "batch_dims": 0},
            "inputs": {"data": wire.encode(np.arange(3, dtype=np.float32)), "indices": wire.encode(np.array([0]))}}
    for variant in adapters.get(adapter_name).variants("Gather"):
        try:
            run_case(adapter_name, variant, tiny)
        except Exception:
            pass  # a warm-up is an optimisation: the template works without it


def run_forked(adapter_name: str, variant: str, payload: dict[str, Any], timeout: float,
               notify: Notify | None = None) -> dict[str, Any]:
    """Run one case in a forked child of the adapter's template (harness.run.forkrun.Template.run's answer; the
    child's ``notify`` marks are passed on to ``notify``, see run_case).

    ``{"fallback": reason}`` when there is no usable template; the caller then runs the case another way.
    """
    template = _TEMPLATES.get(adapter_name)
    if template is None:
        return {"fallback": "no template process"}
    answer = template.run((adapter_name, variant, payload), timeout, notify)
    if answer is None:
        _TEMPLATES.pop(adapter_name).close()
        return {"fallback": "the template process is gone"}
    return answer


def stop_templates() -> None:
    """Stop every template this worker forked."""
    while _TEMPLATES:
        _TEMPLATES.popitem()[1].close()


def release(adapter_name: str) -> None:
    """Drop what the adapter keeps between cases (compiled models, sessions), so their memory is freed now."""
    from gather_scatter_conformance import adapters

    adapters.get(adapter_name).release()


def run_case(adapter_name: str, variant: str, payload: dict[str, Any], notify: Notify | None = None
             ) -> dict[str, Any]:
    """Run one case through one adapter variant; never raises: it reports what happened.

    ``notify("start")`` is called once the inputs are decoded, before the adapter builds the call, and
    ``notify("done")`` once the call's value is read back, before it is encoded: the case's clock (the case timeout)
    runs between the two, so carrying and decoding big inputs, and encoding a big result, are not the case's time
    (a 0.8 GB case with a 2 s limit was a "hang" though np.take took 0.9 ms). An answer that comes before "done"
    (the call raised) ends the case too.

    Returns a dict of builtins: outcome (ok | error | unsupported | skipped | harness-error), api, device,
    framework_version, duration_s, and either ``value`` (an encoded array) or ``error_type``/``error_message``.
    ``skipped`` (with a ``reason``) means the requested device is absent here: no result at all, not a framework's
    answer. ``harness-error`` (with a ``fault``: phase, where, traceback) means the harness or the adapter failed,
    not the framework (harness.run.faults draws that line): no result either.
    """
    from gather_scatter_conformance.adapters.base import NOT_MAPPED, NativeCrash, NoDevice, Unsupported, not_mapped

    result: dict[str, Any] = {"api": "", "device": payload.get("device") or "cpu",
                              "python": platform.python_version()}
    phase = "decode"
    try:
        case = _case_data(payload)
        phase = "lookup"
        adapter = _adapter(adapter_name)
        result["framework_version"] = _version(adapter_name)
    except Exception as exc:
        return {**result, **faults.fault(exc, phase), "duration_s": 0.0}
    own = _OWN[adapter_name]
    if notify is not None:
        notify("start")

    def attempt(phase: str, fn: Any, *args: Any) -> Any:
        """``fn(*args)``; an exception that is the harness's fault becomes a _Fault, the others pass as they are."""
        try:
            return fn(*args)
        except (NoDevice, Unsupported):
            raise
        except Exception as exc:
            if faults.is_harness_fault(exc, phase, own):
                raise _Fault(phase) from exc
            raise

    if case.device not in adapter.devices:
        return {**result, "outcome": "skipped", "reason": f"{adapter_name} has no {case.device} path"}
    if variant == NOT_MAPPED and not adapter.variants(case.op):
        return {**result, "outcome": "unsupported", "reason": not_mapped(adapter_name, case.op), "duration_s": 0.0}
    try:
        call = attempt("prepare", adapter.prepare, case, variant)
    except NoDevice as exc:
        return {**result, "outcome": "skipped", "reason": str(exc)}
    except Unsupported as exc:
        return {**result, "outcome": "unsupported", "reason": str(exc), "duration_s": 0.0,
                "device": exc.device or result["device"]}
    except _Fault as fault:
        return {**result, **fault.answer(), **_described(adapter, case, variant), "duration_s": 0.0}
    except Exception as exc:  # a framework that rejects the case while building it: a result, not a crash
        return {**result, **_error(exc), **_described(adapter, case, variant), "duration_s": 0.0}
    result.update(api=call.api, device=call.device, device_name=call.device_name, source=call.source)
    start = time.perf_counter()
    distinct = 1
    try:
        value = attempt("to_numpy", adapter.to_numpy, attempt("run", call.run))
        repeat = int(payload.get("repeat") or 1)
        if repeat > 1:
            # Repeated runs compared bitwise: a scatter with duplicate targets may answer differently each time.
            seen = {attempt("encode", _digest, value)}
            for _ in range(repeat - 1):
                seen.add(attempt("encode", _digest, attempt("to_numpy", adapter.to_numpy, attempt("run", call.run))))
            distinct = len(seen)
    except NoDevice as exc:
        return {**result, "outcome": "skipped", "reason": str(exc)}
    except Unsupported as exc:
        return {**result, **call.facts, "outcome": "unsupported", "reason": str(exc),
                "duration_s": time.perf_counter() - start}
    except _Fault as fault:
        return {**result, **call.facts, **fault.answer(), "duration_s": time.perf_counter() - start}
    except NativeCrash as exc:  # the runtime's own process died (Node): a crash of this case, as a dead worker's is
        return {**result, **call.facts, "outcome": "crash", "signal": exc.signal, "error_message": str(exc),
                "duration_s": time.perf_counter() - start}
    except Exception as exc:
        return {**result, **call.facts, **_error(exc), "duration_s": time.perf_counter() - start}
    result.update(call.facts)
    elapsed = time.perf_counter() - start
    if notify is not None:
        notify("done")
    try:
        encoded = wire.encode(value)
    except Exception as exc:  # a value the wire cannot carry: the harness cannot judge it
        return {**result, **faults.fault(exc, "encode"), "duration_s": elapsed}
    return {**result, "outcome": "ok", "value": encoded, "duration_s": elapsed, "distinct_outputs": distinct}


class _Fault(Exception):
    """A harness fault in ``phase``; the exception is its ``__cause__``."""

    def __init__(self, phase: str) -> None:
        super().__init__(phase)
        self.phase = phase

    def answer(self) -> dict[str, Any]:
        assert self.__cause__ is not None
        return faults.fault(self.__cause__, self.phase)


_OWN: dict[str, frozenset[str]] = {}  # adapter -> the source files that are its own code (harness.run.faults)


def _adapter(adapter_name: str) -> Any:
    """The adapter registered as ``adapter_name``, with the files of its own code noted once."""
    from gather_scatter_conformance import adapters

    adapter = adapters.get(adapter_name)
    if adapter_name not in _OWN:
        module = sys.modules.get(type(adapter).__module__)
        _OWN[adapter_name] = faults.own_files(adapter, *([module] if module else []))
    return adapter


def _case_data(payload: dict[str, Any]) -> Any:
    from gather_scatter_conformance.adapters.base import CaseData

    return CaseData(
        op=payload["op"],
        inputs={k: wire.decode(v) for k, v in payload["inputs"].items()},
        attrs=payload["attrs"],
        opset=payload.get("opset"),
        omit=tuple(payload.get("omit") or ()),
        device=payload.get("device") or "cpu",
        progress=payload.get("progress"),
        fresh=bool(payload.get("fresh")),
    )


def _described(adapter: Any, case: Any, variant: str) -> dict[str, str]:
    """The call's ``api`` and ``source`` where the adapter can say them without building it (else nothing)."""
    try:
        api, source = adapter.describe(case, variant)
    except Exception:
        return {}
    return {"api": api, "source": source}


def prepare_call(adapter_name: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The native call of a case without running it: ``{"api", "source"}`` (empty where the adapter cannot say it).

    For a case whose run killed its process: the record still names the call that did it, and its repro runs it.
    """
    from gather_scatter_conformance import adapters

    try:
        api, source = adapters.get(adapter_name).describe(_case_data(payload), variant)
    except Exception:  # Unsupported, NoDevice or a framework that rejects the case while building it
        return {"api": "", "source": ""}
    return {"api": api, "source": source}


def _digest(value: Any) -> Any:
    enc = wire.encode(value)
    return (tuple(enc["shape"]), enc.get("bytes") or tuple(enc.get("items", ())))


def _error(exc: BaseException) -> dict[str, Any]:
    message = str(exc).strip() or repr(exc)
    # Framework messages can be very long (stack dumps from C++); the first lines carry the meaning.
    if len(message) > 2000:
        message = message[:2000] + " ..."
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    return {
        "outcome": "error",
        "error_type": f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins.").replace(
            "<locals>.", ""),  # a class made in a function: its name, as a record's names are (vocab.record)
        "error_message": message,
        "error_where": f"{frame.filename}:{frame.lineno}" if frame else "",
    }
