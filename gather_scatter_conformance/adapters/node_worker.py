"""A persistent Node.js child process that an adapter talks to in JSON lines: for runtimes that live in Node
(TensorFlow.js, adapters/tfjs.py).

The adapter runs inside the harness's execnet worker, which is already crash- and hang-isolated; this module adds
what a second process needs on top: a Node that dies mid-call raises :class:`NativeCrash` (the harness records a
crash charged to the case) and the next call starts a fresh one; Node dies with its parent (``PR_SET_PDEATHSIG``
on Linux, and it exits when its stdin closes), so a worker the harness kills for a hang leaves no Node behind;
and a forked child of the worker (the harness runs risky cases in forked children) never talks to its parent's
Node: it starts its own on its first call.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from gather_scatter_conformance.adapters.base import NativeCrash

STDERR_LINES = 40  # of Node's stderr kept for a crash's message
_LIVE: weakref.WeakSet[NodeProcess] = weakref.WeakSet()
_ABANDONED: list[subprocess.Popen[str]] = []  # a forked child's copies of its parent's Node pipes (see _forget)


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that has the kernel kill the child when its parent dies (Linux); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here: the child only calls it
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, signal.SIGKILL)

    return preexec


class NodeProcess:
    """One ``node SCRIPT ARGS...`` child, started on the first :meth:`request` and after any crash."""

    def __init__(self, node: str, script: str, args: Sequence[str] = (), cwd: str | None = None) -> None:
        self.command = [node, script, *args]
        self.cwd = cwd
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        _LIVE.add(self)

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one JSON request and return Node's JSON reply. Raises NativeCrash when Node dies before it
        replies (the signal's name where a signal killed it); the next request starts a fresh Node."""
        proc = self._started()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            raise self._crashed(proc)
        return json.loads(line)

    def close(self, timeout: float = 3.0) -> int | None:
        """Close Node's stdin (it exits when it has finished) and wait for it; returns its exit status (None
        when none was running). Kills it if it does not exit in ``timeout`` seconds."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        try:
            if proc.stdin:
                proc.stdin.close()
            return proc.wait(timeout)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            return proc.wait()

    def _started(self) -> subprocess.Popen[str]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._stderr.clear()
        self._proc = subprocess.Popen(
            self.command, cwd=self.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", bufsize=1, preexec_fn=_die_with_parent(),
        )
        threading.Thread(target=self._drain, args=(self._proc,), daemon=True).start()
        return self._proc

    def _drain(self, proc: subprocess.Popen[str]) -> None:
        """Keep the last lines of Node's stderr (its notices, a crash's stack), so the pipe never fills."""
        assert proc.stderr is not None
        for line in proc.stderr:
            if proc is self._proc:
                self._stderr.append(line.rstrip())

    def _crashed(self, proc: subprocess.Popen[str]) -> NativeCrash:
        try:
            code = proc.wait(10)
        except subprocess.TimeoutExpired:  # its stdout closed but it lives on: stop it, the call is lost
            proc.kill()
            code = proc.wait()
        self._proc = None
        name = signal.Signals(-code).name if code < 0 and -code in signal.valid_signals() else None
        tail = " | ".join(line for line in self._stderr if line.strip())[-1500:]
        what = f"killed by {name}" if name else f"exited with status {code}"
        return NativeCrash(f"node {what} during the call" + (f": {tail}" if tail else ""), name)

    def _forget(self) -> None:
        """In a forked child: drop this process's copy of the parent's Node pipes without touching Node.

        Only the raw descriptors are closed. The file objects stay referenced for good and are never used again:
        the parent's stderr-draining thread held its reader's lock when the process forked, and that lock is
        never released in the child (closing or finalizing the object would wait on it for ever)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _ABANDONED.append(proc)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                try:
                    if stream is not None:
                        os.close(stream.fileno())  # fileno() reads an attribute: no lock
                except (OSError, ValueError):
                    pass
            proc.returncode = 0  # not this process's child: never wait for it


def _after_fork_in_child() -> None:
    for node in list(_LIVE):
        node._forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
