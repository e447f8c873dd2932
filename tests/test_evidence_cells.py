"""Which records gsc memcheck and gsc advisories take: the memory-unsafe class, once per cell, on the CPU, and the
narrowing options."""

from __future__ import annotations

from pathlib import Path

from gather_scatter_conformance.harness.evidence import cells, verdict
from gather_scatter_conformance.vocab.record import Record


def _rec(case: str, framework: str = "tvm", variant: str = "v", **kw) -> Record:
    return Record.read({"case": f"cases/probes/gather.yaml::{case}", "framework": framework, "variant": variant,
                        "device": "cpu", "outcome": "ok", "verdict": "deviates", "dimension": "oob-positive",
                        "label": None, **kw})


def test_the_memory_unsafe_class_once_per_cell() -> None:
    records = [
        _rec("a", label="garbage"), _rec("a", label="alias|garbage", time="later"),  # one cell: the later wins
        _rec("b", label="wrap"),  # a deviation, not memory-unsafe
        _rec("c", label="crash:SIGSEGV", outcome="crash"),
        _rec("d", label="alias", device="gpu"),  # not host memory
        _rec("e", framework="torch~onnx-dynamo~onnxruntime", label="garbage"),  # a converter path
        _rec("f", dimension=None, outcome="crash"),  # a seed case that crashed
        _rec("g", dimension="oob-positive", outcome="crash", label="error"),  # a probe: its label decides
    ]
    chosen = cells.select(records)
    assert sorted(c[0].rpartition("::")[2] for c in chosen) == ["a", "c", "f"]
    assert chosen[("cases/probes/gather.yaml::a", "tvm", "v")].time == "later"
    assert "e" in {c[0].rpartition("::")[2] for c in cells.select(records, paths=True)}
    assert cells.select(records, only="tvm:w") == {}
    # --case narrows, and takes the case's plain deviations too
    assert [c[0].rpartition("::")[2] for c in cells.select(records, cases=["b"])] == ["b"]
    assert [c[0].rpartition("::")[2] for c in cells.select(records, cases=["cases/probes/gather.yaml::c"])] == ["c"]


def test_a_guard_page_fault_claims_a_read_and_says_why() -> None:
    err = {"kind": "other", "what": "killed by SIGSEGV under Electric Fence (without it: exit 0)", "frame": None}
    name, reason = verdict.decide([{"name": "efence", "ran": True, "errors": [err]}])
    assert name == "read" and "does not tell a read from a write" in reason
    # a write any checker proved outranks it
    glibc = {"kind": "invalid-write", "what": "glibc: free(): invalid next size (fast)", "frame": None}
    assert verdict.decide([{"name": "efence", "ran": True, "errors": [err]},
                           {"name": "malloc", "ran": True, "errors": [glibc]}]) == (
        "write", "malloc: glibc: free(): invalid next size (fast)")


def test_unprovable_says_what_did_not_run() -> None:
    runs = [{"name": "memcheck", "ran": False, "note": "valgrind is not installed (apt-get install valgrind)"},
            {"name": "malloc", "ran": True, "seconds": 3.0, "exit": 0, "errors": [], "note": ""},
            {"name": "efence", "ran": True, "seconds": 60.0, "exit": None, "timed_out": True, "errors": []}]
    assert verdict.decide(runs) == ("unprovable", "memcheck: not run (valgrind is not installed (apt-get install "
                                    "valgrind)); malloc: no heap message (3 s, exit 0); efence: did not finish "
                                    "within 60 s, 0 errors reported before")


def test_the_tally_counts_each_cell_once_by_its_last_line() -> None:
    from gather_scatter_conformance.harness.evidence import verdict

    def line(case: str, fw: str, v: str) -> dict:
        return {"case": case, "framework": fw, "variant": "x", "verdict": v}

    lines = [line("a", "tvm", "unprovable"), line("a", "tvm", "read"), line("b", "tvm", "write"),
             line("a", "paddle", "write"), line("c", "paddle", "uninitialised")]
    counts = verdict.tally(lines)
    assert list(counts) == ["paddle", "tvm"]
    assert counts["tvm"] == {"read": 1, "write": 1} and counts["paddle"] == {"write": 1, "uninitialised": 1}
    only = verdict.tally(lines, {("a", "tvm", "x")})
    assert only == {"tvm": {"read": 1}}
    text = verdict.tally_text(counts).splitlines()
    assert text[0].split() == ["framework", *verdict.VERDICTS]
    assert text[-1].split() == ["all", "2", "1", "1", "0"]


def test_a_framework_whose_calls_run_elsewhere_is_checked_a_cell_at_a_time() -> None:
    from gather_scatter_conformance.harness.evidence.memcheck import batches

    assert cells.call_process("tfjs") == "node" and cells.call_process("tvm") == "" and cells.call_process("x") == ""
    ready = [((f"c::{i}", fw, "v"), Path(f"{fw}{i}.py"), "py") for fw in ("tfjs", "tvm") for i in range(3)]
    sizes = [(b[0][0][1], len(b)) for b in batches(ready, 8, {"tfjs"})]
    assert sizes == [("tfjs", 1), ("tfjs", 1), ("tfjs", 1), ("tvm", 3)]


def test_under_memcheck_io_uring_setup_fails_as_on_a_kernel_without_it() -> None:
    """valgrind 3.19 hangs a program that waits on an io_uring (IREE's runtime): memcheck's runs refuse the ring
    with ENOSYS, so the program takes its fallback; every other system call still works."""
    import errno
    import subprocess
    import sys

    from gather_scatter_conformance.harness.evidence import checkers

    probe = ("import ctypes, os\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "params = ctypes.create_string_buffer(120)\n"
             "fd = libc.syscall(425, 4, params)\n"
             "print(fd, ctypes.get_errno(), os.getpid() > 0)\n")
    refused = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                             preexec_fn=checkers.refuse_io_uring)
    assert refused.stdout.split() == ["-1", str(errno.ENOSYS), "True"], refused.stdout + refused.stderr
    allowed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    fd, err, _ = allowed.stdout.split()
    assert int(fd) >= 0 or int(err) in (errno.EPERM, errno.ENOSYS)  # this kernel's own answer, never the filter's
