"""The terminal face of ``gsc run``: a progress bar for the run's phase, failures to a log file, one summary table.

``pytest`` run directly keeps its own output (dots, the failures with their repro scripts): this plugin is
registered by ``gsc run`` only. Under it, each result counts on a progress bar (tqdm, on a terminal: counts,
rate and ETA; in a log, one line per tenth of the run), the failing tests' reports (each deviation's repro script)
go to ``<results>.log`` instead of the terminal, and the run ends with :func:`summary_text`: per system, how many
results conform, deviate, are memory-unsafe or crashed, and how many changed since the previous run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import pytest

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

STEPS = 10  # progress lines in a log (no terminal): one per tenth of the run
CASE_FILE_ERROR = "case file error"  # how the plugin's item for a malformed case names itself (its reportinfo)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


class Progress:
    """Counts finished tests of one phase against the collected total: a tqdm bar on a terminal, else a line per
    tenth of the run with the count, the time taken and the time left."""

    def __init__(self, phase: str, stream: TextIO | None = None) -> None:
        self.phase, self.stream = phase, stream or sys.stderr
        self.total = 0
        self.done = 0
        self.start = time.monotonic()
        self._bar: Any = None
        self._step = 0

    def begin(self, total: int) -> None:
        """The phase's size is known (collection finished); on a terminal the bar appears."""
        self.total = max(self.total, total)
        if self.stream.isatty() and self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=self.phase, unit="test", file=self.stream, dynamic_ncols=True)

    def advance(self) -> None:
        """One more test finished."""
        self.done += 1
        if self._bar is not None:
            self._bar.update(1)
            return
        if self.total and self.done * STEPS >= (self._step + 1) * self.total:
            self._step = self.done * STEPS // self.total
            elapsed = time.monotonic() - self.start
            left = elapsed * (self.total - self.done) / self.done
            print(f"{self.phase}: {self.done}/{self.total} ({100 * self.done // self.total}%), "
                  f"{_duration(elapsed)}, about {_duration(left)} left", file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class Console:
    """The pytest plugin ``gsc run`` registers: no dots, a progress bar, failing reports to ``log``."""

    def __init__(self, phase: str, log: Path | None, stream: TextIO | None = None,
                 log_name: Path | None = None) -> None:
        self.progress = Progress(phase, stream)
        self.log = log  # written while the run goes (the run's partial log: harness.run.records.RunFiles)
        self.log_name = log_name  # where it lies once the run has ended
        self.failed = 0
        self.case_errors: list[str] = []
        self._fh: TextIO | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        from gather_scatter_conformance.harness.run.pytest_plugin import CONSOLE

        config.stash[CONSOLE] = True  # the plugin's own table gives way to summary_text's

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        """The category and word as pytest gives them, with no letter: the bar replaces the dots."""
        result = yield
        if result and isinstance(result, tuple) and len(result) == 3:
            category, _, word = result
            return category, "", word
        return result

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not getattr(session.config, "workerinput", None) and session.items:
            self.progress.begin(len(session.items))

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown (and never called) without it
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.progress.begin(len(ids))  # with -n, the controller learns the size from each worker's collection

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.progress.advance()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.failed:
            return
        if str(report.location[2]).startswith(CASE_FILE_ERROR):  # a malformed case: the user must see it here
            self.case_errors.append(report.longreprtext)
        if self.log is None:
            return
        self.failed += 1
        if self._fh is None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.log, "w", encoding="utf-8")
        self._fh.write(f"{'=' * 20} {report.nodeid} ({report.when})\n{report.longreprtext}\n\n")
        self._fh.flush()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Before the terminal's summary: its failures and errors sections stay empty (the log has them; malformed
        # cases are written below), and the reports made while running kept their full text (--tb=short).
        if self.log is not None:
            session.config.option.tbstyle = "no"
        self.progress.close()
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.case_errors and self.log is not None:
            terminalreporter.section("malformed case files")
            for text in self.case_errors:
                terminalreporter.write_line(text)
        if self.failed and self.log is not None:
            terminalreporter.write_line(f"{self.failed} failing test report(s), each with its repro script: "
                                        f"{self.log_name or self.log}")


def _class(rec: Record) -> str:
    """The summary's column of a record: memory-unsafe (its label), crash (a crash or hang with no unsafe label),
    deviates, conforms, or other (not expressible, a harness fault)."""
    from gather_scatter_conformance.vocab.dimensions import is_memory_unsafe

    labels = [*(rec.label or "").split("|"), *(rec.distribution or {})]
    if any(is_memory_unsafe(label) for label in labels if label):
        return "memory-unsafe"
    if rec.outcome in ("crash", "timeout"):
        return "crash"
    if rec.verdict in ("conforms", "deviates"):
        return str(rec.verdict)
    return "other"


COLUMNS = ("conforms", "deviates", "memory-unsafe", "crash", "other", "changed")


def _tally(paths: list[str | Path], previous: Iterable[str | Path]
           ) -> tuple[list[Record], dict[str, dict[str, Any]], bool]:
    """The records of ``paths``, the counts per system (version and COLUMNS), and whether earlier results exist."""
    from gather_scatter_conformance.harness.run.records import read

    records = list(read(paths))
    prev_files = [p for p in previous if Path(p).exists()]
    # An empty previous file is a previous run with nothing in it (a file that is not results is still an error).
    before = {r.key: (r.verdict, r.label)
              for r in read([p for p in prev_files if Path(p).stat().st_size])} if prev_files else None
    cols = COLUMNS if before is not None else COLUMNS[:-1]
    systems: dict[str, dict[str, Any]] = {}
    for rec in records:
        row = systems.setdefault(rec.system, {"version": "", **dict.fromkeys(cols, 0)})
        row["version"] = rec.framework_version
        row[_class(rec)] += 1
        if before is not None and before.get(rec.key, (rec.verdict, rec.label)) != (rec.verdict, rec.label):
            row["changed"] += 1
    return records, dict(sorted(systems.items())), before is not None


def summary_counts(paths: Iterable[str | Path], previous: Iterable[str | Path] = ()) -> dict[str, dict[str, Any]]:
    """What :func:`summary_text` shows, as builtins (``gsc summary --json``): per system its version and counts."""
    return _tally(list(paths), previous)[1]


def summary_text(paths: Iterable[str | Path], previous: Iterable[str | Path] = ()) -> str:
    """Per system (framework, ``@device`` off the CPU, or converter path): its version and how many results
    conform, deviate, are memory-unsafe, crashed or hung, or are neither (``other``: not expressible, a harness
    fault); ``changed``: results whose verdict or label differs from the previous run's (files that do not exist
    are left out; without any, the column is left out)."""
    from gather_scatter_conformance.harness.run.records import completeness

    paths = list(paths)
    records, systems, compared = _tally(paths, previous)
    cols = COLUMNS if compared else COLUMNS[:-1]
    width = max([len("system"), *map(len, systems)]) + 2
    lines = [f"{'system':<{width}}{'version':<14}" + "".join(f"{c:>14}" for c in cols)]
    for system, row in systems.items():
        lines.append(f"{system:<{width}}{row['version'][:13]:<14}" + "".join(f"{row[c]:>14}" for c in cols))
    lines.append(f"{len(records)} results of {len(systems)} systems"
                 + ("" if compared else "; no previous run to compare with"))
    lines.append(completeness(paths))
    faults = sum(1 for r in records if r.outcome == "harness-error")
    if faults:
        lines.append(f"{faults} harness fault(s) among 'other': the harness or an adapter failed, not the framework")
    deviating = sum(row.get("deviates", 0) for row in systems.values())
    accepted = sum(1 for r in records if r.verdict == "deviates"
                   and (r.known_deviation or (r.label is not None and r.baseline == r.label)))
    if deviating:
        # Why 'deviates' and pytest's 'failed' differ (issue #39): what a known file or a baseline accepts passes.
        lines.append(f"{deviating} deviating result(s), {accepted} of them accepted (listed in known/<system>.yaml, or "
                     "a probe whose baseline gives that label); pytest's 'failed' counts the others but probes, whose "
                     "tests judge a label against a baseline only. Review them, then gsc baseline RESULTS --dir "
                     "baselines and gsc gate (docs/gate.md)")
    return "\n".join(lines)
