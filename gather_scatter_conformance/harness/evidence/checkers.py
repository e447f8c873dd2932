"""Running one script under one memory checker: the command, its environment, a timeout, and the raw output.

Nothing here judges what a checker said (:mod:`.parse` does): each function promises a :class:`Run` whose ``ran`` is
False with a ``note`` saying why when the checker is missing, and whose ``output`` is what the checker wrote
(the path of memcheck's XML; Electric Fence's and glibc's messages on standard error).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gather_scatter_conformance import resources

NAMES = ("memcheck", "efence", "malloc")
# The repro of a crash makes its call in a child process unless given --child; the call must run in the checked
# process itself (valgrind follows no children, except the program an adapter makes its calls in: tfjs's Node), and
# other repro scripts ignore the argument.
# Scripts run in the directory the command was started in, as a run's are: a repro finds what the run found there
# (tfjs's node_modules, relative to a checkout's root).
CHILD_ARG = "--child"
_EFENCE = ("/usr/lib/libefence.so.0", "/usr/lib/x86_64-linux-gnu/libefence.so.0", "/usr/lib64/libefence.so.0")
_MALLOC_DEBUG = ("/lib/x86_64-linux-gnu/libc_malloc_debug.so.0", "/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0",
                 "/lib64/libc_malloc_debug.so.0", "/usr/lib64/libc_malloc_debug.so.0")
_TAIL = 20_000  # characters of standard error kept
# --leak-check=no alone still lets a forked child that ends with _exit list every block it holds as a leak (valgrind
# 3.19: 1.7 GB of XML for one paddle script); no leak is an out-of-bounds access, so none is reported
_NO_LEAKS = ("--show-leak-kinds=none", "--errors-for-leak-kinds=none")


@dataclass
class Run:
    """One checker's run of one script: ``exit`` is the return code (negative: killed by that signal; None: it
    did not run or did not finish within the timeout, ``timed_out``)."""

    name: str
    ran: bool
    seconds: float = 0.0
    exit: int | None = None
    timed_out: bool = False
    output: str = ""  # memcheck: the XML file's path; the others: standard error's tail
    stderr: str = ""
    note: str = ""
    followed: tuple[str, ...] = ()  # memcheck following a program the script starts: every process's XML file


def suppressions() -> Path:
    """The suppression file shipped with the package (false alarms of the dynamic loader, CPython, NumPy)."""
    return resources.memcheck_suppressions()


def missing(name: str) -> str | None:
    """Why checker ``name`` cannot run on this machine (what to install), or None when it can."""
    if name == "memcheck":
        return None if shutil.which("valgrind") else "valgrind is not installed (apt-get install valgrind)"
    if name == "efence":
        return None if _first(_EFENCE) else "Electric Fence is not installed (apt-get install electric-fence)"
    if name == "malloc":
        return None  # glibc's perturbation needs nothing; its checking needs libc_malloc_debug (glibc >= 2.34)
    return f"unknown checker {name!r} (known: {', '.join(NAMES)})"


def _first(paths: tuple[str, ...]) -> str | None:
    return next((p for p in paths if os.path.exists(p)), None)


# valgrind 3.19 does not emulate io_uring: a program that waits on a ring's completions waits forever (IREE 3.13's
# runtime opens one for its proactor, and every IREE cell ran into memcheck's timeout; 27 s each without). Under
# memcheck, io_uring_setup fails with ENOSYS, as on a kernel without io_uring, and the program takes its fallback
# (IREE's POSIX proactor).
_IO_URING_SETUP = 425  # one number on every Linux architecture (it came after the syscall tables were unified)


def refuse_io_uring() -> None:
    """In a child before it execs: a seccomp filter under which io_uring_setup fails with ENOSYS and every other
    system call is allowed (it holds for the program and all it starts). OSError where the kernel refuses it."""
    import ctypes
    import errno
    import struct

    # classic BPF over seccomp_data: load the syscall number; io_uring_setup -> ERRNO(ENOSYS), else ALLOW
    program = [(0x20, 0, 0, 0), (0x15, 0, 1, _IO_URING_SETUP), (0x06, 0, 0, 0x00050000 | errno.ENOSYS),
               (0x06, 0, 0, 0x7FFF0000)]
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *ins) for ins in program))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Fprog(len(program), ctypes.addressof(code))
    libc = ctypes.CDLL(None, use_errno=True)
    # PR_SET_NO_NEW_PRIVS (38) first, as an unprivileged filter needs; then PR_SET_SECCOMP (22), SECCOMP_MODE_FILTER
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter refused")


def _execute(name: str, argv: list[str], env: dict[str, str], timeout: float, cwd: Path,
             before: Callable[[], None] | None = None) -> Run:
    """Run ``argv`` in its own process group (``before``: called in the child before it execs); on timeout the whole
    group is killed."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=before)
    timed_out = False
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    except BaseException:  # an interrupted command leaves no checker running behind it
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    seconds = round(time.monotonic() - start, 1)
    text = err.decode("utf-8", "replace")[-_TAIL:]
    return Run(name, True, seconds, None if timed_out else proc.returncode, timed_out, text, text,
               f"did not finish within {timeout:g} s" if timed_out else "")


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "MALLOC_CHECK_", "MALLOC_PERTURB_", "GLIBC_TUNABLES", "PYTHONMALLOC")}
    env.update(extra)
    return env


def plain(script: Path, python: str, timeout: float) -> Run:
    """The script with no checker: what efence's and glibc's runs are compared with (a crash of its own is no
    checker's finding)."""
    return _execute("plain", [python, str(script), CHILD_ARG], _env({}), timeout, Path.cwd())


def _valgrind(xml: Path, follow_forks: bool, follow_exec: bool = False) -> list[str]:
    """memcheck's command line before the program: XML to ``xml``, the shipped suppressions, no leaks, JIT code
    translated again; forked children reported (each to its own file where ``xml`` holds ``%p``) or silent; programs
    the script starts followed (``follow_exec``, each to its own file) or run natively."""
    return ["valgrind", "--tool=memcheck", "--xml=yes", f"--xml-file={xml}", f"--suppressions={suppressions()}",
            "--error-limit=no", "--leak-check=no", *_NO_LEAKS, "--num-callers=24", "--smc-check=all-non-file",
            f"--trace-children={'yes' if follow_exec else 'no'}",
            f"--child-silent-after-fork={'no' if follow_forks else 'yes'}", "--read-inline-info=yes"]


def memcheck(script: Path, python: str, timeout: float, xml: Path, follow: str = "") -> Run:
    """The script under valgrind's memcheck, with the shipped suppressions, its XML written to ``xml`` (what was
    written before a timeout, when it ran out of time; ``output`` is that path). Python allocates with malloc
    (PYTHONMALLOC=malloc) so that memcheck sees every block; code a JIT rewrites is translated again
    (--smc-check); leaks are not looked for (--leak-check=no). ``follow``: the program the script makes its calls in
    (an adapter's ``call_process``, tfjs's ``node``): memcheck follows every program the script starts, each
    process's XML beside ``xml`` (``<stem>.<pid>.xml``, listed in ``followed``), and the note says how many ran."""
    why = missing("memcheck")
    if why:
        return Run("memcheck", False, note=why)
    xml.unlink(missing_ok=True)
    pattern = xml.with_name(f"{xml.stem}.%p.xml")
    for old in xml.parent.glob(f"{xml.stem}.*.xml"):
        old.unlink()
    argv = [*_valgrind(pattern if follow else xml, follow_forks=False, follow_exec=bool(follow)),
            python, str(script), CHILD_ARG]
    run = _execute("memcheck", argv, _env({"PYTHONMALLOC": "malloc"}), timeout, Path.cwd(), refuse_io_uring)
    run.output = str(xml)
    if follow:
        run.followed = tuple(str(p) for p in sorted(xml.parent.glob(f"{xml.stem}.*.xml")))
        programs = [_program(Path(p)) for p in run.followed]
        ran = sum(1 for p in programs if Path(p).name == follow)
        run.note = "; ".join(n for n in (run.note, f"followed into {follow} ({ran} process{'es' if ran != 1 else ''}"
                                          f" of {len(programs)} checked)") if n)
    return run


def _program(xml: Path) -> str:
    """The program a memcheck XML file checked (its preamble's first ``<exe>`` under ``<argv>``), or ""."""
    head = xml.read_text(encoding="utf-8", errors="replace")[:200_000]
    match = re.search(r"<argv>\s*<exe>([^<]*)</exe>", head)
    return match.group(1) if match else ""


def memcheck_batch(scripts: list[Path], python: str, timeout: float,
                   directory: Path) -> tuple[dict[Path, Run], Run]:
    """Each script under memcheck as :func:`memcheck` runs it, but in a forked child of one warm interpreter
    (:mod:`.forked`, which imports what the scripts import, once): the import's minutes under memcheck are paid once
    per batch. Each child's XML is ``<script>.memcheck.xml`` and holds only what that script did after the fork;
    each child gets ``timeout`` seconds. A script the batch did not reach (the driver died or ran out of time) is
    missing from the answer, to be checked again. Returns (script -> its run, the batch process's own run)."""
    why = missing("memcheck")
    if why:
        return {s: Run("memcheck", False, note=why) for s in scripts}, Run("memcheck", False, note=why)
    plan, status = directory / "batch.json", directory / "batch-status.jsonl"
    status.unlink(missing_ok=True)
    plan.write_text(json.dumps({"scripts": [str(s) for s in scripts], "timeout": timeout}))
    pattern = directory / "batch.%p.memcheck.xml"
    argv = [*_valgrind(pattern, follow_forks=True), python, str(resources.forked_driver()), str(plan),
            str(status)]
    # the warm-up imports get one script's allowance, the scripts theirs
    outer = _execute("memcheck", argv, _env({"PYTHONMALLOC": "malloc"}), timeout * (len(scripts) + 1), Path.cwd(),
                     refuse_io_uring)
    out: dict[Path, Run] = {}
    lines = status.read_text(encoding="utf-8").splitlines() if status.exists() else []
    for line in lines:
        try:
            done = json.loads(line)
        except json.JSONDecodeError:  # a torn last line: that script counts as not reached
            continue
        script = Path(done["script"])
        xml = script.with_suffix(".memcheck.xml")
        src = directory / f"batch.{done['pid']}.memcheck.xml"
        if src.exists():
            os.replace(src, xml)
        log = Path(f"{script}.out")
        text = log.read_text(encoding="utf-8", errors="replace")[-_TAIL:] if log.exists() else ""
        run = Run("memcheck", True, done["seconds"], done["exit"], done["timed_out"], str(xml), text,
                  f"did not finish within {timeout:g} s" if done["timed_out"] else "")
        run.note = "; ".join(n for n in (run.note, "forked from a warm interpreter under memcheck") if n)
        out[script] = run
    return out, outer


def efence(script: Path, python: str, timeout: float, below: bool = False) -> Run:
    """The script with Electric Fence's allocator preloaded: every malloc'd block ends at an inaccessible page, so
    the first access past its end faults (SIGSEGV) where it happens (``below``: the page before its start
    instead, EF_PROTECT_BELOW). Python's small objects stay in its own allocator (pymalloc) to keep memory sane."""
    lib = _first(_EFENCE)
    if lib is None:
        return Run("efence", False, note=missing("efence") or "")
    env = _env({"LD_PRELOAD": lib, "EF_ALLOW_MALLOC_0": "1", "EF_PROTECT_BELOW": "1" if below else "0"})
    run = _execute("efence", [python, str(script), CHILD_ARG], env, timeout, Path.cwd())
    run.output = "\n".join(line for line in run.stderr.splitlines() if "Electric Fence" not in line)
    gave_up = gave_up_line(run.stderr)
    if gave_up:
        run.note = (f"Electric Fence gave up ({gave_up}): a page and a guard page per allocation exhaust the "
                    "process's memory mappings (vm.max_map_count); what followed proves nothing")
    return run


def gave_up_line(stderr: str) -> str | None:
    """Electric Fence's own failure message (``ElectricFence Exiting: mprotect() failed: ...``), or None: after it
    the process dies of its own SIGSEGV, whatever the script does."""
    match = re.search(r"Electric ?Fence Exiting:[^\n]*", stderr)
    return match.group(0).strip() if match else None


def malloc_check(script: Path, python: str, timeout: float) -> Run:
    """The script with glibc's heap consistency checks (MALLOC_CHECK_=3 through libc_malloc_debug, which glibc
    2.34 and later need preloaded) and perturbation (freed and new memory filled with 0xa5 / 0x5a): a damaged
    chunk header aborts with glibc's message where glibc next looks at it."""
    env = {"MALLOC_CHECK_": "3", "MALLOC_PERTURB_": "165",
           "GLIBC_TUNABLES": "glibc.malloc.check=3:glibc.malloc.perturb=165"}
    lib = _first(_MALLOC_DEBUG)
    if lib:
        env["LD_PRELOAD"] = lib
    run = _execute("malloc", [python, str(script), CHILD_ARG], _env(env), timeout, Path.cwd())
    if not lib:
        run.note = "libc_malloc_debug.so not found: glibc's perturbation only, no consistency checks"
    return run
