"""The memory checkers' output read for real: tiny C programs that read 4 bytes before a malloc'd block and write
one int past its end, run under valgrind's memcheck and under glibc's malloc checks, and what harness.evidence.parse
makes of what they wrote (no checker is mocked: a parser that misreads valgrind's XML fails here)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gather_scatter_conformance.harness.evidence import checkers, parse, verdict

CLANG = shutil.which("clang") or ("/usr/bin/clang" if Path("/usr/bin/clang").exists() else None)
needs_tools = pytest.mark.skipif(not (CLANG and shutil.which("valgrind")),
                                 reason="needs clang and valgrind (apt-get install clang valgrind)")

READ_BEFORE = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) int peek(const int *p) { return p[-1]; }
int main(void) {
    int *block = malloc(6 * sizeof(int));
    for (int i = 0; i < 6; i++) block[i] = i;
    printf("%d\n", peek(block));
    free(block);
    return 0;
}
"""
WRITE_AFTER = r"""
#include <stdlib.h>
__attribute__((noinline)) void poke(int *p, int n) { p[n] = 42; }
int main(void) {
    int *block = malloc(6 * sizeof(int));
    poke(block, 6);
    free(block);
    return 0;
}
"""
# glibc's own check: a write that overruns into the next chunk's size field, then a free that reads it
SMASH = r"""
#include <stdlib.h>
#include <string.h>
int main(void) {
    char *a = malloc(24), *b = malloc(24);
    memset(a, 0xff, 48);
    free(b);
    free(a);
    return 0;
}
"""


def _build(tmp_path: Path, name: str, source: str) -> Path:
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run([CLANG, "-g", "-O0", "-o", str(exe), str(src)], check=True)
    return exe


def _memcheck(exe: Path, tmp_path: Path) -> tuple[list[dict], dict[str, int]]:
    xml = tmp_path / f"{exe.name}.xml"
    subprocess.run(["valgrind", "--tool=memcheck", "--xml=yes", f"--xml-file={xml}",
                    f"--suppressions={checkers.suppressions()}", str(exe)], capture_output=True, timeout=120)
    return parse.memcheck_xml_file(xml, chunk=100)  # small pieces: an error's element spans several


@needs_tools
def test_a_read_before_a_block(tmp_path: Path) -> None:
    errors, _ = _memcheck(_build(tmp_path, "read_before", READ_BEFORE), tmp_path)
    reads = [e for e in errors if e["kind"] == "invalid-read"]
    assert len(reads) == 1, errors
    err = reads[0]
    assert (err["size"], err["offset"], err["where"], err["block_size"]) == (4, 4, "before", 24)
    assert err["frame"].startswith("peek (read_before.c:")
    assert err["first_frame"] == err["frame"]
    assert err["alloc_frame"].startswith("main (read_before.c:")  # malloc itself is skipped
    assert verdict.decide([{"name": "memcheck", "ran": True, "errors": errors}])[0] == "read"


@needs_tools
def test_a_write_past_a_block(tmp_path: Path) -> None:
    errors, _ = _memcheck(_build(tmp_path, "write_after", WRITE_AFTER), tmp_path)
    assert [(e["kind"], e["size"], e["offset"], e["where"], e["block_size"]) for e in errors] == [
        ("invalid-write", 4, 0, "after", 24)]
    assert errors[0]["frame"].startswith("poke (write_after.c:")
    name, reason = verdict.decide([{"name": "memcheck", "ran": True, "errors": errors}])
    assert name == "write" and "Invalid write of size 4" in reason and "0 bytes after a block of size 24" in reason


@needs_tools
def test_a_clean_program_is_unprovable_with_what_was_measured(tmp_path: Path) -> None:
    exe = _build(tmp_path, "clean", "#include <stdlib.h>\nint main(void){free(malloc(8));return 0;}\n")
    errors, _ = _memcheck(exe, tmp_path)
    assert errors == []
    name, reason = verdict.decide([{"name": "memcheck", "ran": True, "seconds": 1.5, "exit": 0, "errors": errors,
                                    "suppressed": 0}])
    assert (name, reason) == ("unprovable", "memcheck ran 1.5 s, reported 0 errors outside the suppressions, exit 0")
    # what memcheck followed is part of what was measured (tfjs: the calls run in Node)
    _, reason = verdict.decide([{"name": "memcheck", "ran": True, "seconds": 32.1, "exit": 0, "errors": [],
                                 "note": "followed into node (1 process of 2 checked)"}])
    assert reason == ("memcheck ran 32.1 s, reported 0 errors outside the suppressions, exit 0; followed into node "
                      "(1 process of 2 checked)")


def test_a_cut_xml_file_gives_the_errors_written_before_the_cut() -> None:
    head = ("<?xml version=\"1.0\"?>\n<valgrindoutput>\n<error><kind>InvalidWrite</kind><what>Invalid write of size "
            "8</what><stack><frame><ip>0x1</ip></frame></stack><auxwhat>Address 0x2 is 8 bytes inside a block of size "
            "16 free'd</auxwhat><stack><frame><fn>free</fn></frame><frame><fn>f</fn><obj>/lib/libx.so</obj></frame>"
            "</stack></error>\n<error><kind>InvalidRead</kind><what>Inv")
    errors, suppressed = parse.memcheck_xml(head)
    assert suppressed == {}
    assert [(e["kind"], e["where"], e["offset"], e["frame"], e["alloc_frame"]) for e in errors] == [
        ("invalid-write", "freed", 8, "???", "f (libx.so)")]
    assert parse.memcheck_xml("") == ([], {})


@pytest.mark.skipif(not CLANG or not sys.platform.startswith("linux"), reason="needs clang and glibc")
def test_glibc_names_a_smashed_heap(tmp_path: Path) -> None:
    exe = _build(tmp_path, "smash", SMASH)
    script = tmp_path / "smash.py"
    script.write_text(f"import subprocess, sys\nsys.exit(-subprocess.run([{str(exe)!r}]).returncode)\n")
    run = checkers.malloc_check(script, sys.executable, 60)
    found = parse.glibc_messages(run.stderr)
    assert found, run.stderr
    assert found[0]["kind"] in ("invalid-write", "invalid-free") and found[0]["what"].startswith("glibc: ")


@pytest.mark.skipif(not CLANG or bool(checkers.missing("efence")), reason="needs clang and Electric Fence "
                    "(apt-get install electric-fence)")
def test_electric_fence_faults_on_a_write_past_a_block(tmp_path: Path) -> None:
    exe = _build(tmp_path, "write_after", WRITE_AFTER)
    clean = _build(tmp_path, "clean", "#include <stdlib.h>\nint main(void){free(malloc(24));return 0;}\n")
    found = {}
    for name in ("write_after", "clean"):
        script = tmp_path / f"{name}.py"  # the interpreter starts under Electric Fence, then becomes the program
        script.write_text(f"import os\nos.execv({str(tmp_path / name)!r}, [{name!r}])\n")
        plain = checkers.plain(script, sys.executable, 60)
        run = checkers.efence(script, sys.executable, 60)
        assert checkers.gave_up_line(run.stderr) is None, run.stderr
        found[name] = parse.guard_page_fault(run.exit, plain.exit)
    assert exe.exists() and clean.exists()
    assert [(e["kind"], e["where"]) for e in found["write_after"]] == [("other", "after")]
    assert found["clean"] == []
    assert checkers.gave_up_line("x\nElectricFence Exiting: mprotect() failed: Cannot allocate memory\n") == (
        "ElectricFence Exiting: mprotect() failed: Cannot allocate memory")
