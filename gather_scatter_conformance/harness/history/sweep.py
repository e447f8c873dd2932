"""A release sweep: for each release of one framework, its cached environment, the behaviour-defining cases run
in it through the ordinary pytest plugin (a worker in that environment's interpreter), and the results folded into
history records (gather_scatter_conformance.harness.history.store)."""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance import resources
from gather_scatter_conformance.harness.history import envs, pins, store
from gather_scatter_conformance.harness.run.records import read

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

# The default cases: every probe (one per behaviour dimension and API) and the seed cases (the worked examples of
# the specs and docs), both found by tag in the shipped corpus.
DEFAULT_TAGS = ("probe", "seed")
RUN_TIMEOUT = 3600  # seconds for one release's run (TensorFlow's XLA variants compile per shape)


@dataclass
class ReleaseResult:
    """What sweeping one release gave: its history records and where the time went."""

    release: str
    records: list[dict[str, Any]]
    status: str  # ok | install-failed | import-failed | run-failed
    env_s: float = 0.0  # making the environment (0 when a cached one was reused)
    run_s: float = 0.0  # running the cases
    tool: str = ""
    notes: list[str] = field(default_factory=list)


def _today() -> str:
    return _dt.date.today().isoformat()


def fold(framework: str, release: str, results: Iterable[Record], packages: dict[str, str],
         measured: str | None = None) -> list[dict[str, Any]]:
    """History records from one release's result records: one per operator × variant × device × dimension for the
    probes, and one per operator × variant × device for the seed cases (``seed-cases``: conforms or deviates:N)."""
    groups: dict[tuple[str, str, str, str], list[Record]] = defaultdict(list)
    for rec in results:
        if rec.framework != framework:
            continue
        dimension = rec.dimension or (store.SEED_DIMENSION if "seed" in rec.tags else None)
        if dimension:
            groups[(rec.op, rec.variant, rec.device, dimension)].append(rec)
    out = []
    for (op, variant, device, dimension), recs in sorted(groups.items()):
        base = {"framework": framework, "release": release, "op": op, "variant": variant, "device": device,
                "dimension": dimension, "status": "ok", "version": recs[0].framework_version,
                "python": recs[0].python, "packages": packages, "measured": measured or _today(),
                "outcomes": dict(Counter(r.outcome for r in recs)),
                "verdicts": dict(Counter(r.verdict for r in recs))}
        if dimension == store.SEED_DIMENSION:
            deviating = sorted(r.case for r in recs if r.verdict == "deviates")
            expressed = any(r.outcome != "unsupported" for r in recs)
            label = f"deviates:{len(deviating)}" if deviating else "conforms" if expressed else "unsupported"
            out.append({**base, "label": label, "deviating": deviating, "cases": len(recs)})
        else:
            case_labels = {r.case: r.label for r in recs if r.label}
            out.append({**base, "label": store.group_label(case_labels.values()), "labels": case_labels})
    return out


def failed(framework: str, release: str, status: str, reason: str, packages: dict[str, str] | None = None,
           measured: str | None = None) -> dict[str, Any]:
    """The one record of a release that could not be installed, imported or run."""
    return {"framework": framework, "release": release, "status": status, "reason": reason[:1000],
            "python": ".".join(map(str, sys.version_info[:3])), "packages": packages or {},
            "measured": measured or _today()}


def run_cases(framework: str, python: str, cases: Sequence[str], tags: Sequence[str], results: Path,
              env: dict[str, str], timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run ``cases`` (only those tagged ``tags``, when given) on ``framework`` in the interpreter ``python``, with
    this interpreter's plugin; results go to ``results``. Probe labels are not checked against any baseline. The
    run reads no ini file; user case files are named relative to the current directory (the shipped corpus's as
    ``cases/...`` wherever it lies)."""
    with tempfile.TemporaryDirectory(prefix="gsc-no-baselines-") as empty:
        cmd = [sys.executable, "-m", "pytest", *cases, "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
               "--rootdir", os.getcwd(), "-c", os.devnull, "--tb=no", "-rN",
               "--gsc-framework", framework, "--gsc-framework-python", f"{framework}={python}",
               "--gsc-results", str(results), "--gsc-baseline-dir", empty]
        if tags:
            cmd += ["--gsc-case-tags", ",".join(tags)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **env})


def run_variables(environment: envs.Env) -> dict[str, str]:
    """The variables a run in ``environment`` gets: its own (Env.variables), and for a virtual environment its
    ``bin`` folder first on PATH, as activating it would: a release may call a tool it installs there
    (ExecuTorch 1.0 and 1.1 serialize every program with ``flatc`` from PATH; without it each call failed)."""
    variables = dict(environment.variables)
    folder = str(Path(environment.python).parent)
    if environment.python != sys.executable:
        variables["PATH"] = os.pathsep.join(p for p in (folder, os.environ.get("PATH", "")) if p)
    return variables


def sweep_release(framework: str, release: str, cases: Sequence[str] = (), root: Path | None = None) -> ReleaseResult:
    """Measure one release: make (or reuse) its environment and run the cases; never raises for the framework's
    failures, which become the release's one failure record."""
    start = time.perf_counter()
    try:
        environment = envs.ensure(framework, release, root)
    except envs.EnvError as exc:
        status = "import-failed" if exc.stage == "import" else "install-failed"
        return ReleaseResult(release, [failed(framework, release, status, exc.reason)], status,
                             env_s=time.perf_counter() - start)
    env_s = environment.created_s
    paths = list(cases) or [str(resources.cases_dir().resolve())]
    with tempfile.TemporaryDirectory(prefix="gsc-sweep-") as tmp:
        results = Path(tmp) / "results.jsonl"
        began = time.perf_counter()
        try:
            proc = run_cases(framework, environment.python, paths, () if cases else DEFAULT_TAGS, results,
                             {**pins.environment(framework, release), **run_variables(environment)})
        except subprocess.TimeoutExpired:
            return ReleaseResult(release, [failed(framework, release, "run-failed", "the run timed out",
                                                  environment.packages)], "run-failed", env_s, RUN_TIMEOUT)
        run_s = time.perf_counter() - began
        recs = list(read([results])) if results.exists() else []
    records = fold(framework, release, recs, environment.packages)
    if not records:
        reason = " / ".join((proc.stdout + proc.stderr).strip().splitlines()[-4:])
        return ReleaseResult(release, [failed(framework, release, "run-failed", reason or f"exit {proc.returncode}",
                                              environment.packages)], "run-failed", env_s, run_s, environment.tool)
    return ReleaseResult(release, records, "ok", env_s, run_s, environment.tool)


def sweep(framework: str, releases: Sequence[str], history_dir: Path, cases: Sequence[str] = (),
          root: Path | None = None, say: Callable[[str], None] = print,
          drop_envs: bool = False) -> list[ReleaseResult]:
    """Sweep ``releases`` one after another, writing each release's records into ``history_dir`` as it ends (an
    interrupted sweep keeps the releases it finished). ``drop_envs``: remove each release's environment once it is
    measured, so a long sweep holds one at a time on disk (the next sweep then installs them again)."""
    out = []
    for release in releases:
        result = sweep_release(framework, release, cases, root)
        store.write_release(history_dir, framework, release, result.records)
        freed = envs.drop(framework, release, root) if drop_envs else 0
        reason = result.records[0].get("reason", "") if result.status != "ok" else ""
        say(f"{framework} {release}: {result.status} ({len(result.records)} records; environment "
            f"{result.env_s:.1f} s{' reused' if result.tool == 'reused' else ''}, cases {result.run_s:.1f} s"
            + (f"; environment removed, {freed / 1e9:.2f} GB freed" if drop_envs else "") + ")"
            + (f": {reason[:200]}" if reason else ""))
        out.append(result)
    return out
