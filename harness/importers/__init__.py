"""Importers: case files made from other projects' test data (ONNX's backend node tests) and the regression
cases' measured bug status (``harness.importers.regression``).

Everything here writes deterministic text, so generated files can be committed and compared with a fresh import.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli_main(args: argparse.Namespace) -> int:
    """``python -m harness import SOURCE``: write (or with ``--check`` compare) the imported case files.

    Returns 0 when the files were written or are up to date, 1 when ``--check`` finds them stale.
    """
    from harness.importers import onnx_node

    out = Path(args.out) if args.out else ROOT / "cases" / "imported"
    if out.suffix in (".yaml", ".yml"):
        # A case file holds one operator, so the import writes one file per operator into a directory.
        print(f"--out {out}: give a directory; the import writes onnx_node_<op>.yaml, one file per operator",
              file=sys.stderr)
        return 2
    files, report = onnx_node.import_files()
    for line in report:
        print(line)
    if args.check:
        stale = [n for n, text in files.items() if not (out / n).exists() or (out / n).read_bytes() != text.encode()]
        for name in stale:
            print(f"stale: {out / name} differs from a fresh import")
        return 1 if stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        print(f"wrote {out / name}")
    return 0
