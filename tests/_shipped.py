"""The shipped conformance cases (cases/*.yaml, not the probes), as the adapter tests run them."""

from __future__ import annotations

from pathlib import Path

from harness.cases import Case, load_file

ROOT = Path(__file__).resolve().parent.parent


def shipped_cases() -> list[Case]:
    """Every valid case in cases/*.yaml, in file order, less those tagged ``crash`` (they kill a process)."""
    out: list[Case] = []
    for path in sorted((ROOT / "cases").glob("*.yaml")):
        for entry in load_file(path, path.relative_to(ROOT).as_posix()):
            if isinstance(entry, Case) and "crash" not in entry.spec.tags:
                out.append(entry)
    return out
