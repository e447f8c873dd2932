"""Regression cases (``cases/regression/*.yaml``): does each pinned upstream bug still reproduce here?

Each regression case carries a ``bug`` block: the framework and adapter variant that make the reported call, and
the symptom that shows the bug in one run (an outcome, a value, a deviation, nondeterminism). :func:`measure` runs
the case on that variant in a worker process and says whether the symptom showed; ``--write`` records the result
in the case's ``measured`` list (``<framework> <version> <device>``) and regenerates ``docs/regression.md`` from
the case files. ``tests/test_regression_cases.py`` measures again and fails when a recorded status no longer
holds, so an upgrade that fixes (or brings back) a bug is noticed.

    python -m gather_scatter_conformance.harness.importers.regression          # measure, print; changes nothing
    python -m gather_scatter_conformance.harness.importers.regression --write  # record into the cases, write docs
    python -m gather_scatter_conformance.harness.importers.regression --docs   # write docs/regression.md only

Run from a checkout's root: the case files and the page are ``./cases/regression`` and ``./docs/regression.md``
(``--dir``, ``--docs-out``).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gather_scatter_conformance import adapters, resources
from gather_scatter_conformance.harness.cases import yamlsrc
from gather_scatter_conformance.harness.cases.errors import CaseFileError
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.cases.schema import BugSpec, Measured, Symptom
from gather_scatter_conformance.harness.importers import yamltext
from gather_scatter_conformance.harness.importers.regression_docs import render
from gather_scatter_conformance.vocab import dtypes, wire

# What tests read: the shipped regression cases. The command reads and writes --dir (a checkout's, by default).
REGRESSION_DIR = resources.cases_dir() / "regression"


@dataclass
class Measurement:
    """One run of a regression case on its bug's framework: ``installed`` is None when nothing could run."""

    case: Case
    installed: str | None
    reproduces: bool | None
    observed: str

    def entry(self) -> Measured:
        """The ``measured`` entry this run records."""
        assert self.installed is not None and self.reproduces is not None
        return Measured(installed=self.installed, reproduces=self.reproduces, observed=self.observed)


def regression_cases(directory: Path = REGRESSION_DIR) -> list[Case]:
    """Every case in the regression files, in file order; raises the first CaseFileError, since a regression file
    that does not load cannot be measured."""
    out: list[Case] = []
    for path in sorted(directory.glob("*.yaml")):
        for entry in load_file(path, resources.corpus_id(path) or path.as_posix()):
            if isinstance(entry, CaseFileError):
                raise entry
            out.append(entry)
    return out


def runnable(bug: BugSpec, pythons: dict[str, str]) -> str | None:
    """None when the bug's call can run here; else why not."""
    if bug.unmeasurable is not None:
        return f"not measurable: {bug.unmeasurable}"
    if bug.framework not in adapters.table():
        return f"no {bug.framework} adapter in this harness"
    if not adapters.is_available(bug.framework) and bug.framework not in pythons:
        return f"{bug.framework} is not installed here"
    return adapters.get(bug.framework).unavailable()  # e.g. no GPU, or tfjs without node or its npm packages


def _summary(arr: np.ndarray) -> str:
    if arr.size <= 12 and arr.dtype != object:
        return re.sub(r"\s+", " ", yamltext.nested_text(arr, 0))
    return f"{dtypes.name_of(arr.dtype)} {list(arr.shape)}"


def _message_line(message: str) -> str:
    """The informative line of an error message, without what changes from run to run (temporary paths)."""
    message = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", message)  # TensorFlow's graph-function prefix
    message = re.sub(r"/tmp/\S+", "<tmp>", message)
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(("Traceback", "File ", "[bt]", "Stack trace"))]
    # MXNet puts a C++ traceback first and the error last; the others lead with the error.
    line = (useful[-1] if lines and lines[0].startswith("Traceback") else useful[0]) if useful else ""
    return line[:120]


def _observed(res: dict[str, Any], verdict: dict[str, Any], repeat: int) -> str:
    outcome = res["outcome"]
    if outcome == "ok":
        text = "returned " + _summary(wire.decode(res["value"]))
        if repeat > 1:
            text += f", {res.get('distinct_outputs') or 1} distinct output(s) in {repeat} runs"
    elif outcome == "error":
        kind = (res.get("error_type") or "error").rsplit(".", 1)[-1]
        text = f"raised {kind}: {_message_line(res.get('error_message') or '')}"
    elif outcome == "crash":
        text = f"crashed ({res.get('signal') or 'exit'})"
    else:
        text = outcome
    return f"{text} ({verdict['verdict']})"


def _value_matches(expected: Any, observed: np.ndarray) -> bool:
    from gather_scatter_conformance.harness.cases.errors import InputValueError
    from gather_scatter_conformance.harness.cases.values import to_array
    from gather_scatter_conformance.harness.reference.compare import compare

    try:
        want = to_array(expected, dtypes.name_of(observed.dtype))
    except (InputValueError, ValueError):
        return False
    return compare(observed, want).equal


def shows(symptom: Symptom, res: dict[str, Any], verdict: str) -> bool:
    """True when a worker result ``res`` (judged ``verdict``) shows every part of ``symptom``."""
    checks = []
    if symptom.outcome is not None:
        checks.append(res["outcome"] == symptom.outcome)
    if symptom.value is not None:
        checks.append(res["outcome"] == "ok" and _value_matches(symptom.value, wire.decode(res["value"])))
    if symptom.deviates is not None:
        checks.append((verdict == "deviates") == symptom.deviates)
    if symptom.nondeterministic is not None:
        distinct = res.get("distinct_outputs") or 1
        checks.append((distinct > 1) == symptom.nondeterministic)
    if symptom.error_contains is not None:
        checks.append(res["outcome"] == "error" and symptom.error_contains in (res.get("error_message") or ""))
    if symptom.differs_from is not None:
        checks.append(res["outcome"] == "ok" and not _value_matches(symptom.differs_from, wire.decode(res["value"])))
    return all(checks)


def measure(case: Case, executor: Any, pythons: dict[str, str] | None = None) -> Measurement:
    """Run ``case`` on its bug's framework and variant through ``executor`` and say whether the symptom showed.

    A bug that cannot run here (unmeasurable, no adapter, not installed) gives ``installed=None`` and the reason. A
    variant that cannot express the case at all is a mistake in the bug block and raises ValueError.
    """
    from gather_scatter_conformance.harness.judge.verdict import judge
    from gather_scatter_conformance.harness.run.runner import payload

    bug = case.spec.bug
    if bug is None:
        raise ValueError(f"{case.nodeid} has no bug block")
    why_not = runnable(bug, adapters.venv_pythons(Path.cwd()) if pythons is None else pythons)
    if why_not:
        return Measurement(case, None, None, why_not)
    variant = bug.variant or adapters.get(bug.framework).variants(case.op)[0]
    res = executor.run(bug.framework, variant, payload(case))
    if res["outcome"] == "unsupported":
        raise ValueError(f"{case.nodeid}: {bug.framework}:{variant} cannot express the case: {res.get('reason')}")
    verdict = judge(case, res, case.reference())
    assert bug.symptom is not None  # runnable() returned a reason otherwise
    installed = f"{bug.framework} {_one_word(res.get('framework_version') or 'unknown')} {res.get('device') or 'cpu'}"
    reproduces = shows(bug.symptom, res, verdict["verdict"])
    return Measurement(case, installed, reproduces, _observed(res, verdict, case.spec.repeat))


def _one_word(version: str) -> str:
    """A version as one word (``installed`` is '<framework> <version> <device>'): a converter path's version names
    its three parts, ``torch 2.13.0; onnx-dynamo 2.13.0, onnxscript 0.7.2; onnxruntime 1.31.1`` ->
    ``torch=2.13.0|onnx-dynamo=2.13.0|onnxscript=0.7.2|onnxruntime=1.31.1``."""
    return "|".join(part.strip().replace(" ", "=") for part in re.split(r"[;,]", version) if part.strip())


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def recorded(bug: BugSpec, installed: str) -> Measured | None:
    """The recorded entry for ``installed`` ('<framework> <version> <device>'); for a version never measured, the
    entry of the newest measured version on the same device (a new release must still match the last status)."""
    for m in bug.measured:
        if m.installed == installed:
            return m
    framework, _, device = installed.split()
    same = [m for m in bug.measured if m.installed.split()[0] == framework and m.installed.split()[2] == device]
    return max(same, key=lambda m: _version_key(m.installed.split()[1])) if same else None


def _entry_text(m: Measured) -> str:
    flag = "true" if m.reproduces else "false"
    return f"{{installed: {yamltext.string(m.installed)}, reproduces: {flag}, observed: {yamltext.string(m.observed)}}}"


def write_measured(path: Path, case: Case, entries: list[Measured]) -> None:
    """Replace the ``measured`` list of ``case`` (loaded from ``path``) with ``entries``, one line each, leaving
    every other line of the file as it was."""
    lines = path.read_text(encoding="utf-8").split("\n")
    _, where = yamlsrc.load("\n".join(lines), str(path))
    key = where.get(("cases", case.index, "bug", "measured"))
    if key is None:
        raise ValueError(f"{case.nodeid}: add `measured: []` to its bug block first")
    start = key - 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines):
        stripped = lines[end].lstrip()
        depth = len(lines[end]) - len(stripped)
        # The list ends at the next key or comment of the bug block, or anything shallower ("- " items may sit at
        # the key's own depth).
        if stripped and (depth < indent or (depth == indent and stripped[:2] != "- ")):
            break
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # keep the blank lines between cases
    pad = " " * indent
    block = [f"{pad}measured: []"] if not entries else [f"{pad}measured:"] + [
        f"{pad}  - {_entry_text(m)}" for m in entries
    ]
    path.write_text("\n".join(lines[:start] + block + lines[end:]), encoding="utf-8")


def merged(bug: BugSpec, new: Measured) -> list[Measured]:
    """``bug.measured`` with ``new`` in place of the entry measured on the same framework version and device."""
    out = [new if m.installed == new.installed else m for m in bug.measured]
    return out if any(m.installed == new.installed for m in bug.measured) else [*out, new]


def main(argv: list[str] | None = None) -> int:
    """Measure every regression case (or those named) and print the result; ``--write`` records it and
    regenerates the docs; ``--docs`` only regenerates the docs. Returns 1 when a recorded status changed."""
    from gather_scatter_conformance.harness.run.isolation import Isolated

    parser = argparse.ArgumentParser(prog="python -m gather_scatter_conformance.harness.importers.regression",
                                     description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="record the measurements and regenerate the docs")
    parser.add_argument("--docs", action="store_true", help="only regenerate docs/regression.md from the cases")
    parser.add_argument("--case", action="append", default=[], help="case id to measure (repeatable)")
    parser.add_argument("--dir", default="cases/regression", help="the regression case files --write records into "
                        "(default: ./cases/regression; run from a checkout's root)")
    parser.add_argument("--docs-out", default="docs/regression.md", help="the page --write and --docs write")
    args = parser.parse_args(argv)
    directory, docs = Path(args.dir), Path(args.docs_out)
    if not directory.is_dir():
        print(f"--dir {directory}: no such directory (run from a checkout's root, or give --dir)", file=sys.stderr)
        return 2
    if not args.docs:
        pythons = adapters.venv_pythons(Path.cwd())
        executor = Isolated(pythons, timeout=180.0)
        changed = 0
        try:
            for case in regression_cases(directory):
                if args.case and case.id not in args.case:
                    continue
                m = measure(case, executor, pythons)
                bug = case.spec.bug
                assert bug is not None
                before = recorded(bug, m.installed) if m.installed else None
                mark = "" if before is None or before.reproduces == m.reproduces else "  CHANGED"
                changed += bool(mark)
                state = {True: "reproduces", False: "does not reproduce", None: "not run"}[m.reproduces]
                print(f"{bug.issue:<22} {case.id:<58} {state:<19} {m.installed or ''}: {m.observed}{mark}")
                if args.write and m.installed is not None:
                    write_measured(directory / Path(case.file).name, case, merged(bug, m.entry()))
        finally:
            executor.close()
    if args.write or args.docs:
        docs.write_text(render(regression_cases(directory)), encoding="utf-8")
        print(f"wrote {docs}")
    return 1 if not args.docs and changed else 0


if __name__ == "__main__":
    sys.exit(main())

