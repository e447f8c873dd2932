"""What this machine offers a run, and what a run takes of it: cores, memory, the memory of a process family, and the
number of workers that fit (issue #38: workers from the machine's cores and memory, not a fixed ``-n 2``).

A run's controller samples the proportional memory (PSS: a page shared by n processes counts 1/n to each) of itself
and every process below it, pytest-xdist's workers and their framework workers included, and its manifest keeps the
peak and the workers it had: the next run of that results file sizes itself from that measurement. Linux only where
/proc is needed; elsewhere the numbers are unknown (None) and the choice falls back to the cores.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

GIB = 2**30
# A worker's memory before a run of the results file has measured one, on the large side: a worker keeps a warm
# process per framework (a path's: a source, a converter and a target), and the converter-paths phase with two
# workers held about 16 GiB of this machine's 24 (2026-11-28). The first run measures its own; the next sizes by it.
DEFAULT_WORKER_GIB = 8.0
# Of the memory available when the run starts, what its workers may plan on at the guessed size: the rest is the
# system's and the controller's, and the slack for a guess that is low.
USABLE_SHARE = 0.8
# ... and at a measured size. A measurement is the whole run's peak, controller included, so it needs no slack of
# its own: 0.8 of it made the converter paths, which peaked at 19.6 GiB on two workers with 22.7 GiB available,
# run their next run on one (2026-11-28).
MEASURED_SHARE = 0.95


def family(pid: int) -> list[int]:
    """``pid`` and its descendants, where /proc lists children; else ``pid`` alone."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            pass
    return out


def resident(pid: int) -> int:
    """The resident bytes of process ``pid`` (0 where it cannot be read: gone, or no /proc)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def activity(pids: list[int]) -> tuple[float, bool]:
    """(CPU seconds the processes ``pids`` have used so far, whether any of their threads is running, runnable or in
    an uninterruptible wait (R or D: a disk or swap read)) from /proc; (0.0, False) for what cannot be read."""
    ticks, busy = 0, False
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15, counted from the state
            if not busy:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/stat") as fh:
                        if fh.read().rpartition(")")[2].split()[0] in ("R", "D"):
                            busy = True
                            break
        except (OSError, ValueError, IndexError):
            continue
    return ticks / _CLOCK_TICKS, busy


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def on_futexes(pids: list[int]) -> bool:
    """True when every thread of the processes ``pids`` waits in the kernel on a futex (its ``wchan``): a lock or a
    condition that only another of their own threads could release, none of which runs. False when a thread waits
    on anything else (a pipe, a socket, a file lock, a timer), or where /proc does not say."""
    seen = False
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/wchan") as fh:
                    if not fh.read().startswith("futex"):
                        return False
            except OSError:
                continue
            seen = True
    return seen


def proportional(pid: int) -> int:
    """Process ``pid``'s proportional set size in bytes (its private pages and its share of shared ones), else its
    resident bytes; 0 where neither can be read."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return resident(pid)


def family_memory(pid: int) -> int:
    """The proportional bytes of ``pid`` and all its descendants together: what the family takes of the machine."""
    return sum(proportional(p) for p in family(pid))


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def available_gib() -> float | None:
    """Memory available to new work now (MemAvailable), in GiB; None where /proc/meminfo does not say."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclass(frozen=True)
class Choice:
    """How many workers a run gets, and the one line that says why."""

    workers: int
    reason: str


def choose_workers(n_cores: int, free_gib: float | None, worker_gib: float | None,
                   measured: bool = False) -> Choice:
    """As many workers as there are cores, and no more than a share of ``free_gib`` holds at ``worker_gib`` a
    worker: MEASURED_SHARE where ``measured`` (worker_gib came from a previous run's peak), else USABLE_SHARE
    (worker_gib guessed: DEFAULT_WORKER_GIB when unknown); at least one."""
    per = worker_gib if worker_gib and worker_gib > 0 else DEFAULT_WORKER_GIB
    measured = bool(measured and worker_gib)
    source = "as the last run of these results measured" if measured else "before any measurement"
    if free_gib is None:
        return Choice(max(1, n_cores), f"{n_cores} cores; available memory unknown")
    fit = int(free_gib * (MEASURED_SHARE if measured else USABLE_SHARE) // per)
    workers = max(1, min(n_cores, fit))
    bound = "cores" if n_cores <= fit else "memory"
    return Choice(workers, f"{n_cores} cores, {free_gib:.1f} GiB available, {per:.1f} GiB a worker {source}: "
                           f"bound by {bound}")


# Reading a process's proportional size (smaps_rollup) makes the kernel walk its page tables: about 28 ms a GiB here,
# some 170 ms a sample for the converter paths' process family, which made their controller the phase's busiest
# process after the two workers (133 CPU s over 26 minutes, benchmarks/cpu_share.py; issue #38). Its resident size
# (statm) costs 0.1 ms. So the sampler reads a process's PSS again only when its resident size moved by more than
# REREAD_SHARE of it (at least REREAD_BYTES), or when its last reading is REREAD_S old; in between that reading stands.
REREAD_SHARE = 0.02
REREAD_BYTES = 32 * 2**20
REREAD_S = 30.0


class PeakSampler:
    """Samples the proportional memory of this process and its descendants (as :func:`family_memory`) every
    ``interval`` seconds in a daemon thread, from :meth:`start` to :meth:`stop`, and keeps the peak (bytes). A
    process whose resident size has not moved since its last reading is counted at that reading (REREAD_SHARE)."""

    def __init__(self, interval: float = 2.0, pid: int | None = None) -> None:
        self.interval = interval
        self.pid = pid or os.getpid()
        self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._readings: dict[int, tuple[int, int, float]] = {}  # pid -> (resident, proportional, when) of its last

    def start(self) -> PeakSampler:
        self._thread = threading.Thread(target=self._run, name="gsc-memory-peak", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        # The first waits are short (a quarter second, doubling up to ``interval``): a run of a few seconds starts
        # its workers and ends them between two 2-second samples, which then saw the controller alone (0.0 GiB,
        # no measurement for the next run's sizing).
        wait = min(0.25, self.interval)
        while True:
            self.sample()
            if self._stop.wait(wait):
                return
            wait = min(wait * 2, self.interval)

    def sample(self) -> int:
        """Measure now; returns this sample (the peak is kept)."""
        clock = time.monotonic()
        readings: dict[int, tuple[int, int, float]] = {}
        for pid in family(self.pid):
            rss = resident(pid)
            last = self._readings.get(pid)
            if (last is None or abs(rss - last[0]) > max(REREAD_BYTES, REREAD_SHARE * last[0])
                    or clock - last[2] > REREAD_S):
                last = (rss, proportional(pid), clock)
            readings[pid] = last
        self._readings = readings  # the processes gone since are forgotten
        now = sum(reading[1] for reading in readings.values())
        self.peak = max(self.peak, now)
        return now

    def stop(self) -> int:
        """Stop sampling (one last sample first); returns the peak in bytes."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.sample()
        return self.peak


def gib(n_bytes: int) -> float:
    """Bytes as GiB, rounded to a tenth."""
    return round(n_bytes / GIB, 1)
