"""The CI matrices, generated from the adapter registry (``gather_scatter_conformance.adapters``) and tox.ini.

    python scripts/ci_matrix.py nightly            # {"env": [...]}: the nightly workflow's framework jobs
    python scripts/ci_matrix.py sweep --per-job 4  # {"include": [...]}: the weekly sweep, framework × release range

``nightly``: for each registered adapter that runs on a CPU, the tox environments labelled ``cpu`` that run it (its
``GSC_FRAMEWORKS``; ``paths`` and ``frameworks`` expand to the registry's groups), in registry order; then every
environment labelled ``latest`` or ``nightly``. A CPU adapter that no ``cpu`` environment runs is an error naming it,
so a new adapter joins the nightly by being registered and given an environment, with no edit to the workflow.
Adapters that need a GPU (TensorRT, DirectML) have jobs of their own.

With ``--times RESULTS`` (the previous night's merged results) the nightly's jobs are balanced by recorded time,
as PyTorch shards its CI by test times: an environment whose records took longer than ``--share`` minutes on a
runner's ``--cores`` is split into that many shards of equal recorded time (``gsc run --shard K/N``,
harness/run/shards.py), each a job (``{"env", "shard", "part"}``; ``part`` names its results file). The plan is
printed on stderr, one line per environment.

``sweep``: for each adapter that declares ReleaseRules (harness.history.pins.sweepable) and runs on a CPU, the
releases of its committed history (history/<framework>.jsonl) and the newest patch of each newer minor series on the
package index (a framework never swept starts from its newest four series), in ranges of ``--per-job`` releases: one
CI job each, so that no machine holds every release's environment. The weekly workflow's report job merges the parts
(``gsc history --merge``).

With ``--github-output`` the JSON is also appended to ``$GITHUB_OUTPUT`` as ``matrix=...``.
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
NEW_SERIES = 4  # minor series a framework without committed history starts from


def tox_config(tox_ini: Path = ROOT / "tox.ini") -> dict[str, dict[str, str]]:
    """tox's own reading of tox.ini (factor expansion included): section -> key -> value."""
    with tempfile.TemporaryDirectory() as work:
        proc = subprocess.run(
            [sys.executable, "-m", "tox", "config", "-c", str(tox_ini), "-e", "ALL", "--core", "--no-provision",
             "--workdir", work, "-k", "env_list", "labels", "depends", "extras", "set_env"],
            capture_output=True, text=True, timeout=300, cwd=work)
    if proc.returncode:
        raise SystemExit(f"tox config failed: {(proc.stderr or proc.stdout)[-2000:]}")
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(proc.stdout)
    return {section: dict(parser[section]) for section in parser.sections()}


def split_list(value: str) -> list[str]:
    """A tox list setting's items (comma- or line-separated)."""
    return [v.strip() for v in re.split(r"[\n,]", value or "") if v.strip()]


def environments(tox: dict[str, dict[str, str]]) -> dict[str, dict[str, list[str]]]:
    """Each tox environment's labels, depends, extras and the adapters it runs (GSC_FRAMEWORKS, groups expanded)."""
    from gather_scatter_conformance import adapters

    names = adapters.names()
    groups = {"paths": [n for n in names if adapters.is_path(n)],
              "frameworks": [n for n in names if not adapters.is_path(n)]}
    out = {}
    for section, keys in tox.items():
        if not section.startswith("testenv:") or section == "testenv:.pkg":
            continue
        env = dict(line.strip().split("=", 1) for line in keys.get("set_env", "").splitlines() if "=" in line)
        runs: list[str] = []
        for name in split_list(env.get("GSC_FRAMEWORKS", "")):
            runs += groups.get(name, [name])
        out[section.removeprefix("testenv:")] = {"labels": split_list(keys.get("labels", "")),
                                                 "depends": split_list(keys.get("depends", "")),
                                                 "extras": split_list(keys.get("extras", "")), "runs": runs}
    return out


def nightly(envs: dict[str, dict[str, list[str]]]) -> list[str]:
    """The nightly's tox environments (see the module's docstring); SystemExit naming each CPU adapter that no
    ``cpu`` environment runs."""
    from gather_scatter_conformance import adapters

    cpu = [e for e, v in envs.items() if "cpu" in v["labels"]]
    out: list[str] = []
    unrun = []
    for name in adapters.names():
        if "cpu" not in adapters.get(name).devices:
            continue
        found = [e for e in cpu if name in envs[e]["runs"]]
        if not found:
            unrun.append(name)
        out += [e for e in found if e not in out]
    if unrun:
        raise SystemExit(f"no tox environment labelled cpu runs {', '.join(unrun)} (tox.ini: GSC_FRAMEWORKS)")
    return out + sorted(e for e, v in envs.items() if {"latest", "nightly"} & set(v["labels"]) and e not in out)


def sharded(env_names: list[str], envs: dict[str, dict[str, list[str]]], seconds: dict[str, float],
            share_s: float, cores: int) -> list[dict[str, str]]:
    """The nightly's jobs with each environment split into ``ceil(time / share_s)`` shards, its time being the
    recorded seconds of the systems it runs (``seconds``: framework -> the sum of its records' durations) over
    ``cores`` workers. An environment without records is one shard."""
    import math

    jobs = []
    for env in env_names:
        estimate = sum(seconds.get(f, 0.0) for f in envs[env]["runs"]) / max(1, cores)
        n = max(1, math.ceil(estimate / share_s)) if share_s > 0 else 1
        print(f"{env}: {estimate / 60:.1f} min recorded on {cores} cores -> {n} shard(s)", file=sys.stderr)
        jobs += [{"env": env, "shard": f"{k}/{n}", "part": env if n == 1 else f"{env}-{k}of{n}"}
                 for k in range(1, n + 1)]
    return jobs


def framework_seconds(paths: list[str]) -> dict[str, float]:
    """Seconds per framework (path) in the records of ``paths`` (files that do not exist are left out)."""
    from gather_scatter_conformance.harness.run.shards import durations

    out: dict[str, float] = {}
    for (_, framework, _, _), seconds in durations(paths).items():
        out[framework] = out.get(framework, 0.0) + seconds
    return out


def sweep(history: Path, per_job: int, index: Any = None) -> list[dict[str, str]]:
    """The weekly sweep's jobs: ``{"framework", "releases", "part"}``, ``releases`` a comma-separated list of at
    most ``per_job`` releases. ``index`` (framework -> the index's releases) replaces the package index (tests)."""
    from gather_scatter_conformance import adapters
    from gather_scatter_conformance.harness.history import pins, releases, store

    jobs = []
    for name in pins.sweepable():
        if "cpu" not in adapters.get(name).devices:  # the sweep's machines have no GPU (DirectML: Windows, GPU)
            continue
        known = store.releases(store.read(history, name)) if store.path_for(history, name).exists() else []
        available = index(name) if index is not None else None
        # What was swept stays as swept; the index adds each newer minor series' newest patch.
        last = max((Version(store.normalised(r)) for r in known), default=None)
        spec = f">{last}" if last else ">=0"
        try:
            newer = releases.resolve(name, spec, available)
        except releases.ReleaseSpecError:  # nothing newer on the index
            newer = []
        series = {(v.major, v.minor) for v in (Version(store.normalised(r)) for r in known)}
        wanted = sorted([*known, *(v for v in newer if (Version(v).major, Version(v).minor) not in series)],
                        key=lambda r: Version(store.normalised(r)))
        if not known:  # a framework never swept: its newest minor series, not every release since its first
            wanted = wanted[-NEW_SERIES:]
        for i in range(0, len(wanted), per_job):
            chunk = wanted[i:i + per_job]
            jobs.append({"framework": name, "releases": ",".join(chunk), "part": f"{name}-{i // per_job + 1}"})
    return jobs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("matrix", choices=("nightly", "sweep"))
    parser.add_argument("--per-job", type=int, default=4, help="releases per sweep job (default 4)")
    parser.add_argument("--history", default=str(ROOT / "history"), help="the committed release history")
    parser.add_argument("--github-output", action="store_true", help="also write matrix=JSON to $GITHUB_OUTPUT")
    parser.add_argument("--times", action="append", default=[], metavar="RESULTS", help="nightly: an earlier "
                        "night's results; their durations split long environments into shards (repeatable)")
    parser.add_argument("--share", type=float, default=40.0, help="nightly: minutes a shard may take (default 40)")
    parser.add_argument("--cores", type=int, default=4, help="nightly: a runner's cores (default 4)")
    args = parser.parse_args(argv)
    if args.matrix == "nightly":
        envs = environments(tox_config())
        names = nightly(envs)
        matrix: dict[str, Any] = ({"include": sharded(names, envs, framework_seconds(args.times), args.share * 60,
                                                      args.cores)} if args.times else {"env": names})
    else:
        matrix = {"include": sweep(Path(args.history), args.per_job)}
    text = json.dumps(matrix)
    print(text)
    if args.github_output:
        with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
            out.write(f"matrix={text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
