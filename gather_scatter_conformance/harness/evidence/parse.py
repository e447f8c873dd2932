"""What a checker's output says: memcheck's XML (``--xml=yes --xml-file=``), glibc's heap messages, Electric
Fence's fault, as findings (plain dicts, the evidence file's ``errors``).

A finding is ``{kind, size, offset, block_size, where, frame, first_frame, alloc_frame, what}``: ``kind`` one of
:data:`KINDS`; ``where`` before / after / inside (a live block), freed, or unknown; ``offset`` the bytes before, after
or inside the block memcheck names; ``frame`` the first frame with a symbol (JIT code has none: ``???``),
``first_frame`` the first frame whatever it is, ``alloc_frame`` the first frame of the block's allocation outside
the allocator itself.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gather_scatter_conformance.vocab import heap

KINDS = ("invalid-read", "invalid-write", "uninitialised", "invalid-free", "other")
_KIND_OF = {"InvalidRead": "invalid-read", "InvalidWrite": "invalid-write", "UninitCondition": "uninitialised",
            "UninitValue": "uninitialised", "InvalidFree": "invalid-free"}
# MismatchedFree (malloc'd memory given to delete, new'd to free) is an allocator misuse, not an access out of
# bounds: it stays ``other`` (paddle's IR registry does it in every script, scatter or not).
_SIZE = re.compile(r"of size (\d+)")
_BLOCK = re.compile(r"is (\d+) bytes (before|after|inside) a block of size (\d+) (alloc'd|free'd)")
_ALLOCATORS = {"malloc", "calloc", "realloc", "memalign", "posix_memalign", "aligned_alloc", "valloc",
               "operator new(unsigned long)", "operator new[](unsigned long)", "free", "operator delete(void*)"}
# glibc's messages when it finds a damaged heap (malloc/malloc.c's malloc_printerr), and what each shows
_GLIBC = re.compile(heap.GLIBC_MESSAGE)
_FREE_WORDS = ("double free", "invalid pointer", "free(): invalid size")


def memcheck_xml(text: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """(findings, suppressed: suppression name -> count) from memcheck's XML. A file cut short (a run killed at its
    timeout) gives the errors written before the cut; text that is no memcheck XML gives none."""
    return memcheck_xml_chunks([text])


def memcheck_xml_file(path: Path, chunk: int = 1 << 20) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """:func:`memcheck_xml` of a file, read a megabyte at a time (a kernel that runs over garbage may have memcheck
    write gigabytes); an absent file gives none."""
    if not path.exists():
        return [], {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        return memcheck_xml_chunks(iter(lambda: fh.read(chunk), ""))


def memcheck_xml_chunks(chunks: Iterable[str]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """:func:`memcheck_xml` of text given in pieces."""
    parser = ET.XMLPullParser(events=("end",))
    findings: list[dict[str, Any]] = []
    suppressed: dict[str, int] = {}
    try:
        for text in chunks:
            parser.feed(text)
            for _, elem in parser.read_events():
                if elem.tag == "error":
                    if not (elem.findtext("kind") or "").startswith("Leak_"):  # leaks are no out-of-bounds access
                        findings.append(_finding(elem))
                    elem.clear()
                elif elem.tag == "suppcounts":
                    for pair in elem.findall("pair"):
                        suppressed[pair.findtext("name", "")] = int(pair.findtext("count", "0"))
    except ET.ParseError:
        pass
    return findings, suppressed


def _finding(error: ET.Element) -> dict[str, Any]:
    what = error.findtext("what") or error.findtext("xwhat/text") or ""
    size = _SIZE.search(what)
    stacks = error.findall("stack")
    aux = " ".join(a.text or "" for a in error.findall("auxwhat"))
    block = _BLOCK.search(aux)
    where = "unknown"
    if block:
        where = "freed" if block.group(4) == "free'd" else block.group(2)
    frames = stacks[0].findall("frame") if stacks else []
    named = next((f for f in frames if f.findtext("fn")), None)
    # the allocation's stack: the last one (a freed block's stacks are the access, the free, then the allocation);
    # its first frame with a symbol outside the allocator (a library's internal functions show as ???)
    alloc = [f for f in stacks[-1].findall("frame") if f.findtext("fn") not in _ALLOCATORS
             and "vgpreload" not in (f.findtext("obj") or "")] if block and len(stacks) > 1 else []
    alloc = [f for f in alloc if f.findtext("fn")] or alloc
    return {
        "kind": _KIND_OF.get(error.findtext("kind") or "", "other"),
        "size": int(size.group(1)) if size else None,
        "offset": int(block.group(1)) if block else None,
        "block_size": int(block.group(3)) if block else None,
        "where": where,
        "frame": _frame_text(named) if named is not None else "???",
        "first_frame": _frame_text(frames[0]) if frames else None,
        "alloc_frame": _frame_text(alloc[0]) if alloc else None,
        "what": f"{what}; {aux}".strip("; ") if aux else what,
    }


def _frame_text(frame: ET.Element) -> str:
    """``fn (file:line)``, ``fn (library)``, or ``??? (library or address)`` for code without a symbol."""
    fn = frame.findtext("fn") or "???"
    if frame.findtext("file"):
        return f"{fn} ({os.path.basename(frame.findtext('file') or '')}:{frame.findtext('line') or '?'})"
    if frame.findtext("obj"):
        return f"{fn} ({os.path.basename(frame.findtext('obj') or '')})"
    return f"{fn} ({frame.findtext('ip') or '?'})"


def glibc_messages(stderr: str) -> list[dict[str, Any]]:
    """Findings from glibc's own heap messages in a run's standard error (``free(): invalid next size (fast)``, ...):
    a damaged chunk header (a write past a block) or a free of memory malloc did not hand out."""
    out = []
    for line in stderr.splitlines():
        line = line.strip()
        if not _GLIBC.match(line) or "Traceback" in line:
            continue
        kind = "invalid-free" if any(w in line for w in _FREE_WORDS) else "invalid-write"
        out.append({"kind": kind, "size": None, "offset": None, "block_size": None, "where": "unknown",
                    "frame": None, "first_frame": None, "alloc_frame": None, "what": f"glibc: {line}"})
    return out


def guard_page_fault(exit_code: int | None, plain_exit: int | None, below: bool = False) -> list[dict[str, Any]]:
    """A finding for a run under Electric Fence that died of SIGSEGV or SIGBUS where the run without it did not
    (an access to the guard page past a block's end, or before its start with ``below``), else none. Electric
    Fence does not say whether the access read or wrote."""
    if exit_code not in (-11, -7) or plain_exit == exit_code:
        return []
    return [{"kind": "other", "size": None, "offset": None, "block_size": None,
             "where": "before" if below else "after", "frame": None, "first_frame": None, "alloc_frame": None,
             "what": f"killed by {'SIGSEGV' if exit_code == -11 else 'SIGBUS'} under Electric Fence "
                     f"(without it: exit {plain_exit})"}]
