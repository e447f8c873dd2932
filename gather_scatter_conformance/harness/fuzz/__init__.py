"""Differential fuzzing (``gsc fuzz``): Hypothesis-generated cases on every framework API, triaged
against the reference engine and the baselines' behaviour labels; findings are shrunk and written as cases.

Modules: strategies (case generation), differ (running and judging), triage (labelled or finding), shrink,
writer (case files), summary (agreement tables), run (the command), command (its options). This package's
top level imports nothing.
"""

from __future__ import annotations
