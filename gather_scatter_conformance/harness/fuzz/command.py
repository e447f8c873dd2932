"""The ``fuzz`` subcommand: its options and entry point. Imports nothing heavy, so the command line can list the
subcommand without Hypothesis installed."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``fuzz`` subcommand's options to ``parser``."""
    parser.add_argument("--op", required=True, help="operator, comma-separated operators, or 'all'")
    parser.add_argument("--n", type=int, default=200, help="distinct cases per operator (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frameworks", default="", help="NAME[,NAME...] (default: every one that can run)")
    parser.add_argument("--out", default="cases/found", help="where found cases are written (default: ./cases/found)")
    parser.add_argument("--no-write", action="store_true", help="report findings without writing case files")
    parser.add_argument("--json", default="", help="also write the summary (agreement, findings, timings) here")
    parser.add_argument("--slow-variants", action="store_true", help="include per-shape compiling variants")
    parser.add_argument("--isolation", default="process", choices=("process", "none"),
                        help="process: each framework in a warm worker process, crashes are results (default); "
                        "none: this interpreter's frameworks in-process")
    parser.add_argument("--run-unchecked", action="store_true",
                        help="run APIs whose baseline says they do not check these index values (in a worker "
                        "retired after each call) instead of skipping them")
    parser.add_argument("--jobs", type=int, default=2, help="frameworks run side by side (isolation=process)")
    parser.add_argument("--shrink-budget", type=int, default=150, help="framework calls per shrunk finding")
    parser.add_argument("--case-timeout", type=float, default=30.0,
                        help="seconds before a call counts as a hang and its worker is killed")


def main(args: argparse.Namespace) -> int:
    """Run the ``fuzz`` subcommand (see gather_scatter_conformance.harness.fuzz.run.main)."""
    from gather_scatter_conformance.harness.fuzz.run import main as run_main

    return run_main(args)
