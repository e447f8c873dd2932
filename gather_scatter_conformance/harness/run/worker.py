"""The side of a run that touches a framework: decode a case, make the native call, encode what happened.

It runs either in the pytest process or in a worker interpreter reached through execnet (another virtual
environment, e.g. MXNet's with numpy<1.24). It only needs numpy and the adapters package, so it works there too.
"""

from __future__ import annotations

import os
import platform
import time
import traceback
from typing import Any

from gather_scatter_conformance.vocab import wire

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


def run_forked(adapter_name: str, variant: str, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run one case in a forked child of the adapter's template (harness.run.forkrun.Template.run's answer).

    ``{"fallback": reason}`` when there is no usable template; the caller then runs the case another way.
    """
    template = _TEMPLATES.get(adapter_name)
    if template is None:
        return {"fallback": "no template process"}
    answer = template.run((adapter_name, variant, payload), timeout)
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


def run_case(adapter_name: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Run one case through one adapter variant; never raises for framework errors, it reports them.

    Returns a dict of builtins: outcome (ok | error | unsupported | skipped), api, device, framework_version,
    duration_s, and either ``value`` (an encoded array) or ``error_type``/``error_message``. ``skipped`` (with a
    ``reason``) means the requested device is absent here: no result at all, not a framework's answer.
    """
    from gather_scatter_conformance import adapters
    from gather_scatter_conformance.adapters.base import NOT_MAPPED, CaseData, NoDevice, Unsupported, not_mapped

    adapter = adapters.get(adapter_name)
    case = CaseData(
        op=payload["op"],
        inputs={k: wire.decode(v) for k, v in payload["inputs"].items()},
        attrs=payload["attrs"],
        opset=payload.get("opset"),
        omit=tuple(payload.get("omit") or ()),
        device=payload.get("device") or "cpu",
        progress=payload.get("progress"),
    )
    result: dict[str, Any] = {
        "api": "",
        "device": case.device,
        "framework_version": _version(adapter_name),
        "python": platform.python_version(),
    }
    if case.device not in adapter.devices:
        return {**result, "outcome": "skipped", "reason": f"{adapter_name} has no {case.device} path"}
    if variant == NOT_MAPPED and not adapter.variants(case.op):
        return {**result, "outcome": "unsupported", "reason": not_mapped(adapter_name, case.op), "duration_s": 0.0}
    try:
        call = adapter.prepare(case, variant)
    except NoDevice as exc:
        return {**result, "outcome": "skipped", "reason": str(exc)}
    except Unsupported as exc:
        return {**result, "outcome": "unsupported", "reason": str(exc), "duration_s": 0.0}
    except Exception as exc:  # a framework that rejects the case while building it: a result, not a crash
        return {**result, **_error(exc), **_described(adapter, case, variant), "duration_s": 0.0}
    result.update(api=call.api, device=call.device, device_name=call.device_name, source=call.source)
    start = time.perf_counter()
    distinct = 1
    try:
        raw = call.run()
        value = adapter.to_numpy(raw)
        repeat = int(payload.get("repeat") or 1)
        if repeat > 1:
            # Repeated runs compared bitwise: a scatter with duplicate targets may answer differently each time.
            seen = {_digest(value)}
            for _ in range(repeat - 1):
                seen.add(_digest(adapter.to_numpy(call.run())))
            distinct = len(seen)
    except NoDevice as exc:
        return {**result, "outcome": "skipped", "reason": str(exc)}
    except Unsupported as exc:
        return {**result, **call.facts, "outcome": "unsupported", "reason": str(exc),
                "duration_s": time.perf_counter() - start}
    except Exception as exc:
        return {**result, **call.facts, **_error(exc), "duration_s": time.perf_counter() - start}
    result.update(call.facts)
    elapsed = time.perf_counter() - start
    return {**result, "outcome": "ok", "value": wire.encode(value), "duration_s": elapsed, "distinct_outputs": distinct}


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
    from gather_scatter_conformance.adapters.base import CaseData

    case = CaseData(op=payload["op"], inputs={k: wire.decode(v) for k, v in payload["inputs"].items()},
                    attrs=payload["attrs"], opset=payload.get("opset"), omit=tuple(payload.get("omit") or ()),
                    device=payload.get("device") or "cpu")
    try:
        api, source = adapters.get(adapter_name).describe(case, variant)
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
        "error_type": f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins."),
        "error_message": message,
        "error_where": f"{frame.filename}:{frame.lineno}" if frame else "",
    }
