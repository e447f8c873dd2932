"""Repro scripts for findings, and the failure message of a deviating test that ends with one.

A repro is one standalone Python script: the imports, the inputs as literals, the adapter's native call as
statements (``Call.source``: the conversion to the framework's tensors or the model built with onnx.helper /
OpenVINO opsets, and the exact call), a print of the result and an ``assert`` of the observed behaviour: the
values, the error type, or, for a crash, the signal of a child process that makes the call. It exits 0 when the
behaviour reproduced. ``gsc repro RESULTS --case CASE --framework NAME[:VARIANT]`` writes one.

A results file may come from another machine, so no record string is pasted into a script's code: the call is
written here by the adapter from the case (:func:`call_source`), never copied from the record's ``native``; the
observed shape, dtype, signal and error type go in as literals of checked values (vocab.safe), else the check leaves
them out; every other field is a comment. Where this machine cannot write the call (its framework is not installed
here), the script shows the recorded call text as a comment said to come from the results file, and exits with one
line saying so.
"""

from __future__ import annotations

import base64
import contextlib
import json
import textwrap
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gather_scatter_conformance import resources
from gather_scatter_conformance.harness.cases.load import Case, ExpectedError
from gather_scatter_conformance.harness.reference import AllowedOutputs
from gather_scatter_conformance.vocab import dtypes, heap, safe
from gather_scatter_conformance.vocab.safe import is_safe_name

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

_MAX_INLINE = 200  # elements: larger (or non-finite) arrays are written as base64 bytes, exact and compact
_UNSTABLE = {"garbage", "nondeterministic", "mixed"}  # labels whose values differ from run to run
_HEAP_SIGNALS = ("SIGSEGV", "SIGABRT", "SIGBUS")
_HEAP_SIGNAL_NUMBERS = {6, 7, 11}  # their numbers on Linux
# Children a memory-damage crash's script runs before it says the crash did not reproduce: the damage kills a
# process only where glibc or a later access notices it (TVM's scatter_nd write before a block: 1 standalone child in
# 5 here; 20 children miss such a crash about once in a hundred runs).
_TRIES = 20
_CHILD_TIMEOUT = 120  # seconds a crash repro's child gets (glibc's abort path can hang it: see _check)
# The exit status with which a script's call statements say what they need and that it is missing (TensorFlow.js's
# npm packages: adapters/tfjs.py): a crash repro's parent passes it on instead of reading it as the crash's status.
NEEDS = 3


def literal(arr: np.ndarray) -> str:
    """An exact Python expression for ``arr`` (NumPy literal, or its bytes in base64), its dtype and shape kept."""
    name = dtypes.name_of(arr.dtype)
    shape = tuple(arr.shape)
    if name == "string":
        return f"np.array({arr.tolist()!r}, dtype=object).reshape({shape})"
    finite = arr.dtype.kind not in "fc" or bool(np.isfinite(arr).all())
    if arr.size <= _MAX_INLINE and finite and name != "bfloat16":
        dt = "bool" if name == "bool" else f"np.{name}"
        return f"np.array({arr.tolist()!r}, dtype={dt}).reshape({shape})"
    raw = np.ascontiguousarray(arr)
    if name == "bfloat16":
        text = base64.b64encode(raw.view(np.uint16).tobytes()).decode()
        return f"np.frombuffer(base64.b64decode({text!r}), np.uint16).view(ml_dtypes.bfloat16).reshape({shape})"
    text = base64.b64encode(raw.tobytes()).decode()
    dt = "bool" if name == "bool" else f"np.{name}"
    return f"np.frombuffer(base64.b64decode({text!r}), dtype={dt}).reshape({shape})"


def _expected_text(expected: Any) -> str:
    if isinstance(expected, ExpectedError):
        return f"an error ({expected.reason})"
    if isinstance(expected, AllowedOutputs):
        return "any one of the duplicate updates per target (e.g. the last one wins)"
    arr = np.asarray(expected)
    if arr.size <= 24 and arr.dtype != object:
        return json.dumps(arr.tolist(), default=str)
    return f"an array of shape {list(arr.shape)}"


def _check(case: Case, record: Record, expected: Any, accept: str | None = None) -> list[str]:
    """The lines that run the call and assert what the record observed (``accept``: the labels that reproduce
    it, ``a|b`` as a baseline writes them; by default the record's own)."""
    outcome = record.outcome
    if outcome in ("crash", "timeout"):
        sig = safe.signal_name(record.signal)  # any other text: an unknown signal
        lines = ["# The call killed (or hung) its process: run it in a child process and check how that ended.",
                 "import subprocess",
                 "if '--child' in sys.argv:",
                 "    run(**INPUTS)",
                 "    import ctypes, gc",
                 "    gc.collect()",
                 "    ctypes.CDLL(None).malloc_trim(0)  # glibc walks its free lists here: damaged memory shows",
                 "    sys.exit(0)"]
        if outcome == "timeout":
            return [*lines, "try:",
                    "    subprocess.run([sys.executable, __file__, '--child'], timeout=60)",
                    "except subprocess.TimeoutExpired:",
                    "    print('reproduced: the call did not finish within 60 s')",
                    "else:",
                    "    raise AssertionError('the call finished: the hang did not reproduce')"]
        want = f"-signal.{sig}" if sig else "the exit status"
        if sig in _HEAP_SIGNALS:
            # Memory a call damaged kills the process where glibc or a later access notices: the signal
            # (SIGSEGV, SIGABRT, SIGBUS) depends on the allocations around it, so any of them reproduces it.
            check = (f"assert -proc.returncode in {sorted(_HEAP_SIGNAL_NUMBERS)}, "
                     f"f'expected a memory-damage signal ({sig} when recorded), got {{proc.returncode}}'")
        elif sig:
            check = f"assert proc.returncode == -signal.{sig}, f'expected {sig}, got {{proc.returncode}}'"
        else:
            check = "assert proc.returncode != 0, f'expected a crash, got exit status {proc.returncode}'"
        run_child = ["import signal",
                     "proc = subprocess.run([sys.executable, __file__, '--child'])"]
        if sig in _HEAP_SIGNALS:
            # Damaged memory kills a process only where glibc or a later access notices, which a fresh process
            # may not, so up to _TRIES children run (see _TRIES).
            # glibc's abort path can deadlock a multi-threaded process after it reports damaged memory (paddle's
            # did): a child that hangs after printing such a message reproduced the damage; one that hangs
            # without is no repro. Either way the script ends.
            run_child = ["import re, signal",
                         f"for attempt in range(1, {_TRIES + 1}):",
                         "    try:",
                         "        proc = subprocess.run([sys.executable, __file__, '--child'], "
                         f"timeout={_CHILD_TIMEOUT},",
                         "                              stderr=subprocess.PIPE, text=True)",
                         "        sys.stderr.write(proc.stderr)",
                         "    except subprocess.TimeoutExpired as hung:",
                         "        err = hung.stderr.decode(errors='replace') if isinstance(hung.stderr, bytes) "
                         "else hung.stderr or ''",
                         "        sys.stderr.write(err)",
                         f"        damaged = [m for m in err.splitlines() if re.match({heap.GLIBC_MESSAGE!r}, "
                         "m.strip())]",
                         f"        assert damaged, 'the child hung for {_CHILD_TIMEOUT} s without a heap message: "
                         "the crash did not reproduce'",
                         "        print('reproduced: glibc reported', repr(damaged[0].strip()), 'and the child hung "
                         f"in its abort path (killed after {_CHILD_TIMEOUT} s)')",
                         "        sys.exit(0)",
                         f"    if -proc.returncode in {sorted(_HEAP_SIGNAL_NUMBERS)}:",
                         "        break"]
        tries = f", 'in child', attempt, 'of up to {_TRIES}'" if sig in _HEAP_SIGNALS else ""
        return [*lines, *run_child,
                f"if proc.returncode == {NEEDS}:  # the call's statements said what this machine lacks",
                f"    sys.exit({NEEDS})",
                f"print('child process ended with', proc.returncode, '(expected {want})'{tries})", check]
    if outcome == "error":
        name = safe.error_type(record.error_type)
        if name is None:  # not a Python name: any exception reproduces it, the recorded text shown as a string
            return ["try:",
                    "    result = run(**INPUTS)",
                    "except Exception as exc:",
                    f"    print(f'raised {{type(exc).__name__}}: {{exc}}', '(recorded:', {record.error_type!r}"
                    " + ')')",
                    "else:",
                    "    print(result)",
                    "    raise AssertionError('returned a value: the error did not reproduce')"]
        short = name.rsplit(".", 1)[-1]
        return ["try:",
                "    result = run(**INPUTS)",
                "except Exception as exc:",
                "    print(f'raised {type(exc).__name__}: {exc}')",
                f"    assert type(exc).__name__ == {short!r}, f'expected {short}, got {{type(exc).__name__}}'",
                "else:",
                "    print(result)",
                f"    raise AssertionError('returned a value: the {short} did not reproduce')"]
    lines = ["result = run(**INPUTS)", "print(result)"]
    observed = record.observed
    labels = (accept or record.label or "").split("|")
    if record.dimension and ("garbage" in labels or len(labels) > 1):
        # an unchecked read: its bytes are whatever lay there, so the script asserts their class. Where one of the
        # accepted labels conforms (``nondeterministic|last-wins``: duplicates written in one order some runs, in
        # varying orders in others), a valid result reproduces that label.
        from gather_scatter_conformance.harness.judge.dimensions import conforms

        try:
            settles = any(conforms(case.op, record.dimension, label) for label in labels)
        except KeyError:  # a dimension this vocabulary does not know (the record is data from elsewhere)
            settles = False
        lines += _class_check(_valid_results(case, expected), record, expected, settles)
    elif observed is not None and record.label not in _UNSTABLE:
        dt = safe.dtype_name(record.observed_dtype) or "float64"
        cast = "ml_dtypes.bfloat16" if dt == "bfloat16" else "object" if dt == "string" else f"np.{dt}"
        lines += [f"observed = np.asarray(json.loads({json.dumps(json.dumps(observed))}), dtype={cast})",
                  "assert result.shape == observed.shape and np.array_equal(result, observed, "
                  "equal_nan=result.dtype.kind in 'fc'), f'observed {observed}, got {result}'"]
    elif isinstance(expected, ExpectedError) and safe.shape(record.observed_shape) is not None:
        # A value where canonical semantics raise, too large to be kept: returning one of its shape reproduces it.
        shape = safe.shape(record.observed_shape)
        lines += [f"assert list(result.shape) == {shape!r}, "
                  f"f'expected a value of shape {shape}, got {{result.shape}}'"]
    elif isinstance(expected, np.ndarray):
        lines += [f"canonical = {literal(expected)}",
                  "assert result.shape != canonical.shape or not np.array_equal(result.astype(canonical.dtype), "
                  "canonical), 'the result is the canonical one: the deviation did not reproduce'"]
    return lines


def _valid_results(case: Case, expected: Any) -> list[np.ndarray]:
    """The results canonical semantics allow for ``case``: the reference's value; for duplicate scatter targets
    each single order of the writes (harness.judge.classify.single_orders); none where they raise."""
    if isinstance(expected, np.ndarray):
        return [expected]
    if isinstance(expected, AllowedOutputs):
        from gather_scatter_conformance.harness.judge.classify import single_orders

        return [out for _, out in single_orders(case.op, case.inputs(), case.attrs) if isinstance(out, np.ndarray)]
    return []


def _class_check(valid: list[np.ndarray], record: Record, expected: Any, valid_reproduces: bool = False) -> list[str]:
    """Lines that assert an unchecked read's class: a value of the observed shape that is no valid result (none
    exists where canonical semantics raise), or else a value that differs on a second run; with
    ``valid_reproduces`` (a conforming label is among those accepted), a valid result reproduces too."""
    shape = safe.shape(record.observed_shape)  # a shape, or none to assert
    if valid_reproduces:
        on_valid = ["    print('a valid result: the accepted label that conforms (its other labels vary by run)')"]
    else:
        on_valid = [
            "    again = run(**INPUTS)",
            "    assert not same(again, result), 'a valid result, the same on two runs: the unchecked read did not "
            "reproduce'",
            "    print('another run read other bytes: an unchecked read')"]
    return [
        "# An unchecked read returns whatever lies in memory (here it was seen to differ from run to run), so the",
        "# script asserts the class of the result, not its bytes: no valid result, or not the same twice.",
        f"VALID = [{', '.join(literal(arr) for arr in valid)}]  # canonical semantics: {_expected_text(expected)}",
        "",
        "",
        "def same(a, b):",
        "    try:",
        "        return a.shape == b.shape and np.array_equal(np.asarray(a).astype(b.dtype), b, "
        "equal_nan=b.dtype.kind in 'fc')",
        "    except (TypeError, ValueError):",
        "        return False",
        "",
        "",
        *([f"assert list(result.shape) == {shape!r}, f'expected a value of shape {shape}, got {{result.shape}}'"]
          if shape is not None else []),
        "if any(same(result, valid) for valid in VALID):",
        *on_valid,
        "else:",
        "    print('no valid result: an unchecked read')",
    ]


def script(case: Case, record: Record, accept: str | None = None, source: str | None = None) -> str:
    """The standalone repro script of ``record`` (a finding on ``case``): :func:`script_head` then
    :func:`script_body`. Raises ValueError without a native call to write (an adapter with no source, such as
    TensorRT's and DirectML's here). ``accept``: the labels that reproduce a probe's finding, as its baseline
    gives them (``zero|garbage``: an unchecked read; :func:`baseline_label`); by default the record's label.
    ``source``: the call's statements where the caller holds them from its own run (a failing test's message), else
    :func:`call_source` writes them."""
    return script_head(case) + script_body(case, record, accept, source)


def call_source(case: Case, record: Record) -> str:
    """The record's call as statements (``Call.source``), written here by its adapter from the case, the record's
    framework, variant and device: never the record's own text. Raises LookupError where this machine cannot write
    it (no such adapter, its framework not installed here, a variant it does not have), saying why. Written once per
    case, framework, variant and device in a process (kept on the case), or ahead by :func:`prefetch_sources`."""
    memo = case.memo.setdefault(_SOURCES, {})
    key = _source_key(record)
    held = memo.get(key)
    if isinstance(held, _Ahead):
        held = held.get()
    if held is None:
        held = _describe(case, *key)
    memo[key] = held
    source, why = held
    if why is not None:
        raise LookupError(why)
    return str(source)


_SOURCES = "call_sources"  # Case.memo: (framework, variant, device) -> (source, None) or (None, why not)


def _source_key(record: Record) -> tuple[str, str, str]:
    return str(record.framework), str(record.variant or ""), str(record.device or "cpu")


def _describe(case: Case, framework: str, variant: str, device: str) -> tuple[str | None, str | None]:
    """(the call's statements, None), or (None, why this machine cannot write them)."""
    from gather_scatter_conformance import adapters
    from gather_scatter_conformance.adapters.base import DEVICES
    from gather_scatter_conformance.harness.run.runner import case_data

    if device not in DEVICES:  # an execution provider's device (onnxruntime@openvino): set up by the run, not here
        return None, f"its device {device!r} is an execution provider this process does not run"
    try:
        adapter = adapters.get(framework)
        _, source = adapter.describe(case_data(case, device), variant)
    except KeyError:
        return None, "no adapter of that name here"
    except Exception as exc:
        return None, " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return source, None


class _Ahead:
    """A call source being written in a forked process (:func:`prefetch_sources`): its task's future and its place
    in the task's answers."""

    def __init__(self, future: Any, index: int, case: Case, key: tuple[str, str, str]) -> None:
        self.future, self.index, self.case, self.key = future, index, case, key

    def get(self) -> tuple[str | None, str | None]:
        """The answer as :func:`_describe` gives it; written here where its process died or its task was cancelled,
        so a prefetch never changes what a script says."""
        try:
            source, why = self.future.result()[self.index]
        except Exception:
            return _describe(self.case, *self.key)
        return (None if source is None else str(source)), (None if why is None else str(why))

    def settled(self) -> tuple[str | None, str | None] | None:
        """The answer where its process gave one, else None (not done, cancelled or failed)."""
        future = self.future
        if not future.done() or future.cancelled() or future.exception() is not None:
            return None
        return self.get()


_TASKS: list[list[tuple[Case, tuple[str, str, str]]]] = []  # what forked processes write: inherited, not pickled
# A forked process that has used no CPU for this long is stuck, and is ended (its task's sources are then written in
# line). A fork copies one thread: a module another thread of the report was importing at that moment stays locked
# in the child, which then waits on it forever the first time it imports that module. Seen on a full report
# (2026-11-29): the child waited in import_ensure_initialized with 0.01 s of CPU, and the report with it. A process
# that imports or writes keeps using CPU; one that waits on a lock uses none.
STALL_S = 30.0


def _write_task(index: int) -> list[tuple[str | None, str | None]]:
    return [_describe(case, *key) for case, key in _TASKS[index]]


class _Drivers:
    """``count`` threads, each taking the next task and waiting for it in a forked process of its own. The process
    lives on to the driver's next task, so an import is shared by the tasks that follow it there; one that dies
    (paddle 3.3.1 imported after TensorFlow 2.21 in one process segfaults) loses its own task only, and the
    driver forks a fresh process for the next."""

    def __init__(self, tasks: int, count: int, context: Any) -> None:
        import queue
        import threading
        from concurrent.futures import Future

        self.context = context
        self.futures: list[Future[list[tuple[str | None, str | None]]]] = [Future() for _ in range(tasks)]
        self.waiting: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(tasks):
            self.waiting.put(index)
        self.threads = [threading.Thread(target=self._drive, name="gsc-prefetch", daemon=True)
                        for _ in range(min(count, tasks))]
        for thread in self.threads:
            thread.start()

    def _drive(self) -> None:
        import queue
        from concurrent.futures import ProcessPoolExecutor

        pool = None
        while True:
            try:
                index = self.waiting.get_nowait()
            except queue.Empty:
                break
            future = self.futures[index]
            if not future.set_running_or_notify_cancel():  # cancelled: the block ended
                continue
            try:
                pool = pool or ProcessPoolExecutor(max_workers=1, mp_context=self.context)
                future.set_result(_answer(pool, pool.submit(_write_task, index)))
            except BaseException as exc:  # its process died (BrokenProcessPool), stalled or failed: a fresh one
                future.set_exception(exc)
                if pool is not None:
                    pool.shutdown(wait=False, cancel_futures=True)
                pool = None
        if pool is not None:
            pool.shutdown(wait=True)

    def stop(self) -> None:
        """Cancel the tasks no driver has begun; wait for those begun (each ends: :func:`_answer`)."""
        for future in self.futures:
            future.cancel()
        for thread in self.threads:
            thread.join()


class Stalled(RuntimeError):
    """A process writing sources ahead used no CPU for :data:`STALL_S` seconds, and was ended."""


def _answer(pool: Any, task: Any, poll_s: float = 1.0) -> list[tuple[str | None, str | None]]:
    """``task``'s result once its process (``pool``'s one) gives it. Where that process uses no CPU and runs no
    thread for :data:`STALL_S` seconds it is killed and :class:`Stalled` raised, so that no stuck child holds the
    report."""
    import time
    from concurrent.futures import TimeoutError as Waited

    from gather_scatter_conformance.harness.run.machine import activity

    last: tuple[float | None, float] = (None, time.monotonic())
    while True:
        try:
            return task.result(timeout=poll_s)
        except Waited:
            pass
        processes = dict(getattr(pool, "_processes", None) or {})  # ProcessPoolExecutor's one (max_workers=1)
        cpu_s, busy = activity(list(processes)) if processes else (None, True)
        now = time.monotonic()
        if busy or cpu_s != last[0]:
            last = (cpu_s, now)
        elif now - last[1] >= STALL_S:
            for process in processes.values():
                process.kill()
            raise Stalled(f"a process writing sources ahead used no CPU for {STALL_S:g} s (pids {list(processes)})")


@contextlib.contextmanager
def prefetch_sources(pairs: Iterable[tuple[Case, Record]], workers: int | None = None) -> Iterator[None]:
    """Within the block, the call sources of ``pairs`` are written ahead by forked processes beside this one, while
    the caller does other work; :func:`call_source` waits for its own. Writing one imports the framework (TensorFlow
    alone takes about 9 s here), so each framework's sources are one task, and a process takes task after task, its
    imports paid once (:class:`_Drivers`). ``workers``: processes at once (default: one fewer than the cores, at
    least one). Without ``fork`` (not Linux) nothing is ahead. The answers are the same as :func:`call_source`
    writes alone; a process that dies, or stalls (no CPU for :data:`STALL_S` s: stuck on a lock the fork
    copied), leaves its task's sources to it. Nothing is left running after the block."""
    import multiprocessing
    from collections import defaultdict

    groups: dict[str, list[tuple[Case, tuple[str, str, str]]]] = defaultdict(list)
    for case, record in pairs:
        memo = case.memo.setdefault(_SOURCES, {})
        key = _source_key(record)
        if key not in memo:
            memo[key] = None
            groups[key[0]].append((case, key))
    try:
        context = multiprocessing.get_context("fork")
    except ValueError:
        context = None
    if not groups or context is None:
        yield
        return
    _TASKS[:] = list(groups.values())
    from gather_scatter_conformance.harness.run.machine import cores

    drivers = _Drivers(len(_TASKS), workers or max(1, cores() - 1), context)
    for index, task in enumerate(_TASKS):
        for place, (case, key) in enumerate(task):
            case.memo[_SOURCES][key] = _Ahead(drivers.futures[index], place, case, key)
    try:
        yield
    finally:
        drivers.stop()
        for task in _TASKS:  # what the block did not ask for is kept where written, never left on a closed pool
            for case, key in task:
                held = case.memo[_SOURCES].get(key)
                if isinstance(held, _Ahead):
                    case.memo[_SOURCES][key] = held.settled()
        _TASKS.clear()


def baseline_label(record: Record, root: Path | None = None) -> str | None:
    """The label ``record``'s probe has in its framework's baseline (the one its run read, which the record carries;
    for an older record, or where ``root`` is given, ``root``: ./baselines where there is one, else the shipped
    baselines), where it names alternatives that include the record's label (``zero|garbage``);
    else None. What :func:`script` accepts for it."""
    if not record.label:
        return None
    from gather_scatter_conformance.harness.judge import baseline

    # The label the run judged it by travels with it: set (null where its baseline had none) by a run that read one.
    if "baseline" in record.model_fields_set and root is None:
        label = record.baseline
    else:
        root = root or (Path("baselines") if Path("baselines").is_dir() else resources.baselines_dir())
        known = _baseline(root.resolve(), record.framework)
        key = baseline.item_key(record.case, record.variant, record.device)
        label = baseline.label_at(known, key, record.framework_version)
    alternatives = label.split("|") if isinstance(label, str) else []
    return label if len(alternatives) > 1 and record.label in alternatives and all(
        is_safe_name(a) for a in alternatives) else None


@cache
def _baseline(root: Path, framework: str) -> dict[str, Any]:
    from gather_scatter_conformance.harness.judge import baseline

    return baseline.load(root, framework)


def script_head(case: Case, max_elements: int | None = None) -> str:
    """The part of a repro every finding on ``case`` shares: imports and the inputs as exact literals.

    With ``max_elements``, inputs larger than that together are named instead (for a page that shows many
    scripts): ``gsc repro`` writes them in full.
    """
    inputs = case.inputs()
    if max_elements is not None and sum(a.size for a in inputs.values()) > max_elements:
        return "\n".join([
            "#!/usr/bin/env python3",
            f"# Repro of {case.nodeid}: its inputs are too large for this page; write the full script with",
            f"#   gsc repro RESULTS --case {case.nodeid} --framework NAME:VARIANT --out repro.py",
            "import numpy as np",
            *(f"{n} = ...  # {dtypes.name_of(a.dtype)} array of shape {list(a.shape)}" for n, a in inputs.items()),
            f"INPUTS = {{{', '.join(f'{n!r}: {n}' for n in inputs)}}}",
            "",
        ])
    return "\n".join([
        "#!/usr/bin/env python3",
        f"# Repro of {case.nodeid}: written by `gsc repro`; it exits 0 when the behaviour reproduces.",
        "import base64",
        "import json",
        "import sys",
        "",
        "import numpy as np",
        "",
        "try:",
        "    import ml_dtypes",
        "except ImportError:  # needed only for bfloat16",
        "    ml_dtypes = None",
        "",
        *(f"{n} = {literal(a)}" for n, a in inputs.items()),
        f"INPUTS = {{{', '.join(f'{n!r}: {n}' for n in inputs)}}}",
        "",
    ])


def script_body(case: Case, record: Record, accept: str | None = None, source: str | None = None) -> str:
    """The part of a repro that is the finding's own: what was observed, the native call, the check (``accept``,
    ``source``: as :func:`script` takes them)."""
    recorded = record.native or ""
    if not recorded and not source:
        raise ValueError(f"{record.framework}:{record.variant} recorded no native call for {case.nodeid}")
    why = ""
    if source is None:
        try:
            source = call_source(case, record)
        except LookupError as exc:
            why = str(exc)
        else:
            if not source:
                raise ValueError(f"{record.framework}:{record.variant} has no native call to write for "
                                 f"{case.nodeid}")
    expected = case.reference()
    label = f", label {record.dimension} = {record.label}" if record.label else ""
    if accept and accept != record.label:
        label += f" (its baseline: {accept})"
    about = [f"{record.framework} {record.framework_version} ({record.variant}, {record.device})",
             f"Observed: {record.outcome}{label}. {record.reason or ''}".rstrip(),
             f"Canonical (ONNX): {_expected_text(expected)}.",
             f"Case: {case.op} {json.dumps(case.attrs)}; source: {case.spec.source}"]
    comment = [f"# {line}" for text in about for line in text.splitlines()]
    if why:  # no call written: the recorded text is shown, as text, and the script says why it stops
        stop = " ".join(f"this script cannot make the call: {record.framework}:{record.variant} could "
                        f"not be written where the script was ({why}); run `gsc repro` where it is installed".split())
        return "\n".join([*comment, "#",
                          "# The call as recorded in the results file (text from the results file: not checked, "
                          "not run):",
                          *(f"#   | {line}" for line in recorded.splitlines()), "",
                          f"sys.exit({stop!r})", ""])
    lines = [*comment, "",
             f"def run({', '.join(case.inputs())}):",
             '    """The native call, as the harness made it."""',
             textwrap.indent(source, "    "),
             "    return result",
             "",
             "",
             *_check(case, record, expected, accept), ""]
    return "\n".join(lines)


def snippet(case: Case, api: str) -> str:
    """Python lines that rebuild the inputs as NumPy arrays, then the native call (framework-specific names).

    A quick look, not a script: inputs past a few hundred elements are named by shape (the repro script of a
    finding has them all)."""
    lines = ["import numpy as np"]
    lines += [f"{name} = {literal(arr)}" if arr.size <= _MAX_INLINE else
              f"{name} = ...  # {dtypes.name_of(arr.dtype)} array of shape {list(arr.shape)}: see the case file"
              for name, arr in case.inputs().items()]
    if api:
        lines.append(api)
    return "\n".join(lines)


def failure_message(case: Case, record: Record) -> str:
    """A self-contained description of a deviation: what was called on what, what was expected, what happened,
    ending with the repro script (or the inputs and the call where no script can be written)."""
    head = f"{case.nodeid} [{record.framework} {record.framework_version}, {record.variant}]"
    lines = [
        f"{head}: deviates from canonical ONNX semantics: {record.reason}",
        f"  op:       {case.op} {case.attrs}",
        f"  source:   {case.spec.source}",
        f"  call:     {record.api or '(not reached)'}",
        f"  expected: {record.expected if record.expected is not None else '(large; see case)'}",
    ]
    if record.outcome == "ok":
        lines.append(
            f"  observed: {record.observed if record.observed is not None else '(large)'}"
            f" dtype={record.observed_dtype}"
        )
        for m in record.first_mismatches or []:
            lines.append(f"    at {m['index']}: expected {m['expected']!r}, observed {m['observed']!r}")
    else:
        lines.append(
            f"  observed: {record.outcome}: {record.error_type or ''}: {record.error_message}"
        )
    try:
        text = script(case, record, source=record.native or "")  # this run's own record: its call
        lines.append("  repro (a standalone script; gsc repro writes it to a file):")
    except ValueError:
        text = snippet(case, record.api)
        lines.append("  repro:")
    lines += ["    " + line for line in text.splitlines()]
    return "\n".join(lines)


def preservation_message(case: Case, record: Record) -> str:
    """A converter path's changed behaviour, self-contained: the source call and what it did natively, the
    converter and the converted graph's operators, what the target did, and the repro script that converts and
    runs (or why none can be written)."""
    conv = record.conversion or {}
    versions = conv.get("versions") or {}
    source = (conv.get("source_value") if "source_value" in conv else conv.get("source_error"))
    target = record.observed if record.outcome == "ok" else (
        f"{record.outcome}: {record.error_type or ''}: {record.error_message or ''}")
    changed = conv.get("preservation") in ("changed", "unknown")
    what = "the conversion changed the behaviour" if changed else "the path's preservation"
    lines = [
        f"{case.nodeid} [{record.framework}, {record.variant}]: {what}: {conv.get('summary', '')}",
        f"  op:        {case.op} {case.attrs}",
        f"  source:    {conv.get('source')} {versions.get('source', '')}: {conv.get('source_api', '')}",
        f"             -> {conv.get('source_label')}: {source}",
        f"  converter: {conv.get('converter')} {versions.get('converter', '')} {conv.get('options', {})}"
        + (f", opset {conv['opset']}" if conv.get("opset") else ""),
        f"  converted: {' '.join(record.ops or []) or '(not reported)'}",
        f"  target:    {conv.get('target')} {versions.get('target', '')} -> {conv.get('target_label')}: {target}",
    ]
    if not changed:  # nothing to reproduce: the message reports a verdict that differs from the baseline's
        return "\n".join(lines)
    try:
        lines += ["  repro (converts and runs; gsc repro writes it to a file):",
                  textwrap.indent(script(case, record, source=record.native or ""), "    ")]
    except ValueError as exc:
        lines.append(f"  (no repro script: {exc})")
    return "\n".join(lines)
