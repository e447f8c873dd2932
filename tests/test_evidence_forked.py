"""memcheck over a batch of scripts forked from one warm interpreter (checkers.memcheck_batch, forked.py): each
error is charged to the script that made it, a clean neighbour stays clean, a hang is killed and charged to itself,
and the batch goes on after each. The scripts make real accesses through ctypes, so memcheck really sees them."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from gather_scatter_conformance.harness.evidence import checkers, parse, verdict
from gather_scatter_conformance.vocab.record import Record

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not shutil.which("valgrind"), reason="needs valgrind (apt-get install valgrind)")]

# a 16-byte block, an int written 4 bytes past its end
WRITE = """import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
block = libc.malloc(16)
ctypes.c_int.from_address(block + 20).value = 1
"""
# an 8-byte block read 8 bytes before its start, only when given --child (as the repro of a crash does)
READ = """import ctypes, sys
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
block = libc.malloc(8)
if "--child" in sys.argv:
    print(ctypes.c_int.from_address(block - 8).value)
"""
CLEAN = "import ctypes\nprint(ctypes.sizeof(ctypes.c_int))\n"
HANG = "import time\ntime.sleep(600)\n"
# The hang script waits out its whole timeout; the others finish in a few seconds each under valgrind.
HANG_TIMEOUT_S = 20


def test_each_error_is_charged_to_its_own_script(tmp_path: Path) -> None:
    names = ("write", "clean", "hang", "read")
    scripts = []
    for name, text in zip(names, (WRITE, CLEAN, HANG, READ), strict=True):
        scripts.append(tmp_path / f"{name}.py")
        scripts[-1].write_text(text)
    runs, outer = checkers.memcheck_batch(scripts, sys.executable, HANG_TIMEOUT_S, tmp_path)
    assert set(runs) == set(scripts), outer.stderr[-2000:]
    found = {name: parse.memcheck_xml_file(Path(runs[s].output))[0] for name, s in zip(names, scripts, strict=True)}

    write = [e for e in found["write"] if e["kind"] == "invalid-write"]
    assert write and (write[0]["size"], write[0]["offset"], write[0]["where"], write[0]["block_size"]) == (
        4, 4, "after", 16)
    # ctypes reads the int back too: every error of this script is at its own block, none at its neighbour's
    assert {(e["offset"], e["where"], e["block_size"]) for e in found["write"]} == {(4, "after", 16)}

    read = [e for e in found["read"] if e["kind"] == "invalid-read"]
    assert read and (read[0]["size"], read[0]["offset"], read[0]["where"], read[0]["block_size"]) == (
        4, 8, "before", 8)
    assert {(e["kind"], e["offset"], e["where"], e["block_size"]) for e in found["read"]} == {
        ("invalid-read", 8, "before", 8)}

    assert found["clean"] == []
    # a child ending with _exit lists no leaks (they are no access out of bounds, and made paddle's XML 1.7 GB)
    assert not any("<kind>Leak_" in Path(r.output).read_text() for r in runs.values() if Path(r.output).exists())
    assert runs[scripts[1]].exit == 0 and "4" in runs[scripts[1]].stderr  # its output, not its neighbours'
    assert runs[scripts[2]].timed_out and runs[scripts[2]].exit is None
    assert f"did not finish within {HANG_TIMEOUT_S} s" in runs[scripts[2]].note
    assert all("forked from a warm interpreter" in r.note for r in runs.values())

    entry = {"name": "memcheck", "errors": found["write"]}
    assert verdict.decide([entry])[0] == "write"

    # a cell's line: where memcheck proved the write, glibc's checks are not run (and say why); where it proved
    # nothing, they run beside a plain run
    from gather_scatter_conformance.harness.evidence.memcheck import check

    rec = Record.read({"case": "c.yaml::x", "framework": "f", "variant": "v", "label": "alias-write",
                       "outcome": "ok", "verdict": "deviates"})
    line = check(rec, scripts[0], sys.executable, ["memcheck", "malloc"], 60, runs[scripts[0]])
    by_name = {c["name"]: c for c in line["checkers"]}
    assert line["verdict"] == "write" and set(by_name) == {"memcheck", "malloc"}
    assert not by_name["malloc"]["ran"] and by_name["malloc"]["note"] == "not run: memcheck proved the access"
    line = check(rec, scripts[1], sys.executable, ["memcheck", "malloc"], 60, runs[scripts[1]])
    by_name = {c["name"]: c for c in line["checkers"]}
    assert line["verdict"] == "unprovable" and by_name["malloc"]["ran"] and by_name["plain"]["exit"] == 0


def test_memcheck_follows_the_program_an_adapter_calls_in(tmp_path: Path) -> None:
    """tfjs's calls run in a Node child (its adapter's ``call_process``): memcheck must follow the script into it,
    or an access made there passes for a clean run. Here the child program is a second Python making the write."""
    from gather_scatter_conformance.harness.evidence.memcheck import check

    script = tmp_path / "parent.py"
    script.write_text(f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {WRITE!r}], check=False)\n")
    rec = Record.read({"case": "c.yaml::x", "framework": "f", "variant": "v", "label": "alias-write",
                       "outcome": "ok", "verdict": "deviates"})
    program = Path(sys.executable).name

    unfollowed = check(rec, script, sys.executable, ["memcheck"], 120)
    assert unfollowed["verdict"] == "unprovable" and unfollowed["checkers"][0]["error_count"] == 0

    followed = check(rec, script, sys.executable, ["memcheck"], 120, follow=program)
    memcheck = followed["checkers"][0]
    assert followed["verdict"] == "write", followed["reason"]
    assert {(e["offset"], e["where"], e["block_size"]) for e in memcheck["errors"]} == {(4, "after", 16)}
    assert f"followed into {program} (2 processes of 2 checked)" in memcheck["note"]
    assert len(list(tmp_path.glob("parent.memcheck.*.xml"))) == 2

