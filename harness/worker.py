"""The side of a run that touches a framework: decode a case, make the native call, encode what happened.

It runs either in the pytest process or in a worker interpreter reached through execnet (another virtual
environment, e.g. MXNet's with numpy<1.24). It only needs numpy and the adapters package, so it works there too.
"""

from __future__ import annotations

import platform
import time
import traceback
from typing import Any

from harness import wire


def describe(adapter_name: str) -> dict[str, Any]:
    """Version and interpreter facts about one adapter's framework in this process."""
    import adapters

    adapter = adapters.get(adapter_name)
    adapter.warm()
    return {"framework_version": str(adapter.version()), "python": platform.python_version()}


def run_case(adapter_name: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Run one case through one adapter variant; never raises for framework errors, it reports them.

    Returns a dict of builtins: outcome (ok | error | unsupported | skipped), api, device, framework_version,
    duration_s, and either ``value`` (an encoded array) or ``error_type``/``error_message``. ``skipped`` (with a
    ``reason``) means the requested device is absent here: no result at all, not a framework's answer.
    """
    import adapters
    from adapters.base import CaseData, NoDevice, Unsupported

    adapter = adapters.get(adapter_name)
    case = CaseData(
        op=payload["op"],
        inputs={k: wire.decode(v) for k, v in payload["inputs"].items()},
        attrs=payload["attrs"],
        opset=payload.get("opset"),
        omit=tuple(payload.get("omit") or ()),
        device=payload.get("device") or "cpu",
    )
    result: dict[str, Any] = {
        "api": "",
        "device": case.device,
        "framework_version": str(adapter.version()),
        "python": platform.python_version(),
    }
    if case.device not in adapter.devices:
        return {**result, "outcome": "skipped", "reason": f"{adapter_name} has no {case.device} path"}
    try:
        call = adapter.prepare(case, variant)
    except NoDevice as exc:
        return {**result, "outcome": "skipped", "reason": str(exc)}
    except Unsupported as exc:
        return {**result, "outcome": "unsupported", "reason": str(exc), "duration_s": 0.0}
    except Exception as exc:  # a framework that rejects the case while building it: a result, not a crash
        return {**result, **_error(exc), "duration_s": 0.0}
    result.update(api=call.api, device=call.device, device_name=call.device_name)
    start = time.perf_counter()
    distinct = 1
    try:
        raw = call.run()
        value = adapter.to_numpy(raw)
        # Repeated runs compared bitwise: a scatter with duplicate targets may answer differently each time.
        seen = {_digest(value)}
        for _ in range(int(payload.get("repeat") or 1) - 1):
            seen.add(_digest(adapter.to_numpy(call.run())))
        distinct = len(seen)
    except NoDevice as exc:
        return {**result, "outcome": "skipped", "reason": str(exc)}
    except Unsupported as exc:
        return {**result, "outcome": "unsupported", "reason": str(exc), "duration_s": time.perf_counter() - start}
    except Exception as exc:
        return {**result, **_error(exc), "duration_s": time.perf_counter() - start}
    elapsed = time.perf_counter() - start
    return {**result, "outcome": "ok", "value": wire.encode(value), "duration_s": elapsed, "distinct_outputs": distinct}


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
