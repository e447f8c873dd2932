"""How long a case's first try may run before the harness suspects a hang (issue #38, item 2).

A hang used to cost the full case timeout (120 s) twice: the first try, then the second try in a fresh process that
tells a hang from a stall of a loaded machine; a memory-unsafe cell that hung repeated that once more. The cases of
one system take similar times (a compile and a call: milliseconds to a few seconds), so once a worker has seen a few
of a system's cases finish, a first try that runs SCALE times longer than the slowest of them is suspect after that
long, never less than FLOOR seconds. The second try keeps the full timeout: only a case that has no result within it
either is recorded as a hang, as before, so a slow case is never called hung sooner than it was; what changes is
that a fast system's hang is known in seconds.

A case can also hang without using the machine: a call that deadlocked (TVM's allocator after an out-of-range
write corrupted the heap: two threads asleep on a futex, no CPU) sleeps until it is killed. :class:`Stillness` sees
that: a forked case whose processes used no CPU and had no thread runnable for STILL_WINDOW seconds is killed then,
as a hang (harness.run.forkrun.Template.run), and its second try too; a case that computes is never still. Where
every thread of them waits on a futex at every look (nothing but their own threads could wake them, and none runs)
FUTEX_WINDOW is enough: a wait on another process (a pipe, a file lock, a timer) keeps the longer window.

What a worker has seen lives in its executor (harness.run.isolation.Isolated): each pytest-xdist worker learns from
the cases it ran, from nothing on a fresh clone, so no file is needed and none can mislead it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from gather_scatter_conformance.harness.run.machine import activity, family, on_futexes

SCALE = 10.0  # the first try may take this many times the slowest finished case of its system and variant
FLOOR = 10.0  # seconds: never less (a loaded machine stalls a millisecond call for seconds)
SEEN_ENOUGH = 3  # finished cases of a system and variant before its first try is shortened
FINISHED = ("ok", "error", "unsupported")
# A deadlock: this long with the case's processes asleep (no thread runnable at any look) and under STILL_CPU
# seconds of CPU between them. Long enough that a wait on another process's lock (a compile cache's, held by another
# pytest-xdist worker for seconds) is not taken for one.
STILL_WINDOW = 20.0
# ... and this long when every thread waited on a futex at each look: the frameworks phase of 2026-11-30 waited out
# such deadlocks (TVM's, MXNet's index_copy: one or two threads in futex_do_wait) for 20 s a try, a core idle each time.
FUTEX_WINDOW = 5.0
STILL_CPU = 0.1  # outcomes whose duration is a call's (a crash or hang says nothing)


@dataclass
class FirstTry:
    """The first-try limit of each (system, variant), learned from the durations of its finished cases.

    ``full``: the case timeout (the second try's limit, and the first's until SEEN_ENOUGH cases have finished).
    ``fixed``: a first-try limit given by the user (``--gsc-first-timeout``), used as is (at most ``full``).
    """

    full: float
    fixed: float | None = None
    scale: float = SCALE
    floor: float = FLOOR
    enough: int = SEEN_ENOUGH
    _slowest: dict[Hashable, float] = field(default_factory=dict)
    _count: dict[Hashable, int] = field(default_factory=dict)

    def seen(self, key: Hashable, result: dict[str, object]) -> None:
        """Learn from one answer for ``key``: only a finished call's ``duration_s`` counts."""
        if result.get("outcome") not in FINISHED:
            return
        duration = result.get("duration_s")
        if not isinstance(duration, (int, float)):
            return
        self._slowest[key] = max(self._slowest.get(key, 0.0), float(duration))
        self._count[key] = self._count.get(key, 0) + 1

    def limit(self, key: Hashable) -> float:
        """Seconds the first try of a case of ``key`` may run: never more than ``full``."""
        if self.fixed is not None:
            return min(self.fixed, self.full)
        if self._count.get(key, 0) < self.enough:
            return self.full
        return min(self.full, max(self.floor, self.scale * self._slowest[key]))


@dataclass
class Stillness:
    """Whether the processes of a case have been still (asleep, using no CPU) for ``window`` seconds, or for
    ``futex_window`` seconds with every thread waiting on a futex at each look: ask :meth:`still` every fraction of
    a second while waiting for the case. ``waited``: the window that ran out."""

    window: float = STILL_WINDOW
    futex_window: float = FUTEX_WINDOW
    cpu: float = STILL_CPU
    processes: Callable[[int], list[int]] = family
    waited: float | None = None
    _since: float | None = None
    _cpu_then: float = 0.0
    _futexes: bool = True

    def still(self, pid: int, now: float) -> bool:
        """True once ``pid`` and its descendants have been still for ``window`` seconds up to ``now``
        (time.monotonic()), or for ``futex_window`` with all their threads on futexes at every look; any thread
        found running, or CPU used past ``cpu``, starts the window again."""
        pids = self.processes(pid)
        used, busy = activity(pids)
        if busy or self._since is None or used - self._cpu_then > self.cpu:
            self._since, self._cpu_then, self._futexes = now, used, True
            return False
        self._futexes = self._futexes and on_futexes(pids)
        window = min(self.window, self.futex_window) if self._futexes else self.window
        if now - self._since >= window:
            self.waited = window
            return True
        return False
