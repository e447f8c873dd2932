"""The ``history`` subcommand: sweep releases, print what changed between two, fold the history into a baseline.

    gsc history onnxruntime --releases ">=1.16"          # every minor release's newest patch
    gsc history onnxruntime --releases 1.16.3,1.17.3 --cases cases/probes/gather.yaml
    gsc history tensorflow --releases ">=2.12" --drop-envs  # one release's environment on disk at a time
    gsc history --diff onnxruntime 1.16.3 1.17.3          # labels that changed between the two
    gsc history onnxruntime --changes                     # every change, release to release
    gsc history onnxruntime --update-baseline             # releases and ranges into baselines/
    gsc history --merge parts/* --dir history             # the weekly sweep's parts into history/
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``history`` subcommand's options to ``parser``."""
    parser.add_argument("framework", nargs="?", help="the framework whose releases to sweep or read")
    parser.add_argument("--releases", default="", help='"1.16.3,1.17.3", or a range such as ">=1.16" (each minor '
                        "release's newest patch, from the package index)")
    parser.add_argument("--cases", nargs="+", default=[], help="case files or folders (default: the probes and the "
                        "seed cases of the shipped corpus)")
    parser.add_argument("--dir", default="history", help="where <framework>.jsonl live (default: ./history)")
    parser.add_argument("--diff", nargs=3, metavar=("FRAMEWORK", "A", "B"), help="labels that differ between "
                        "releases A and B")
    parser.add_argument("--changes", action="store_true", help="every label change between consecutive releases")
    parser.add_argument("--update-baseline", action="store_true", help="fold the history into "
                        "baselines/<framework>.yaml: the releases it knows, and ranges for labels that change")
    parser.add_argument("--baseline-dir", default="baselines", help="where --update-baseline folds the history "
                        "(default: ./baselines)")
    parser.add_argument("--merge", nargs="+", metavar="PART", help="folders of swept parts (each holding "
                        "<framework>.jsonl of some releases): their releases replace those in --dir")
    parser.add_argument("--drop-envs", action="store_true", help="remove each release's environment once it is "
                        "measured (kept and reused otherwise; $GSC_ENV_CACHE, ~1 GB per TensorFlow release)")


def _fmt(key: tuple[str, str, str, str]) -> str:
    op, variant, device, dimension = key
    return f"{op} {variant}{'' if device == 'cpu' else '@' + device} {dimension}"


def _merge(parts: list[Path], directory: Path) -> int:
    """Write every release of each part's history files into ``directory`` (store.write_release: a release swept
    again replaces what was there); 2 when a part is no folder of history files."""
    from gather_scatter_conformance.harness.history import store

    files = [f for part in parts for f in (sorted(part.glob("*.jsonl")) if part.is_dir() else [])]
    if not files:
        print(f"history --merge: no <framework>.jsonl in {', '.join(map(str, parts))}", file=sys.stderr)
        return 2
    for f in files:
        records = store.read(f.parent, f.stem)
        by_release: dict[str, list[dict]] = {}
        for rec in records:
            by_release.setdefault(rec["release"], []).append(rec)
        for release, recs in by_release.items():
            store.write_release(directory, f.stem, release, recs)
        print(f"{f}: {len(by_release)} release(s) of {f.stem} into {store.path_for(directory, f.stem)}")
    return 0


def main(args: argparse.Namespace) -> int:
    """Run the ``history`` subcommand; 0 on success, 2 on a usage error."""
    from gather_scatter_conformance.harness.history import store

    directory = Path(args.dir)
    if args.merge:
        return _merge([Path(p) for p in args.merge], directory)
    if args.diff:
        framework, a, b = args.diff
        records = store.read(directory, framework)
        known = set(store.releases(records))
        missing = [r for r in (a, b) if r not in known]
        if missing:
            print(f"history/{framework}.jsonl has no release {', '.join(missing)}; it has "
                  f"{', '.join(store.releases(records)) or 'none'}", file=sys.stderr)
            return 2
        changed = store.diff(records, a, b)
        for key, old, new in changed:
            print(f"{_fmt(key)}: {old or '(not measured)'} -> {new or '(not measured)'}")
        print(f"{len(changed)} label(s) differ between {framework} {a} and {b}")
        return 0
    if not args.framework:
        print("history: name a framework (or --diff FRAMEWORK A B)", file=sys.stderr)
        return 2
    if args.changes:
        records = store.read(directory, args.framework)
        found = store.changes(records)
        for c in found:
            print(f"{_fmt(c.key)}: {c.old} ({c.before}) -> {c.new} ({c.after}){'  [api]' if c.kind == 'api' else ''}")
        for release, why in store.failures(records).items():
            print(f"{release}: {why}")
        api = sum(c.kind == "api" for c in found)
        print(f"{len(found)} label change(s) across {len(store.releases(records))} release(s): "
              f"{len(found) - api} of behaviour, {api} where the API arrived or went ([api]: unsupported on one side)")
        return 0
    if args.update_baseline:
        from gather_scatter_conformance.harness.judge.baseline import update_ranges

        n = update_ranges(Path(args.baseline_dir), args.framework, store.case_labels(store.read(directory,
                                                                                                args.framework)))
        print(f"baselines/{args.framework}.yaml: {n} key(s) with release ranges")
        return 0
    if not args.releases:
        print("history: --releases SPEC is required to sweep", file=sys.stderr)
        return 2
    from gather_scatter_conformance.harness.history import pins, releases, sweep

    try:
        pins.framework(args.framework)
        wanted = releases.resolve(args.framework, args.releases)
    except (KeyError, releases.ReleaseSpecError) as exc:
        print(f"history: {exc}", file=sys.stderr)
        return 2
    print(f"{args.framework}: {len(wanted)} release(s): {', '.join(wanted)}")
    results = sweep.sweep(args.framework, wanted, directory, args.cases, drop_envs=args.drop_envs)
    ok = sum(r.status == "ok" for r in results)
    print(f"{ok} of {len(results)} release(s) measured; history in {store.path_for(directory, args.framework)}")
    return 0
