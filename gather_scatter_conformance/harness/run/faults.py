"""Whose fault an exception is: the harness's (or its adapter's), or the framework's.

A framework that raises on a case gives a result (outcome ``error``), judged like any other. A harness that fails
gives none: its record's outcome is ``harness-error``, verdict n/a, and pytest reports the test as an error. This
module draws the line, for the worker (harness.run.worker); it needs only the standard library, since workers run in
frameworks' own interpreters.
"""

from __future__ import annotations

import ast
import builtins
import dis
import inspect
import linecache
import os
import traceback
from collections.abc import Collection
from types import CodeType, FrameType, FunctionType, TracebackType
from typing import Any

from gather_scatter_conformance.resources import PACKAGE

# Where the worker is when an exception happens. In the first three only the harness's code runs; in the others an
# adapter calls its framework.
HARNESS_PHASES = ("decode", "lookup", "encode")
PHASES = (*HARNESS_PHASES, "prepare", "run", "to_numpy")
# Beside these, a fault's phase may be ``worker`` (the worker process itself failed, warming its framework up
# included: harness.run.isolation), ``transfer`` (a case's inputs or result were not carried in time), ``interrupted``
# (its process was killed from outside, on its rerun too: harness.run.isolation) or ``judge`` (judging the answer
# failed, in the runner).
# Instructions that call: a failing call with no deeper Python frame called compiled code.
_CALLS = {"CALL", "CALL_KW", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_FUNCTION_EX", "CALL_METHOD", "PRECALL"}
_RAISES = {"RAISE_VARARGS", "RERAISE"}


def is_harness_fault(exc: BaseException, phase: str, own: Collection[str] = ()) -> bool:
    """True when ``exc``, raised while the worker was in ``phase`` (one of PHASES), is the harness's fault.

    - ``decode`` (the payload to arrays), ``lookup`` (the registry, importing the adapter module, its framework's
      version) and ``encode`` (the result onto the wire): always; no framework code decides anything there.
    - ``run`` (``Call.run``, the native call): only a NameError or ImportError raised in our own code. Everything
      else raised while the call runs is the framework's answer, whoever raised it (framework code, C builtins,
      an operator on its tensors).
    - ``prepare``/``describe`` and ``to_numpy`` (the adapter builds the call, or reads its result back): an
      ImportError (the adapter could not import what it needs: never a behaviour of the case), and a NameError,
      AttributeError, TypeError or KeyError that our own code raised. Ours means the deepest traceback frame is
      in this package or in ``own`` (a third-party adapter's module files), and the failing instruction there is
      a ``raise`` (explicitly chained: whoever raised the cause), a name, an attribute or a subscript, or a call
      that failed before it ran: a call to one of our own Python functions or classes, or to a Python builtin.
      A failing call to anything else is a call into the framework's compiled code: its refusal.

    When in doubt the exception stays the framework's (the record as it was before harness faults existed).
    """
    if phase in HARNESS_PHASES:
        return True
    tb = _deepest(exc.__traceback__)
    if tb is None:
        return False
    ours = _is_ours(tb.tb_frame.f_code.co_filename, own)
    if phase == "run":
        return ours and isinstance(exc, NameError | ImportError)
    if isinstance(exc, ImportError):
        return True
    if not ours or not isinstance(exc, NameError | AttributeError | TypeError | KeyError):
        return False
    op = _failing_instruction(tb)
    if op is None:
        return False
    if op.opname in _RAISES:
        cause = exc.__cause__
        return cause is None or is_harness_fault(cause, phase, own)
    if op.opname in _CALLS:
        return _calls_ours(tb.tb_frame, op, own)
    return not isinstance(exc, TypeError) or op.opname.startswith(("LOAD_", "STORE_", "DELETE_", "IMPORT_"))


def where(exc: BaseException) -> str:
    """``file:line`` of the deepest frame of ``exc``'s traceback ('' without one)."""
    tb = _deepest(exc.__traceback__)
    return f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb else ""


def fault(exc: BaseException, phase: str) -> dict[str, Any]:
    """The worker's answer for a harness fault: outcome ``harness-error``, the exception, and its ``fault`` (the
    phase, where, and the traceback's last frames)."""
    message = (str(exc).strip() or repr(exc))[:2000]
    frames = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        "outcome": "harness-error",
        "error_type": f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins.").replace(
            "<locals>.", ""),  # a class made in a function: its name, as a record's names are (vocab.record)
        "error_message": message,
        "fault": {"phase": phase, "where": where(exc), "traceback": frames[-4000:]},
    }


def own_files(*objects: Any) -> frozenset[str]:
    """The source files of ``objects`` (an adapter, its class, its module): code that is the harness's own even
    where it lies outside this package (a third party's adapter module)."""
    files = set()
    for obj in objects:
        try:
            files.add(os.path.realpath(inspect.getfile(obj if inspect.ismodule(obj) or inspect.isclass(obj)
                                                       else type(obj))))
        except (TypeError, OSError):
            continue
    return frozenset(files)


def _deepest(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _is_ours(filename: str, own: Collection[str]) -> bool:
    path = os.path.realpath(filename)
    return path.startswith(str(PACKAGE) + os.sep) or path in own


def _failing_instruction(tb: TracebackType) -> dis.Instruction | None:
    """The instruction that raised, in the deepest frame (tb_lasti is its offset)."""
    last = None
    for ins in dis.get_instructions(tb.tb_frame.f_code):
        if ins.offset > tb.tb_lasti:
            break
        last = ins
    return last


def _calls_ours(frame: FrameType, op: dis.Instruction, own: Collection[str]) -> bool:
    """Whether the call ``op`` made in ``frame`` (which raised without entering a Python frame) called our own
    Python code (its arguments did not bind) or a Python builtin; found from the call's source text, whose callee
    is looked up in the frame without running anything. Unknown: False."""
    callee = _callee(frame, op)
    if callee is None:
        return False
    if isinstance(callee, staticmethod | classmethod):
        callee = callee.__func__
    if isinstance(callee, FunctionType):
        return _is_ours(callee.__code__.co_filename, own)
    if inspect.isclass(callee):
        if callee.__module__ == "builtins":
            return True
        try:
            return _is_ours(inspect.getfile(callee), own)
        except (TypeError, OSError):
            return False
    return getattr(callee, "__module__", None) == "builtins" or getattr(callee, "__self__", None) is builtins


def _callee(frame: FrameType, op: dis.Instruction) -> Any:
    """The object a failing call called: its source text (the instruction's position) parsed, and a dotted name
    looked up statically (no property, no __getattr__ runs). None when it cannot be known."""
    text = _source(frame.f_code, op)
    try:
        node = ast.parse(text.strip(), mode="eval").body if text else None
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    names = []
    func = node.func
    while isinstance(func, ast.Attribute):
        names.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    scopes = (frame.f_locals, frame.f_globals, vars(builtins))
    obj = next((scope[func.id] for scope in scopes if func.id in scope), None)
    for name in reversed(names):
        if obj is None:
            return None
        try:
            obj = inspect.getattr_static(obj, name)
        except AttributeError:
            return None
    return obj


def _source(code: CodeType, op: dis.Instruction) -> str:
    """The source text of instruction ``op`` (Python 3.11+ positions; '' where unknown)."""
    pos = getattr(op, "positions", None)
    if pos is None or pos.lineno is None or pos.end_lineno is None or pos.col_offset is None:
        return ""
    lines = linecache.getlines(code.co_filename)[pos.lineno - 1:pos.end_lineno]
    if not lines:
        return ""
    raw = [line.encode() for line in lines]  # column offsets count UTF-8 bytes
    if len(raw) == 1:
        return raw[0][pos.col_offset:pos.end_col_offset].decode(errors="replace")
    raw[0] = raw[0][pos.col_offset:]
    raw[-1] = raw[-1][:pos.end_col_offset]
    return b"".join(raw).decode(errors="replace")
