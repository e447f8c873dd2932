"""The floor of the overhead benchmark, run by execnet inside the framework's own interpreter (any project venv).

Messages: ("prepare", adapter, [(variant, payload), ...]) builds every native call (sessions, compiled models)
and runs each once, answering which ran without error; ("keep", [i, ...]) keeps those; ("loop",) answers the
seconds one plain loop of ``adapter.to_numpy(call.run())`` over the kept calls takes; ("per_case",) the seconds of
each call; ("stats",) the adapter's compiled-model cache counters (hits, misses) where it has them. For the matrix:
("import", adapter) answers the seconds ``adapter.warm()`` takes in this fresh
process; ("direct", adapter, [(variant, payload), ...]) the seconds of preparing and running each item (its
``repeat`` times) as a script calling the framework directly would; an item the framework rejects still counts.
``channel`` is execnet's; this file is sent as source, with __ROOT__ replaced by the project root.
"""

import sys
import time

sys.path.insert(0, __ROOT__)  # noqa: F821  (replaced before the source is sent)

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.vocab import wire

_calls = []
_adapter = None


def _prepare(name, items):
    global _adapter, _calls
    _adapter = adapters.get(name)
    _adapter.warm()
    _calls, ok = [], []
    for variant, payload in items:
        case = _case(payload)
        try:
            call = _adapter.prepare(case, variant)
            _adapter.to_numpy(call.run())
            _calls.append(call)
            ok.append(True)
        except Exception:
            _calls.append(None)
            ok.append(False)
    return ok


def _case(payload):
    return CaseData(op=payload["op"], inputs={k: wire.decode(v) for k, v in payload["inputs"].items()},
                    attrs=payload["attrs"], opset=payload.get("opset"), omit=tuple(payload.get("omit") or ()))


def _import(name):
    start = time.perf_counter()
    adapters.get(name).warm()
    return time.perf_counter() - start


def _direct(name, items):
    adapter = adapters.get(name)
    cases = [(variant, _case(payload), int(payload.get("repeat") or 1)) for variant, payload in items]
    start = time.perf_counter()
    for variant, case, repeat in cases:
        try:
            call = adapter.prepare(case, variant)
            for _ in range(repeat):
                adapter.to_numpy(call.run())
        except Exception:
            pass
    return time.perf_counter() - start


def _loop():
    to_numpy = _adapter.to_numpy
    start = time.perf_counter()
    for call in _calls:
        to_numpy(call.run())
    return time.perf_counter() - start


def _per_case():
    out = []
    for call in _calls:
        start = time.perf_counter()
        _adapter.to_numpy(call.run())
        out.append(time.perf_counter() - start)
    return out


while True:
    msg = channel.receive()  # noqa: F821  (execnet's)
    if msg is None:
        break
    try:
        if msg[0] == "prepare":
            reply = _prepare(msg[1], msg[2])
        elif msg[0] == "keep":
            _calls = [_calls[i] for i in msg[1]]
            reply = len(_calls)
        elif msg[0] == "import":
            reply = _import(msg[1])
        elif msg[0] == "direct":
            reply = _direct(msg[1], msg[2])
        elif msg[0] == "stats":
            cache = getattr(_adapter, "cache", None)  # adapters.cache.LRU where the adapter compiles per signature
            reply = (cache.hits, cache.misses) if cache is not None else (None, None)
        elif msg[0] == "loop":
            reply = _loop()
        else:
            reply = _per_case()
    except Exception as exc:
        reply = {"error": repr(exc)}
    channel.send(reply)  # noqa: F821
