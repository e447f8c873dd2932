"""The conformance gate's verdict for a CI system: a JUnit XML report, and a Markdown summary for a step summary.

Both are functions of :class:`harness.judge.gate.Verdict`. Every text from a results file (system names, cell keys,
messages) is escaped here: XML by ElementTree, Markdown by vocab.safe.md.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from gather_scatter_conformance.vocab.gate import BITS, KINDS, MEANING
from gather_scatter_conformance.vocab.safe import md

if TYPE_CHECKING:
    from gather_scatter_conformance.harness.judge.gate import Verdict

SHOWN = 50  # findings listed in the Markdown summary; the JUnit report and the JSON hold them all


def junit_xml(verdict: Verdict) -> str:
    """One test suite per system, one test case per cell checked (named by its key) and per finding without a cell;
    a failing finding is a ``<failure>`` (type: its kind), an ignored one a ``<skipped>`` saying so."""
    suites = ET.Element("testsuites", name="gsc gate")
    systems = sorted({*verdict.checked, *(f.system for f in verdict.findings)})
    for system in systems:
        found: dict[str, list] = {}
        for f in verdict.findings:
            if f.system == system:
                found.setdefault(f.key, []).append(f)
        keys = list(dict.fromkeys([*verdict.checked.get(system, []), *found]))
        failures = sum(1 for k in keys if any(f.kind not in verdict.ignored for f in found.get(k, [])))
        suite = ET.SubElement(suites, "testsuite", name=system, tests=str(len(keys)), failures=str(failures),
                              errors="0", skipped="0")
        for key in keys:
            case = ET.SubElement(suite, "testcase", classname=system, name=key or "(baseline)")
            for f in found.get(key, []):
                if f.kind in verdict.ignored:
                    ET.SubElement(case, "skipped", message=f"{f.kind} (ignored by the policy): {f.message}")
                else:
                    ET.SubElement(case, "failure", type=f.kind, message=f.message).text = f.message
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def markdown(verdict: Verdict) -> str:
    """The verdict as a Markdown summary: passed or failed with the exit status, a table of kinds with counts and
    bits, and the first SHOWN failing findings."""
    status = verdict.exit_status()
    checked = sum(len(v) for v in verdict.checked.values())
    head = "passed" if status == 0 else f"failed (exit status {status})"
    lines = [f"## gsc gate: {head}", "",
             f"{checked} cell(s) of {len(verdict.checked)} system(s) checked against their baselines.", "",
             "| kind | what | found | exit bit |", "|---|---|---|---|"]
    counts = verdict.counts()
    for kind in KINDS:
        bit = "ignored" if kind in verdict.ignored else str(BITS[kind])
        lines.append(f"| `{kind}` | {MEANING[kind]} | {counts[kind]} | {bit} |")
    failing = verdict.failing()
    if failing:
        lines += ["", "| kind | system | cell | what changed |", "|---|---|---|---|"]
        for f in failing[:SHOWN]:
            lines.append(f"| `{f.kind}` | {md(f.system)} | {md(f.key) or '(all)'} | {md(f.message)} |")
        if len(failing) > SHOWN:
            lines.append(f"\n{len(failing) - SHOWN} more in the JUnit report and the JSON summary.")
    return "\n".join(lines) + "\n"
