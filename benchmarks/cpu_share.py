"""Where a command's CPU goes (issue #38): the harness's own processes against the frameworks', phase by phase.

    .venv/bin/python benchmarks/cpu_share.py --json results/cpu-share.json -- make report
    .venv/bin/python benchmarks/run.py --only cpu     # gsc run cases/gather.yaml --framework frameworks, under it

Twice a second it reads /proc: the machine's busy and idle CPU time (/proc/stat) and each process's own CPU time
(utime + stime), parent and start. Each ``gsc run`` process (``python -m gather_scatter_conformance run``) is a phase,
from when it was first seen to when it was last seen; in its window:

- **harness**: the run's controller and its pytest-xdist workers: collection, scheduling, the reference engine,
  judging, writing records, the executor's side of each call;
- **frameworks**: the rest of the machine's busy time: the framework workers (the pytest-xdist workers' children,
  or the controller's without pytest-xdist), their templates and forked children: imports, building and compiling,
  the calls, decoding inputs and encoding results. Measured as the busy time less the harness's and this
  sampler's, so nothing else may run meanwhile (the row says what the sampler took);
- **idle**: what more parallelism could use.

A record's ``duration_s`` is the call alone (from its worker's mark "start" to "done"); building, compiling and
converting in ``prepare``, the imports and the forks are the frameworks' too, which is what this part sees. The
harness's share bounds what a free harness would save; the rest is the floor the frameworks set on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script, too

from benchmarks.common import ROOT, Row, print_rows

PERIOD_S = 0.5
RUN_MARK = "gather_scatter_conformance run"
# pytest-xdist sets this in its workers' os.environ once they run, so it is not in their own /proc/PID/environ (what
# a process started with) but is in that of every process they start: the framework workers.
XDIST_MARK = b"PYTEST_XDIST_WORKER="
TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Proc:
    """One process as last seen: its parent, command line, own CPU seconds, and whether a pytest-xdist worker
    started it (XDIST_MARK)."""

    pid: int
    ppid: int
    cmd: str
    cpu: float
    xdist_started: bool
    first: float
    last: float


@dataclass
class Samples:
    """What the sampler saw: processes by (pid, start tick), and the machine's (time, busy s, idle s) over time."""

    procs: dict[tuple[int, int], Proc] = field(default_factory=dict)
    machine: list[tuple[float, float, float]] = field(default_factory=list)


def _machine() -> tuple[float, float]:
    """The machine's busy and idle CPU seconds since boot (/proc/stat's first line)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / TICK, idle / TICK


def _xdist_started(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return XDIST_MARK in f.read()
    except OSError:
        return False


def sample(samples: Samples) -> None:
    """One look at every process and at the machine's CPU counters."""
    now = time.time()
    busy, idle = _machine()
    samples.machine.append((now, busy, idle))
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            key = (int(pid), int(fields[19]))
            cpu = (int(fields[11]) + int(fields[12])) / TICK
            known = samples.procs.get(key)
            if known is None:
                known = samples.procs[key] = Proc(int(pid), int(fields[1]), "", cpu, False, now, now)
            known.cpu, known.last = cpu, now
            if now - known.first < 2.0:  # a child seen between its fork and its exec shows its parent's command
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    known.cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:300]
                known.xdist_started = _xdist_started(pid)
        except (OSError, ValueError, IndexError):
            continue  # gone between the listing and the read


def _busy_between(machine: list[tuple[float, float, float]], start: float, end: float) -> tuple[float, float]:
    """Busy and idle CPU seconds between the samples nearest ``start`` and ``end``."""
    inside = [m for m in machine if start - PERIOD_S <= m[0] <= end + PERIOD_S]
    if len(inside) < 2:
        return 0.0, 0.0
    return inside[-1][1] - inside[0][1], inside[-1][2] - inside[0][2]


def _is_run(proc: Proc) -> bool:
    """A gsc run's own Python process: not the shell make starts it through when its line needs one (quotes)."""
    words = proc.cmd.split()
    return RUN_MARK in proc.cmd and bool(words) and "python" in os.path.basename(words[0])


def _phase_name(cmd: str) -> str:
    words = cmd.split()
    for flag in ("--phase", "--framework"):
        if flag in words and words.index(flag) + 1 < len(words):
            # The argument as make passed it; a quoted phase name arrives whole in argv, which /proc separates by
            # NULs read here as spaces: take the words up to the next option.
            rest = words[words.index(flag) + 1:]
            end = next((i for i, w in enumerate(rest) if w.startswith("--")), len(rest))
            return " ".join(rest[:end])
    return "gsc run"


def phases(samples: Samples, sampler_cpu: float, total_wall: float) -> list[Row]:
    """A row per gsc run seen: the harness's share of the busy CPU in its window, with the rest as context."""
    rows = []
    procs = list(samples.procs.values())
    # This process's own command line names the run it samples (-- python -m gather_scatter_conformance run ...).
    for run in (p for p in procs if _is_run(p) and p.pid != os.getpid()):
        # Its pytest-xdist workers: its children, where their own children say they are (XDIST_MARK); a run without
        # pytest-xdist runs its framework workers as its own children.
        children = [p for p in procs if p.ppid == run.pid and p.first >= run.first - 1]
        child_pids = {c.pid for c in children}
        xdist = any(p.xdist_started and p.ppid in child_pids for p in procs)
        workers = [c for c in children if not c.xdist_started] if xdist else []
        harness = run.cpu + sum(p.cpu for p in workers)
        wall = run.last - run.first
        busy, idle = _busy_between(samples.machine, run.first, run.last)
        own = sampler_cpu * wall / total_wall if total_wall else 0.0
        frameworks = max(busy - harness - own, 0.0)
        share = harness / busy if busy else None
        rows.append(Row("cpu", f"{_phase_name(run.cmd)}: harness share of busy CPU", share, "", None, "share",
                        f"wall {wall:.0f} s; busy {busy:.0f} CPU s, idle {idle:.0f}; harness {harness:.0f} s (the "
                        f"controller {run.cpu:.0f}, {len(workers)} pytest-xdist worker(s) {harness - run.cpu:.0f}); "
                        f"frameworks {frameworks:.0f} s; this sampler about {own:.0f} s",
                        extra={"wall_s": round(wall, 1), "busy_s": round(busy, 1), "idle_s": round(idle, 1),
                               "harness_s": round(harness, 1), "controller_s": round(run.cpu, 1),
                               "xdist_workers": len(workers), "frameworks_s": round(frameworks, 1)}))
    return rows


def measure(command: list[str], cwd: Path = ROOT) -> list[Row]:
    """Run ``command``, sampling the machine while it runs; its rows (a phase per gsc run it made)."""
    samples = Samples()
    done = threading.Event()

    def loop() -> None:
        while not done.is_set():
            sample(samples)
            done.wait(PERIOD_S)

    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.time()
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        code = subprocess.call(command, cwd=cwd)
    finally:
        done.set()
        thread.join()
    after = resource.getrusage(resource.RUSAGE_SELF)
    sampler = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    wall = time.time() - start
    rows = phases(samples, sampler, wall)
    busy, idle = _busy_between(samples.machine, start, start + wall)
    rows.append(Row("cpu", "the whole command", wall, "", None, "s",
                    f"exit {code}; busy {busy:.0f} CPU s, idle {idle:.0f}; this sampler {sampler:.0f} CPU s",
                    extra={"busy_s": round(busy, 1), "idle_s": round(idle, 1), "sampler_s": round(sampler, 1)}))
    return rows


def run(quick: bool = False) -> list[Row]:
    """``gsc run`` of the Gather cases (quick: the seed examples only) on every framework here, under the sampler."""
    cases = "cases/gather.yaml"
    command = [sys.executable, "-m", "gather_scatter_conformance", "run", cases, "--framework", "frameworks",
               "--results", str(ROOT / "results" / "bench-cpu-share.jsonl"), "--no-cache"]
    if quick:
        command += ["-k", "example"]
    return measure(command)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default="", help="also write the rows to this JSON file")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run and sample (after --)")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: benchmarks/cpu_share.py [--json FILE] -- COMMAND ...")
    rows = measure(command, Path.cwd())
    print_rows(rows)
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
