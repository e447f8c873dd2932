"""Risky cases in forked children of a clean template, so that a case that may corrupt memory costs a fork, not a
fresh interpreter that imports its framework again (seconds for TensorFlow, torch or MXNet, per case).

A worker forks its *template* right after importing its framework and before running any case. The template
never runs a case: it only forks one child per risky case. Forking from the warm worker itself would be cheaper
still, but TensorFlow and JAX deadlock in a child forked after they started their thread pools; a process that
has only imported them forks safely (checked for every adapter here). The child runs the case, sends the result,
then frees what the case allocated (adapter caches, garbage) and trims the heap, which is where memory corrupted
by an out-of-bounds write shows (glibc aborts, or the free segfaults), and exits. Its wait status is the case's
own: a child that returned a value and then died was killed by what the case did. A child that got through its
clean-up says so, with the status it passes to ``os._exit``, as its last message: nothing of its own runs after
it, so that status is its wait status, and the template answers without waiting for the kernel to tear the
child's address space down (it reaps the child later); a child that dies on its way out sends no such message,
and its wait status is read. The warm worker never runs the case, so it never needs replacing.

Everything here runs inside a worker process (any interpreter of the project's environments, POSIX only).
"""

from __future__ import annotations

import ctypes
import gc
import os
import pickle
import select
import signal
import struct
import time
from collections.abc import Callable
from typing import Any

from gather_scatter_conformance.harness.run.timeouts import STILL_WINDOW, Stillness

EXIT_GRACE = 30.0  # seconds a child may take to clean up and exit after sending its result
# Seconds a child may take to decode its inputs before the case starts, or to encode its result after it: the
# harness's own work, outside the case's timeout (harness.run.worker.run_case's marks), but not forever.
TRANSFER_TIMEOUT = 600.0
STILL_POLL = 0.5  # seconds between looks at a running case's processes (harness.run.timeouts.Stillness)
_MARK = "mark"  # a child's message ("mark", "start" | "done"): where its case's timed part begins and ends
_EXITING = "exiting"  # a child's last message ("exiting", status), sent just before os._exit(status)
_HEADER = struct.Struct("!Q")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _send(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _HEADER.pack(len(data)) + data)


def _read_exact(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd``; None at EOF."""
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(fd: int, deadline: float | None = None) -> Any | None:
    """The next message from ``fd``; None at EOF, or if none has begun by ``deadline`` (time.monotonic()).

    Once a message has begun it is read whole, so a deadline never leaves half a message in the pipe.
    """
    if deadline is not None:
        left = max(0.0, deadline - time.monotonic())
        if not select.select([fd], [], [], left)[0]:
            return None
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        return None
    body = _read_exact(fd, _HEADER.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def returncode(status: int) -> int:
    """A wait status as subprocess writes it: the exit code, or minus the signal that killed the process."""
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _trim_heap() -> None:
    try:  # glibc walks and consolidates its free lists here: a corrupted chunk header aborts the process now
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc


RunCase = Callable[..., dict[str, Any]]  # run_case(*args) -> the worker's answer for one case
Release = Callable[[str], None]  # release(adapter_name): drop what the adapter keeps between cases


def _child(args: tuple[Any, ...], out: int, run_case: RunCase, release: Release) -> None:
    """Run one case, send its result, then free everything the case allocated, say so with the status it exits
    with, and exit (never returns)."""
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            result = run_case(*args, notify=lambda what: _send(out, (_MARK, what)))
        except BaseException as exc:  # the worker answers every case, even one whose adapter failed oddly
            result = {"outcome": "error", "error_type": type(exc).__name__, "error_message": str(exc)[:2000]}
        try:
            _send(out, result)
        except Exception as exc:  # a result pickle cannot carry
            _send(out, {"outcome": "error", "error_type": "WorkerError", "error_message": f"unsendable: {exc!r}"})
        del result
        release(args[0])
        gc.collect()
        _trim_heap()
    except BaseException:
        status = 70  # the harness side of the child failed; the parent reports it, the case keeps its result
    try:
        # Nothing of the child's own runs after this but _exit: its status is now this one (see _serve).
        _send(out, (_EXITING, status))
    except BaseException:
        pass
    os._exit(status)


def _wait(pid: int, timeout: float) -> int | None:
    """The child's returncode, or None if it has not exited within ``timeout`` (it is then killed)."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return returncode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.002)


def _serve(requests: int, replies: int, run_case: RunCase, release: Release) -> None:
    """The template's loop: fork a child per request and report its result and exit status."""
    # Everything that exists now is the framework's, not a case's: frozen, it is left out of the children's
    # collections (which then walk only what the case made) and their pages are not copied just to be walked.
    gc.freeze()
    exiting: list[int] = []  # children that said their last word and are leaving: reaped when they are gone
    while True:
        exiting = [pid for pid in exiting if not os.waitpid(pid, os.WNOHANG)[0]]
        args = _recv(requests)
        if args is None:  # the worker closed its end (it stopped or died): so does the template
            for pid in exiting:
                os.waitpid(pid, 0)
            return
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rd)
            os.close(requests)
            os.close(replies)
            _child(args, wr, run_case, release)
        os.close(wr)
        _send(replies, {"pid": pid})
        result = _recv(rd)
        while isinstance(result, tuple) and result[:1] == (_MARK,):  # the case starts or ends: the worker times it
            _send(replies, {_MARK: result[1]})
            result = _recv(rd)
        # No result: the child died (or was killed for a timeout) during the case; its status says how.
        _send(replies, {"result": result})
        if result is None:
            os.close(rd)
            _send(replies, {"returncode": _wait(pid, 5.0)})
            continue
        # A child that answered frees what the case left (where corrupted memory shows), then says the status it
        # exits with: nothing of its own runs after that, so that is its wait status, and the kernel's tearing
        # down of its address space (about 15 ms of a torch template's child, issue #38) need not be waited for.
        # A child that dies on its way out says nothing: its wait status is then read as before.
        deadline = time.monotonic() + EXIT_GRACE
        last, still = _last_word(rd, pid, deadline)
        os.close(rd)
        if isinstance(last, tuple) and last[:1] == (_EXITING,):
            exiting.append(pid)
            _send(replies, {"returncode": last[1]})
        else:
            _send(replies, {"returncode": _wait(pid, 0.0 if still else max(deadline - time.monotonic(), 0.0))})


def _last_word(rd: int, pid: int, deadline: float) -> tuple[Any | None, bool]:
    """The last message of child ``pid`` on ``rd`` by ``deadline``: (None, False) past it or at EOF, and
    (None, True) as soon as the child is still (harness.run.timeouts.Stillness: asleep, using no CPU). A child that
    deadlocks in its clean-up (TVM's after an out-of-range write: glibc's abort path waiting on the allocator's
    lock, every thread on a futex) was waited for the whole EXIT_GRACE, five times a repeated cell (issue #38)."""
    return _await(rd, deadline, Stillness(), pid)


def _await(fd: int, deadline: float, stillness: Stillness | None, pid: int) -> tuple[Any | None, bool]:
    """The next message on ``fd`` by ``deadline``: (None, False) past it, and (None, True) as soon as
    ``stillness`` finds the child ``pid`` and its descendants still (a deadlock: harness.run.timeouts)."""
    while True:
        now = time.monotonic()
        if now >= deadline:
            return None, False
        wait = deadline - now if stillness is None else min(deadline - now, STILL_POLL)
        if select.select([fd], [], [], wait)[0]:
            return _recv(fd), False
        if stillness is not None and stillness.still(pid, time.monotonic()):
            return None, True


class Template:
    """A process forked from a worker whose framework is imported and which has run no case yet.

    Its children call ``run_case(*args)`` for each request and ``release(args[0])`` after it (the worker's own
    functions: passed in, so this module needs nothing of the worker's). ``close_fds`` are the worker's own channel
    descriptors: the template must not hold them open, or the harness would not see the worker's end when it dies.
    """

    def __init__(self, run_case: RunCase, release: Release, close_fds: tuple[int, ...] = ()) -> None:
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(req_w)
                os.close(rep_r)
                for fd in close_fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                _serve(req_r, rep_w, run_case, release)
            except BaseException:
                code = 70
            os._exit(code)
        os.close(req_r)
        os.close(rep_w)
        self.pid, self._requests, self._replies = pid, req_w, rep_r
        self.still_window = STILL_WINDOW  # seconds a case's processes may sleep, using no CPU, before it is killed

    def run(self, args: tuple[Any, ...], timeout: float, notify: Callable[[str], None] | None = None
            ) -> dict[str, Any] | None:
        """Run ``run_case(*args)`` in a fresh child; None if the template itself is gone.

        Returns ``{"result": dict | None, "returncode": int | None, "timed_out": bool}``. result None: the child
        died before answering, or was killed when no answer had come within ``timeout`` seconds of its case's
        start (timed_out; its mark "start", passed on to ``notify`` as "done" is: decoding the inputs and encoding
        the result are not the case's time, TRANSFER_TIMEOUT bounds them; ``"transfer": True`` when that ran out).
        returncode None: it answered but hung on its way out, or was killed then. ``"still": seconds`` when the
        child was killed before ``timeout`` because it and its descendants slept that long using no CPU
        (harness.run.timeouts.Stillness: a deadlock).
        """
        try:
            _send(self._requests, args)
            started = _recv(self._replies)
            if started is None:
                return None
            transfer, still, stillness = True, False, None
            deadline = time.monotonic() + TRANSFER_TIMEOUT
            while True:
                stillness = None if transfer else Stillness(self.still_window)  # its futex window at most this
                answer, still = _await(self._replies, deadline, stillness, started["pid"])
                if answer is None or _MARK not in answer:
                    break
                transfer = answer[_MARK] != "start"
                deadline = time.monotonic() + (TRANSFER_TIMEOUT if transfer else timeout)
                if notify is not None:
                    notify(answer[_MARK])
            timed_out = answer is None
            if timed_out:
                try:
                    os.kill(started["pid"], signal.SIGKILL)
                except ProcessLookupError:
                    pass
                answer = _recv(self._replies)  # the template reports the child it reaps
                while answer is not None and _MARK in answer:  # a mark the child sent as it was killed
                    answer = _recv(self._replies)
            ended = _recv(self._replies)
        except OSError:
            return None
        if answer is None or ended is None:
            return None
        if timed_out:
            # An answer that arrived as the child was killed is still its answer; its exit status is not.
            late = answer["result"] is None
            return {"result": answer["result"], "returncode": None, "timed_out": late,
                    **({"transfer": True} if late and transfer else {}),
                    **({"still": stillness.waited} if late and still and stillness else {})}
        return {"result": answer["result"], "returncode": ended["returncode"], "timed_out": False}

    def close(self) -> None:
        """Stop the template (it exits when its request pipe closes) and reap it."""
        for fd in (self._requests, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
