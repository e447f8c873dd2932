"""Running adapters in worker interpreters through execnet, so that a crash or a hang costs one case, not the run.

Why execnet and not a hand-written process pool: execnet already gives us a worker in *any* interpreter
(``popen//python=...`` — MXNet's virtual environment with numpy<1.24 next to TensorFlow's with numpy 2), a
channel that carries builtins, and a receive timeout. What it does not give is a verdict on a dead worker, so this
module adds only that: when the channel breaks, the worker's exit status says which signal killed it; when the
receive times out, the worker is killed and the case recorded as ``timeout``. Workers stay warm across cases (the
framework is imported once), and a replacement starts on the next case after a crash.

Risky cases (:func:`is_risky`: out-of-bounds, empty, negative indices) may corrupt memory without dying on
the spot. Each runs in a forked child of a template process that the worker forks right after importing its
framework (:mod:`harness.run.forkrun`), so the child's death, during the case or on its way out, is charged to that
case alone while the warm worker goes on. Where there is no fork (or ``GSC_ISOLATION_FORK=0``), such a case runs
in the worker, which is then stopped and its exit status checked.
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import Any

import execnet
import numpy as np

from gather_scatter_conformance.harness.run.machine import family, resident
from gather_scatter_conformance.harness.run.timeouts import FirstTry
from gather_scatter_conformance.resources import PACKAGE
from gather_scatter_conformance.vocab.record import INTERRUPTED, TOO_LARGE

# The job key by which an earlier witness of a cell's hang reaches Isolated.run, which takes it out of the job before a
# worker sees it: a first try that hangs is then the hang, with no second try. The witness is a phrase (the cell's
# result-cache entry hung on both tries: harness.run.cache.hung_before), or a function of the framework's version, as
# its worker said it, giving one or None (its baseline labels the cell a hang on that release).
HUNG_BEFORE = "hung_before"
HangWitness = str | Callable[[str], str | None]

# Messages travel as one pickled blob each way: execnet's own serializer walks every object in Python, which costs
# more than the case itself for small cases. Both ends are this project's interpreters (Python >= 3.10), so
# protocol 5 is understood by both.
_REMOTE = """
import importlib.util
import os
import pickle
import sys
os.environ.update(__ENV__)  # the adapter's worker_env for this worker's variants: set before any framework import
# The parent's own copy of the package, loaded by its path: another interpreter (a framework's own environment) may
# not have it installed, and putting the parent's site-packages on its sys.path would shadow that environment's own
# numpy. The adapters are the ones the parent resolved, so a third party's reach the worker as they are.
_spec = importlib.util.spec_from_file_location("gather_scatter_conformance", __INIT__,
                                               submodule_search_locations=[__PACKAGE__])
sys.modules[_spec.name] = _module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
from gather_scatter_conformance import adapters
adapters.use(__TABLE__)
from gather_scatter_conformance.harness.run.faults import fault
from gather_scatter_conformance.harness.run.worker import (describe, prepare_call, run_case, run_forked,
                                                           start_template, stop_templates)
try:  # the channel's own descriptors: forked templates close them, so this worker's end stays visible
    _FDS = (channel.gateway._io.infile.fileno(), channel.gateway._io.outfile.fileno())
except Exception:
    _FDS = ()
while True:
    msg = channel.receive()
    if msg is None:
        break
    kind, args = msg
    try:
        args = pickle.loads(args)
        if kind == "run":  # the case's marks ("start", "done") tell the parent when its clock runs
            result = run_case(*args, notify=channel.send)
        elif kind == "fork":
            result = run_forked(*args, notify=channel.send)
        elif kind == "prepare":
            result = prepare_call(*args)
        else:
            result = describe(*args[:1])
            if len(args) > 1 and args[1]:
                result["forks"] = start_template(args[0], _FDS)
    except BaseException as exc:  # the worker must answer every message, or the channel dies with it
        result = fault(exc, "worker")  # its own failure (warming a framework up included): no result of a case
    try:
        channel.send(pickle.dumps(result, 5))
    except Exception as exc:  # an adapter returned something pickle cannot carry
        channel.send({"outcome": "harness-error", "error_type": "WorkerError",
                      "error_message": "unsendable result: %r" % exc, "fault": {"phase": "encode"}})
stop_templates()
"""
STARTUP_TIMEOUT = 600.0  # importing a framework (TensorFlow, torch) takes seconds; it is not part of a case's time
FORK_ENV = "GSC_ISOLATION_FORK"  # "0": risky cases retire their worker instead of running in a forked child
DEVICE_ENV = "GSC_WORKER_DEVICE"  # set in a worker that runs one accelerator's cases (worker_key); it never forks
EXIT_GRACE = 60.0  # beyond the case timeout: a forked child's clean-up and exit, and the fork itself
# Carrying a case's inputs to its process and decoding them, and encoding and carrying its result back, are the
# harness's work: outside the case timeout (run_case's marks), bounded by this instead.
TRANSFER_TIMEOUT = 600.0
# Signals no call of a case sends itself: the OOM killer's SIGKILL, a job limit's or a person's SIGTERM. A case's own
# crash is SIGSEGV, SIGABRT, SIGFPE, SIGBUS or SIGILL (or a NativeCrash's).
OUTSIDE_SIGNALS = ("SIGKILL", "SIGTERM")
# A worker process (or the forked child running a risky case) whose resident memory passes this is stopped, and its
# case charged as too large for this machine: a harness-error in fault phase TOO_LARGE, never a crash, so that one
# case that materialises gigabytes (an output the input budget cannot see) costs itself, not the run (the OOM
# killer would take a random process, or the machine). $GSC_WORKER_MEMORY in GiB (0: no limit); by default a third
# of the machine's memory: two pytest-xdist workers' cases at once and the rest still fit.
MEMORY_ENV = "GSC_WORKER_MEMORY"
# How many framework worker processes an executor keeps warm: past it, the one used least recently is stopped (its
# memory freed) when another starts. A run's items come worker by worker (pytest_plugin.by_worker), so a session
# needs one at a time, and a few more cost nothing but memory: four hold one framework's every environment (Keras's
# four backends); $GSC_WARM_WORKERS sets it (0: no limit).
WARM_ENV = "GSC_WARM_WORKERS"
WARM_DEFAULT = 4
_POLL_FIRST, _POLL_MOST = 0.05, 0.5  # seconds between memory checks while a case runs: most cases end before one


def signal_name(returncode: int | None) -> str | None:
    """``SIGSEGV`` for a process killed by signal 11 (returncode -11); None for a normal exit."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def memory_limit() -> int | None:
    """The bytes of resident memory a worker process may hold (MEMORY_ENV), or None for no limit. Raises
    ValueError naming the variable for a value that is not a number."""
    given = os.environ.get(MEMORY_ENV, "").strip()
    if given:
        try:
            gib = float(given)
        except ValueError:
            raise ValueError(f"{MEMORY_ENV}={given!r}: not a number of GiB (0: no limit)") from None
        return int(gib * 2**30) if gib > 0 else None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return max(total // 3, 2 * 2**30)


class _TooLarge(Exception):
    """A process of a worker passed the memory limit while a case ran: its resident bytes."""


class _Worker:
    def __init__(self, python: str, env: tuple[tuple[str, str], ...] = ()) -> None:
        self.python = python
        self.gateway = execnet.makegateway(f"popen//python={python}")
        from gather_scatter_conformance import adapters

        source = (_REMOTE.replace("__INIT__", repr(str(PACKAGE / "__init__.py"))).replace("__ENV__", repr(dict(env)))
                  .replace("__PACKAGE__", repr(str(PACKAGE))).replace("__TABLE__", repr(adapters.table())))
        self.channel = self.gateway.remote_exec(source)
        self.warm: set[str] = set()
        self.ran = 0  # cases run in this process itself (not in its forked children)

    @property
    def pid(self) -> int:
        return int(self.gateway._io.popen.pid)

    def receive(self, timeout: float, limit: int | None) -> Any:
        """The worker's next message within ``timeout`` seconds (execnet.TimeoutError after it). With a memory
        ``limit``, the largest resident process of the worker's family is checked between short waits: _TooLarge
        when it is past the limit. (The largest, not the sum: a forked child shares its template's pages.)"""
        if limit is None:
            return self.channel.receive(timeout=timeout)
        deadline, wait = time.perf_counter() + timeout, _POLL_FIRST
        while True:
            left = deadline - time.perf_counter()
            try:
                return self.channel.receive(timeout=max(min(wait, left), 0.001))
            except execnet.TimeoutError:
                if left <= wait:
                    raise
            used = max(resident(p) for p in family(self.pid))
            if used > limit:
                raise _TooLarge(used)
            wait = min(wait * 2, _POLL_MOST)

    def kill(self) -> int | None:
        """Kill the worker's descendants (its template, a risky case's child), then the worker; its exit status.
        The worker alone would leave them running: a template waiting on a child that converts at full CPU outlived
        a run stopped by SIGTERM (2026-11-30), and a template outlives every worker killed on a timeout."""
        for pid in reversed(family(self.pid)[1:]):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        io = self.gateway._io  # execnet exposes the Popen only here; we need its exit status
        try:
            io.kill()
        except OSError:
            pass
        return self.returncode()

    def returncode(self) -> int | None:
        popen = self.gateway._io.popen
        for _ in range(50):  # the child may still be dying when the channel reports EOF
            if popen.poll() is not None:
                return popen.returncode
            time.sleep(0.02)
        return popen.poll()

    def close(self) -> int | None:
        """Stop the worker and return its exit status (negative: killed by that signal, e.g. at exit)."""
        try:
            self.channel.send(None)
            self.channel.waitclose(timeout=30)
        except (OSError, EOFError, execnet.TimeoutError, execnet.RemoteError, ValueError):
            popen = self.gateway._io.popen
            if popen.poll() is not None:
                return popen.returncode  # it had died already: that status is the finding
            self.kill()
            return None
        popen = self.gateway._io.popen
        try:
            self.gateway.exit()  # asks the remote interpreter to finish; its exit runs the C++ destructors
            popen.wait(timeout=30)
        except Exception:
            self.kill()
            return None  # hung on exit: no signal of its own to report
        return popen.returncode


class Isolated:
    """An executor whose workers run in separate processes: one per framework (so one framework's crash does not
    cost the others their warm state), each in that framework's interpreter, kept warm across cases."""

    def __init__(self, pythons: dict[str, str] | None = None, timeout: float = 120.0, fork: bool | None = None,
                 first_timeout: float | None = None) -> None:
        self.pythons = pythons or {}
        self.timeout = timeout
        # A case's first try may be cut shorter than ``timeout``, by what this executor saw its system's cases take
        # (harness.run.timeouts); ``first_timeout`` fixes it instead.
        self.first_try = FirstTry(timeout, fixed=first_timeout)
        # Risky cases in forked children of a template (default where the OS can fork), else in retired workers.
        self.fork = (os.environ.get(FORK_ENV, "1") != "0") if fork is None else fork
        self.fork = self.fork and hasattr(os, "fork")
        # (framework, its worker_env) -> the worker: an adapter whose variants need different environments
        # (Keras's backend, chosen at import) gets one worker per environment.
        self._workers: dict[tuple[str, tuple[tuple[str, str], ...]], _Worker] = {}
        self._versions: dict[str, str] = {}  # framework -> version, as its worker said when it warmed up
        self.memory_limit = memory_limit()
        self._scratch: str | None = None  # the workers' TMPDIR (scratch()), made when the first worker starts
        self.warm_limit = warm_limit()

    def python_for(self, framework: str) -> str:
        """The interpreter that runs ``framework`` (this one unless configured otherwise)."""
        return self.pythons.get(framework, sys.executable)

    @staticmethod
    def worker_key(framework: str, variant: str, device: str = "cpu") -> tuple[str, tuple[tuple[str, str], ...]]:
        """Which worker runs ``framework``'s ``variant`` on ``device``: one per framework, environment it asks for
        (Adapter.worker_env) and accelerator (a GPU's cases never share a process with the CPU's)."""
        from gather_scatter_conformance import adapters

        try:
            env = adapters.get(framework).worker_env(variant) if variant else {}
        except Exception:  # an adapter that does not load: its worker says so, as a harness fault of the case
            env = {}
        if device != "cpu":
            env = {**env, DEVICE_ENV: device}
        return framework, tuple(sorted(env.items()))

    def key_of(self, framework: str, variant: str, payload: dict[str, Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
        """The worker_key of a case's ``payload``: its framework's variant on the payload's device."""
        return self.worker_key(framework, variant, payload.get("device") or "cpu")

    def forks(self, key: tuple[str, tuple[tuple[str, str], ...]]) -> bool:
        """Whether the worker ``key`` names has a template, whose forked children run its risky cases.

        Never off the CPU: a GPU context does not survive a fork, and the warm-up before the template is forked
        can start one (torch.compile's warm-up does: on an H200 every GPU case forked from it failed with "Cannot
        re-initialize CUDA in forked subprocess", 2026-11-28). A risky GPU case runs in a worker of its own.
        """
        return self.fork and not off_cpu(key)

    def _worker(self, key: tuple[str, tuple[tuple[str, str], ...]]) -> _Worker:
        worker = self._workers.pop(key, None)  # put back last: the dict's order is least recently used first
        if worker is None:
            self._cool(self.warm_limit - 1)
            env = key[1] + cpu_only(key) + (("TMPDIR", self.scratch()),)
            worker = _Worker(self.python_for(key[0]), env)
        self._workers[key] = worker
        return worker

    def _cool(self, keep: int) -> None:
        """Stop the workers used least recently until at most ``keep`` are warm (none when the limit is 0)."""
        while self.warm_limit and len(self._workers) > max(keep, 0):
            self._workers.pop(next(iter(self._workers))).close()

    def scratch(self) -> str:
        """The temporary folder of this executor's workers and their forked children (their ``TMPDIR``), removed
        by :meth:`close`. Frameworks write there and count on an exit handler to clean up, which a forked child
        (``os._exit``) or a killed worker never runs: TensorFlow's autograph leaves a source file per converted
        function (``__autograph_generated_file*.py``), so a run left hundreds in the system's /tmp."""
        if self._scratch is None or not os.path.isdir(self._scratch):
            self._scratch = tempfile.mkdtemp(prefix="gsc-workers-")
        return self._scratch

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Run one case in the framework's worker; a dead or stuck worker becomes a crash or timeout result (a
        timeout only when a second try in a fresh process times out too, or when the job's ``HUNG_BEFORE`` witness
        says the cell hung when last measured; a crash only when the case caused it: see _charge). A timeout whose
        second try hung too says ``hangs: 2``.

        A risky case (``payload["fresh"]``) runs in a forked child of the worker's template: a child that dies
        during the case is a crash, one that returns a value and dies on its way out corrupted memory (a crash
        too), one that does not answer in time is a timeout; the worker itself stays warm. Without a template the
        case runs in the worker, and when it returned a value the worker is stopped and its exit status checked:
        an out-of-range write can corrupt the heap and kill the process only at exit, and that crash belongs to
        this case, not to whichever case would have run next.

        The case's clock runs from its worker's mark "start" (inputs decoded) to "done" (the value read back):
        sending and decoding inputs, and encoding and sending the result, are the harness's (TRANSFER_TIMEOUT).
        """
        witness: HangWitness | None = payload.get(HUNG_BEFORE)
        if witness:
            payload = {k: v for k, v in payload.items() if k != HUNG_BEFORE}
        first = self.first_try.limit((framework, variant))
        result = self._charge(framework, variant, payload, *self._run_once(framework, variant, payload, first))
        earlier = None
        if result.get("outcome") == "timeout" and witness:
            earlier = witness(self._versions.get(framework, "")) if callable(witness) else witness
        if earlier:
            # The same cell hung when it was last measured (its result-cache entry: same code, packages, platform
            # and case; or its baseline on this release): that is the second witness a second try would be.
            result = {**result, "error_message": f"{result.get('error_message', '')}; {earlier}, so no second try"}
        elif result.get("outcome") == "timeout":
            # A loaded machine can stall a call past the limit (on 2026-11-27, two full runs on two cores met the
            # OOM killer, and two converter paths "hung" on cases that finish in seconds), and the first try's
            # limit may be shorter than the case timeout: a hang is recorded only when a second try, in a fresh
            # process, has no result within the full case timeout either.
            again = self._charge(framework, variant, payload,
                                 *self._run_once(framework, variant, payload, self.timeout))
            if again.get("outcome") == "timeout":
                said, said_again = result.get("error_message", ""), again.get("error_message", "")
                tail = "again" if said_again == said else said_again
                # Two tries hung, the second alone in a fresh process: two of the hangs that settle a repeated cell
                # (harness.judge.repeats.hangs_in).
                result = {**result, "hangs": 2,
                          "error_message": f"{said}; on a second try in a fresh process: {tail}"}
            else:
                result = again
        self.first_try.seen((framework, variant), result)
        if result.get("outcome") in ("crash", "timeout") and not result.get("api"):
            # The process that made the call is gone, and the call with it: ask a live worker to prepare it again
            # (without running it), so the record names the call that crashed and its repro can make it.
            prepared = self._run(self.key_of(framework, variant, payload), ("prepare", (framework, variant, payload)),
                                 self.timeout)
            result = {**result, "api": prepared.get("api", ""), "source": prepared.get("source", "")}
        if not result.get("framework_version") and framework in self._versions:
            # A process that died answered nothing: the crash is still this version's.
            result = {**result, "framework_version": self._versions[framework]}
        return result

    def _charge(self, framework: str, variant: str, payload: dict[str, Any], result: dict[str, Any], alone: bool
                ) -> dict[str, Any]:
        """The result a crash is charged as, once the case is known to have caused it (issue #37).

        - A process killed by a signal no case sends itself (OUTSIDE_SIGNALS: the OOM killer's SIGKILL) is rerun
          once, alone in a fresh process; if that is killed from outside too, the case is *interrupted*: outcome
          ``harness-error``, fault phase ``interrupted``, no verdict and never a crash.
        - A crash of a process that had run other cases (the shared worker: an earlier case may have damaged its
          heap, as with an OpenVINO SIGABRT charged to a Gather-7 case that conforms alone) is rerun alone in a
          fresh process: only a crash there too is the case's; otherwise the fresh run's result stands.

        ``alone``: ``result`` came from a process that ran this case only. What came before the result that stands
        is said in its ``rerun`` (the record's reason carries it).
        """
        attempts = [result]
        kills = int(_outside(result))
        while True:
            last = attempts[-1]
            if _outside(last):
                if kills >= 2:
                    break
            elif not (len(attempts) == 1 and not alone and last.get("outcome") == "crash"):
                break
            again = self._alone(framework, variant, payload)
            attempts.append(again)
            kills += int(_outside(again))
        if len(attempts) == 1:
            return result
        story = _story(attempts, alone)
        if kills >= 2:
            return {"outcome": "harness-error", "error_type": "WorkerKilled",
                    "error_message": f"worker killed from outside ({_signal(attempts)}), twice: {story}",
                    "fault": {"phase": INTERRUPTED},
                    "duration_s": sum(float(a.get("duration_s") or 0.0) for a in attempts)}
        return {**attempts[-1], "rerun": story}

    def _alone(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The case run again alone in a fresh process: a forked child of the clean template, else a worker that
        has run no case (a warm one that has is stopped first)."""
        key = self.key_of(framework, variant, payload)
        if not self.forks(key):
            worker = self._workers.get(key)
            if worker is not None and worker.ran:
                del self._workers[key]
                worker.close()
        return self._run_once(framework, variant, {**payload, "fresh": True}, self.timeout)[0]

    def _run_once(self, framework: str, variant: str, payload: dict[str, Any], timeout: float
                  ) -> tuple[dict[str, Any], bool]:
        """One try, given ``timeout`` seconds; with whether the process that made it ran this case alone (a forked
        child, or a worker's first case)."""
        key = self.key_of(framework, variant, payload)
        if payload.get("fresh") and self.forks(key):
            result = self._run_forked(framework, variant, payload, timeout)
            if result is not None:
                return result, True
        worker = self._workers.get(key)
        alone = worker is None or not worker.ran
        result = self._run(key, ("run", (framework, variant, payload)), timeout)
        worker = self._workers.get(key)
        # A call that raised checked its indices; one that returned a value on a risky input may have written
        # out of bounds, so only then is the worker retired and its exit status checked. Off the CPU it is retired
        # after any risky case: a device-side error (CUDA's "device-side assert triggered") leaves the process's
        # context unusable, and every later case of that worker would fail with it.
        if payload.get("fresh") and worker is not None and off_cpu(key) and result.get("outcome") != "ok":
            del self._workers[key]
            worker.close()
        elif payload.get("fresh") and worker is not None and result.get("outcome") == "ok":
            del self._workers[key]
            name = signal_name(worker.close())
            if name:
                result = {**result, "outcome": "crash", "signal": name, "value": None,
                          "error_message": f"returned {result.get('outcome')}, then the worker died with {name} "
                          "on exit (memory corrupted by the call)"}
        return result, alone

    def _run_forked(self, framework: str, variant: str, payload: dict[str, Any], timeout: float
                    ) -> dict[str, Any] | None:
        """A risky case in a forked child (see run); None when the worker has no template to fork from."""
        start = time.perf_counter()
        message = ("fork", (framework, variant, payload, timeout))
        reply = self._run(self.key_of(framework, variant, payload), message, timeout + EXIT_GRACE)
        if "fallback" in reply:
            return None  # no template to fork from
        if "timed_out" not in reply:
            return reply  # the worker itself failed (to warm up, or died): that result is this case's
        elapsed = time.perf_counter() - start
        result, code = reply.get("result"), reply.get("returncode")
        name = signal_name(code)
        if reply.get("timed_out") and reply.get("transfer"):
            return {**_transfer_fault(TRANSFER_TIMEOUT, "forked process"), "duration_s": elapsed}
        if reply.get("still"):
            return {"outcome": "timeout", "duration_s": elapsed,
                    "error_message": f"no progress for {reply['still']:g} s: its processes slept, using no CPU "
                                     "(a deadlock); killed"}
        if reply.get("timed_out"):
            return {"outcome": "timeout", "duration_s": elapsed,
                    "error_message": f"no result within {timeout:g} s; its process was killed"}
        if result is None:
            what = f"worker died with {name}" if name else f"worker exited with status {code}"
            return {"outcome": "crash", "signal": name, "exit_code": code, "error_message": what,
                    "duration_s": elapsed}
        if name and result.get("outcome") == "ok":
            return {**result, "outcome": "crash", "signal": name, "value": None,
                    "error_message": f"returned ok, then its process died with {name} on exit (memory corrupted "
                    "by the call)"}
        return result

    def _run(self, key: tuple[str, tuple[tuple[str, str], ...]], message: tuple[str, tuple[Any, ...]],
             timeout: float) -> dict[str, Any]:
        framework = key[0]
        worker = self._worker(key)
        start = time.perf_counter()
        stage = "case"  # a case's message: "transfer" until its worker marks "start", and again after "done"
        try:
            if framework not in worker.warm:
                # Import the framework before the case's clock starts, so the timeout measures the case alone;
                # the template for risky cases is forked right then, before the worker runs any case.
                worker.channel.send(("warm", _blob((framework, self.forks(key)))))
                info = _unblob(worker.channel.receive(timeout=STARTUP_TIMEOUT))
                if info.get("outcome") == "harness-error":  # the framework could not be set up in its worker
                    return {**info, "duration_s": 0.0}
                worker.warm.add(framework)
                self._versions[framework] = info.get("framework_version", "")
                start = time.perf_counter()
            if message[0] == "run":
                worker.ran += 1
            worker.channel.send((message[0], _blob(message[1])))
            if message[0] not in ("run", "fork"):
                return _unblob(worker.channel.receive(timeout=timeout))
            stage = "transfer"
            while True:
                reply = worker.receive(timeout if stage == "case" else TRANSFER_TIMEOUT, self.memory_limit)
                if not isinstance(reply, str):
                    return _unblob(reply)
                if reply == "start":
                    stage, start = "case", time.perf_counter()
                else:
                    stage = "transfer"
        except _TooLarge as exc:
            worker.kill()
            self._workers.pop(key, None)
            used, limit = exc.args[0] / 2**30, (self.memory_limit or 0) / 2**30
            return {
                "outcome": "harness-error",
                "error_type": "TooLarge",
                "error_message": f"too large for this machine: its process held {used:.1f} GiB, past the limit of "
                                 f"{limit:.1f} GiB ({MEMORY_ENV}); stopped, no result",
                "fault": {"phase": TOO_LARGE},
                "duration_s": time.perf_counter() - start,
            }
        except execnet.TimeoutError:
            worker.kill()
            self._workers.pop(key, None)
            if stage == "transfer":
                return {**_transfer_fault(TRANSFER_TIMEOUT, "worker"), "duration_s": time.perf_counter() - start}
            return {
                "outcome": "timeout",
                "duration_s": time.perf_counter() - start,
                "error_message": f"no result within {timeout:g} s; worker killed",
            }
        except execnet.RemoteError as exc:  # the worker loop itself failed: report it, start afresh next time
            worker.kill()
            self._workers.pop(key, None)
            return {
                "outcome": "harness-error",
                "error_type": "RemoteError",
                "error_message": str(exc).strip()[-2000:],
                "fault": {"phase": "worker", "traceback": str(exc).strip()[-4000:]},
                "duration_s": time.perf_counter() - start,
            }
        except (EOFError, OSError, execnet.gateway_base.GatewayReceivedTerminate) as exc:
            code = worker.returncode()
            self._workers.pop(key, None)
            name = signal_name(code)
            what = f"worker died with {name}" if name else f"worker exited with status {code}"
            return {
                "outcome": "crash",
                "signal": name,
                "exit_code": code,
                "error_message": f"{what} ({exc!r})" if not name else what,
                "duration_s": time.perf_counter() - start,
            }

    def close(self) -> None:
        """Stop every worker, and remove their temporary folder (:meth:`scratch`)."""
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


def warm_limit() -> int:
    """How many framework workers an executor keeps warm (:data:`WARM_ENV`, else :data:`WARM_DEFAULT`; 0: all)."""
    text = os.environ.get(WARM_ENV, "").strip()
    if not text:
        return WARM_DEFAULT
    if not text.isdigit():
        raise ValueError(f"{WARM_ENV}={text!r}: a whole number of warm framework workers (0: no limit)")
    return int(text)


def cpu_only(key: tuple[str, tuple[tuple[str, str], ...]]) -> tuple[tuple[str, str], ...]:
    """What the environment of a CPU worker (``key``: worker_key) adds to its own: no CUDA device visible. Its
    cases never use one, and a framework that starts a GPU context it does not use breaks the children forked from
    it: on an H200
    (2026-11-28) torch 2.11's inductor did so while compiling for the CPU, and 103 risky CPU cases of
    ``/compile`` variants failed with "Cannot re-initialize CUDA in forked subprocess". A GPU's worker (DEVICE_ENV)
    adds nothing."""
    return () if off_cpu(key) else (("CUDA_VISIBLE_DEVICES", ""),)


def off_cpu(key: tuple[str, tuple[tuple[str, str], ...]]) -> bool:
    """Whether the worker ``key`` names runs an accelerator's cases (worker_key set DEVICE_ENV in it)."""
    return DEVICE_ENV in dict(key[1])


def _outside(result: dict[str, Any]) -> bool:
    """True for a process killed by a signal no case sends itself (OUTSIDE_SIGNALS)."""
    return result.get("outcome") == "crash" and result.get("signal") in OUTSIDE_SIGNALS


def _signal(attempts: list[dict[str, Any]]) -> str:
    return "/".join(dict.fromkeys(a["signal"] for a in attempts if _outside(a)))


def _did(result: dict[str, Any]) -> str:
    """What one try of a case did, as a clause ("returned a value", "raised IndexError", ...)."""
    outcome = result.get("outcome")
    if outcome == "ok":
        return "returned a value"
    if outcome == "error":
        return f"raised {result.get('error_type')}"
    if outcome == "crash":
        return f"crashed ({result.get('error_message')})"
    if outcome == "timeout":
        return "hung"
    if outcome == "harness-error":
        return f"failed in the harness ({result.get('error_type')})"
    return f"was {outcome}"


def _story(attempts: list[dict[str, Any]], alone: bool) -> str:
    """What the tries of a rerun case did, in order: the record's reason says it beside the result that stands."""
    first, parts = attempts[0], []
    if _outside(first):
        where = "its process" if alone else "the shared worker"
        parts.append(f"{where} was killed from outside ({first['signal']}) during this case")
    else:
        parts.append(f"the shared worker crashed on this case ({first.get('error_message')})")
    for again in attempts[1:]:
        if _outside(again):
            parts.append(f"rerun alone in a fresh process, it was killed from outside ({again['signal']}) again")
        elif again.get("outcome") == "crash" and first.get("outcome") == "crash" and not _outside(first):
            parts.append(f"it crashed again alone in a fresh process ({again.get('error_message')})")
        else:
            parts.append(f"alone in a fresh process it {_did(again)}")
    return "; ".join(parts)


def _transfer_fault(limit: float, where: str) -> dict[str, Any]:
    """A case whose inputs or result were not carried within ``limit`` seconds: the harness's fault, no hang."""
    return {"outcome": "harness-error", "error_type": "TransferTimeout",
            "error_message": f"the case's inputs or result were not carried to or from the {where} within "
                             f"{limit:g} s; it was killed",
            "fault": {"phase": "transfer"}}


def _blob(obj: Any) -> bytes:
    return pickle.dumps(obj, 5)


def _unblob(reply: Any) -> dict[str, Any]:
    # A worker answers with a pickled dict, or (when pickling failed) a plain dict that execnet carried.
    return pickle.loads(reply) if isinstance(reply, bytes) else reply


# The tag of a case found to damage a warm worker's heap without a sign at the time (measured, e.g. by running it
# alone and checking the worker's exit status): it runs in a forked child, so the damage is charged to it.
MEMORY_UNSAFE = "memory-unsafe"


def is_risky(op: str, dimension: str | None, tags: list[str], inputs: Mapping[str, Any] | None = None) -> bool:
    """Cases whose inputs may make a framework read or write out of bounds: run them in a process of their own.

    Out-of-range and empty inputs; negative indices too (a dimension or tag that says so, or an ``indices`` input
    holding one), for every operator: a kernel that neither wraps nor checks them reads or writes before the
    buffer (MXNet 1.9.1's scatters), and a heap damaged so in the shared worker kills whichever case runs later.
    """
    if dimension and (dimension.startswith(("oob", "empty")) or _negative_indices(dimension)):
        return True
    if {"out-of-bounds", "crash", MEMORY_UNSAFE} & set(tags) or any(_negative_indices(t) for t in tags):
        return True
    indices = (inputs or {}).get("indices")
    return (isinstance(indices, np.ndarray) and indices.dtype.kind in "iu" and indices.size > 0
            and bool(indices.min() < 0))


def _negative_indices(name: str) -> bool:
    """A dimension or tag about negative index values (negative-indices, write-index-negative, circular-negative),
    not a negative axis or batch_dims."""
    return "negative" in name and "axis" not in name and "batch" not in name
