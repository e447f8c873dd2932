"""Many cases compiled by IREE in one module, ahead of their runs (issue #38: compile once).

A compile of a one-op module costs IREE 0.4-1.5 s, most of it fixed (the pipeline and linking one executable
library), and a module of 40 functions compiles in a few times one's time. So before a run, the cases of the
``stablehlo`` and ``import_onnx`` variants are compiled in groups of one front end each (a :class:`Dialect`): each
case's one function (``@main`` of a StableHLO module, ``@case`` of what ``iree-import-onnx`` writes) is renamed
``@c<key>`` (its cache key) and the group's functions form one module. Each case still runs alone, by calling its own
function in that module, and fails alone: a group that does not compile is halved until the failing case stands
alone, and is left to compile at its own run, where its error is recorded as before.

On disk, beside the single modules (adapters/iree.py, ``<cache>/iree/``): the group's ``.vmfb`` under the group's
key, and for each case a ``<key>.ref``: the group's key, its function's name and the dispatches its function
calls, named as a module of its own names them (``c<key>_dispatch_0_...`` -> ``main_dispatch_0_...``;
``c<key>$async_dispatch_0_...`` -> ``async_dispatch_0_...``). IREE deduplicates identical executables across a
module's functions; a function whose every dispatch went to another function's executable exports none of its own,
so a case's dispatches are read from what its function calls, not from the names with its prefix: the dispatches
a record names are the ones its own module would have.

Two processes (pytest-xdist's workers) compiling ahead the same cases share the work: a group is compiled under a
lock that the other process does not wait for, it moves on to the next group.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

GROUP = 40  # functions in one module: 40 compile in about 4 times one's time (iree 3.13.0, this machine)
_REF_FORMAT = 1
_DIGEST = hashlib.sha256().digest_size


def function_name(key: str) -> str:
    """The name a case's one function gets in a group: ``c`` and its cache key."""
    return f"c{key}"


def dispatch_order(name: str) -> tuple[int, str]:
    """How a module's dispatches are listed: by their ordinal (``main_dispatch_<N>_...``), then name."""
    m = re.search(r"_dispatch_([0-9]+)", name)
    return (int(m.group(1)) if m else 0, name)


_FUNC = re.compile(r"^\s*util\.func public @(c[0-9a-f]+)(?:\$async)?\(", re.M)


@dataclass(frozen=True)
class Dialect:
    """What a front end's one-function modules look like to a group: the name of the one function (``entry``), the
    substrings of a module that may not share one (``alone_if``), and how a dispatch that the group's flow-level
    module names after ``c<key>`` (``c<key><sep><stem>dispatch_...``) is named by the case's own module
    (``<own><stem>dispatch_...``). Where ``loose``, a name read from the group's .vmfb can be another's prefix (they
    are read after the function's ``$``, so one function's ``..._elementwise`` and another's
    ``..._elementwise_2_i64`` meet in one namespace, where :func:`adapters.iree.dispatches` keeps one of the two): a
    called name then matches an exported name it is a prefix of, or that is a prefix of it."""

    entry: str
    alone_if: tuple[str, ...]
    sep: str
    stem: str
    own: str
    loose: bool = False

    def rename(self, key: str, text: str) -> str:
        """The module ``text``'s one ``@entry`` function, renamed :func:`function_name`, without its module."""
        body = text.strip()
        if body.startswith("module {") and body.endswith("}"):
            body = body[len("module {"):-1]
        renamed, count = re.subn(rf"func\.func @{self.entry}\(", f"func.func @{function_name(key)}(", body)
        if count != 1:
            raise ValueError(f"module text of {key} has {count} @{self.entry} functions, not one")
        return renamed

    def groupable(self, text: str) -> bool:
        """Whether a case's module may share a module."""
        return not any(s in text for s in self.alone_if)

    def own_name(self, exported: str) -> str:
        """A dispatch name read from a group's .vmfb (``adapters.iree.dispatches``), as the case's own module names
        it."""
        return self.own + (exported.split("_", 1)[1] if self.sep == "_" else exported)

    def calls(self, flow_text: str) -> dict[str, list[str]]:
        """Function -> the dispatch entry points it calls, from a group compiled to the flow level
        (``--compile-to=flow``), each named as the function's own module would name it. A call to another
        function's executable (IREE merged two identical ones) is named the same way, so it stays the caller's."""
        call = re.compile(rf"flow\.dispatch @[\w$.-]+::@c[0-9a-f]+{re.escape(self.sep)}({self.stem}dispatch_[\w$]+)\(")
        found: dict[str, list[str]] = {}
        starts = [(m.start(), m.group(1)) for m in _FUNC.finditer(flow_text)]
        for i, (start, name) in enumerate(starts):
            end = starts[i + 1][0] if i + 1 < len(starts) else len(flow_text)
            found.setdefault(name, []).extend(f"{self.own}{m.group(1)}" for m in call.finditer(flow_text, start, end))
        return found

    def same(self, called: str, exported: str) -> bool:
        """Whether a function's call of dispatch ``called`` is the .vmfb's export ``exported``."""
        return called == exported or (self.loose and (exported.startswith(called) or called.startswith(exported)))

    def exported(self, called: str, exports: dict[str, str]) -> str | None:
        """The backend of the export a function's call of dispatch ``called`` is (None: no such export)."""
        return exports.get(called) or next((b for e, b in exports.items() if self.same(called, e)), None)


# StableHLO (JAX's and TensorFlow's lowering): not where IREE would hoist a constant of the module (an iota, a
# constant) into the module's initializer, whose dispatches belong to no one function; not for float64 inputs, which
# IREE demotes to float32 and the runtime then refuses at the call, in a message that names the function's place in
# its module. Its dispatches are c<key>_dispatch_N_... in a group, main_dispatch_N_... alone.
STABLEHLO = Dialect("main", ("stablehlo.iota", "stablehlo.constant", "f64"), "_", "", "main_")
# What iree-import-onnx writes (torch dialect, @case, an @case$async beside it once compiled): float64 as above;
# strings, which IREE does not compile (each would fail its group, and halve it). Its dispatches are
# c<key>$async_dispatch_N_... in a group, and read as async_dispatch_N_... alone (the name after ``case$``).
ONNX = Dialect("case", ("f64", "!torch.str"), "$", "async_", "", loose=True)


def group_text(members: list[tuple[str, str]], dialect: Dialect = STABLEHLO) -> str:
    """One module of the members' (key, module text) functions, each one function renamed :func:`function_name`."""
    return _group(members, dialect)[0]


def _group(members: list[tuple[str, str]], dialect: Dialect) -> tuple[str, list[tuple[int, int, str]]]:
    """:func:`group_text`, and the lines (first, last, 1-based) of each member's function in it, by key."""
    bodies, spans, line = [], [], 2  # line 1 is "module {"
    for key, text in members:
        body = dialect.rename(key, text)
        bodies.append(body)
        spans.append((line, line + body.count("\n"), key))
        line += body.count("\n") + 1
    return "module {\n" + "\n".join(bodies) + "\n}\n", spans


_ERROR_LINE = re.compile(r"<stdin>:([0-9]+):[0-9]+: error")


def _named_in(error: str, spans: list[tuple[int, int, str]]) -> set[str]:
    """The keys of the members whose lines a compiler error names (``<stdin>:LINE:COL: error``)."""
    lines = {int(n) for n in _ERROR_LINE.findall(error)}
    return {key for first, last, key in spans if any(first <= n <= last for n in lines)}


@dataclass
class Ref:
    """Where a case's compiled function is: the group's key, the function, its dispatches (renamed)."""

    group: str
    function: str
    dispatches: dict[str, str]


def write_ref(path: Path, ref: Ref, write: Callable[[Path, bytes], None]) -> None:
    """Keep ``ref`` at ``path``: the SHA-256 of its JSON, then the JSON."""
    body = json.dumps({"format": _REF_FORMAT, "group": ref.group, "function": ref.function,
                       "dispatches": ref.dispatches}, sort_keys=True).encode()
    write(path, hashlib.sha256(body).digest() + body)


def read_digested(path: Path) -> bytes | None:
    """The bytes kept at ``path`` after their SHA-256 (a .vmfb, a .ref); None where there are none, or they do not
    match their digest (a torn or damaged entry is a miss)."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    digest, body = blob[:_DIGEST], blob[_DIGEST:]
    return body if body and hashlib.sha256(body).digest() == digest else None


def read_ref(path: Path) -> Ref | None:
    """The Ref kept at ``path``; None where there is none, or it is damaged or of another format."""
    body = read_digested(path)
    if body is None:
        return None
    try:
        data = json.loads(body)
        ref = Ref(str(data["group"]), str(data["function"]), {str(k): str(v) for k, v in data["dispatches"].items()})
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if data.get("format") != _REF_FORMAT or not re.fullmatch(r"[0-9a-f]{32}", ref.group) \
            or not re.fullmatch(r"c[0-9a-f]{32}", ref.function):
        return None
    return ref


@dataclass
class Ahead:
    """What :func:`compile_ahead` did: cases found on disk already, compiled in groups, left to compile alone (their
    group would not compile, or their function exported nothing of its own), groups compiled and groups another
    process held."""

    present: int = 0
    grouped: int = 0
    alone: int = 0
    groups: int = 0
    held: int = 0
    failed_compiles: int = 0
    keys: list[str] = field(default_factory=list)


def compile_ahead(members: Iterable[tuple[str, str]], folder: Path, compile_text: Callable[[str], bytes],
                  compile_flow: Callable[[str], str], dispatches: Callable[[bytes], dict[str, str]],
                  write: Callable[[Path, bytes], None], present: Callable[[str], bool], size: int = GROUP,
                  dialect: Dialect = STABLEHLO) -> Ahead:
    """Compile the (key, module text) ``members`` of one ``dialect`` that ``present`` says are not on disk,
    ``size`` to a module, into
    ``folder``: each group's .vmfb as ``<group key>.vmfb`` (digest, then bytes) and a ``<key>.ref`` per case, whose
    dispatches are those its function calls at the flow level (``compile_flow``), as the .vmfb exports them
    (``dispatches``). A module the dialect does not find groupable is left to compile alone.

    A group that fails to compile is halved until each failing case stands alone; that case gets nothing (it
    compiles at its run and records its own error). Groups are formed from the sorted keys, so processes given the
    same cases form the same groups; a group another process is compiling (its lock held) is skipped."""
    from filelock import FileLock, Timeout

    done = Ahead()
    todo: dict[str, str] = {}
    for key, text in members:
        if key in todo:
            continue
        if present(key):
            done.present += 1
        elif not dialect.groupable(text):
            done.alone += 1
        else:
            todo[key] = text
    keys = sorted(todo)
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(keys), size):
        chunk = keys[start:start + size]
        name = hashlib.sha256("\n".join(chunk).encode()).hexdigest()[:32]
        lock = FileLock(str(folder / f"{name}.lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            done.held += 1
            continue
        try:
            left = [k for k in chunk if not present(k)]  # the other process may have compiled some meanwhile
            _compile_group([(k, todo[k]) for k in left], folder, compile_text, compile_flow, dispatches, write, done,
                           dialect)
        finally:
            lock.release()
    return done


def _compile_group(members: list[tuple[str, str]], folder: Path, compile_text: Callable[[str], bytes],
                   compile_flow: Callable[[str], str], dispatches: Callable[[bytes], dict[str, str]],
                   write: Callable[[Path, bytes], None], done: Ahead, dialect: Dialect) -> None:
    if not members:
        return
    if len(members) == 1:  # alone it compiles at its run, as any case does: nothing is gained ahead
        done.alone += 1
        return
    text, spans = _group(members, dialect)
    try:
        vmfb = compile_text(text)
        flow = compile_flow(text)
    except Exception as exc:  # a compiler error in a case: the cases it names, else halve and find them
        done.failed_compiles += 1
        named = _named_in(str(exc), spans)
        if named and len(named) < len(members):  # left to their runs, which record the error; the rest again
            done.alone += len(named)
            _compile_group([m for m in members if m[0] not in named], folder, compile_text, compile_flow, dispatches,
                           write, done, dialect)
            return
        half = len(members) // 2
        _compile_group(members[:half], folder, compile_text, compile_flow, dispatches, write, done, dialect)
        _compile_group(members[half:], folder, compile_text, compile_flow, dispatches, write, done, dialect)
        return
    backends = {dialect.own_name(name): backend for name, backend in dispatches(vmfb).items()}
    called = dialect.calls(flow)
    claimed = {name for own in called.values() for name in own}
    if any(not any(dialect.same(c, e) for c in claimed) for e in backends):  # an initializer's: no function's
        done.alone += len(members)
        return
    group = hashlib.sha256(vmfb).hexdigest()[:32]
    write(folder / f"{group}.vmfb", hashlib.sha256(vmfb).digest() + vmfb)
    done.groups += 1
    for key, _ in members:
        own = called.get(function_name(key))
        # Alone where it calls no dispatch (nothing to attribute), a dispatch the module does not export, or not
        # dispatches 0..n-1: a dispatch formed and then dropped in the module's company (seen once in 99, a
        # ScatterND whose own module had dispatch 0 only) says it compiled otherwise than alone.
        if not own or any(dialect.exported(name, backends) is None for name in own) \
                or sorted({dispatch_order(n)[0] for n in own}) != list(range(len({dispatch_order(n)[0] for n in own}))):
            done.alone += 1
            continue
        ordered = sorted(dict.fromkeys(own), key=dispatch_order)
        ref = Ref(group, function_name(key), {n: str(dialect.exported(n, backends)) for n in ordered})
        write_ref(folder / f"{key}.ref", ref, write)
        done.grouped += 1
        done.keys.append(key)
