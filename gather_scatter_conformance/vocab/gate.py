"""The conformance gate's vocabulary (harness.judge.gate): its finding kinds, the exit-status bit of each, and what
each means.

``gsc gate`` exits with the sum of the bits of the kinds it found and the policy does not ignore; 0 passes.
"""

from __future__ import annotations

BITS = {"no-baseline": 2, "new-deviation": 4, "label-change": 8, "new-unsafe": 16, "lost-coverage": 32}
KINDS = tuple(BITS)
MEANING = {
    "no-baseline": "a system of the run has no baseline: nothing of it was judged",
    "new-deviation": "a conformance case deviates where its baseline has no deviation, and no known/ entry "
                     "explains it (a probe of a case file the baseline never saw, too)",
    "label-change": "a probe's behaviour label (a converter path's preservation) is not one its baseline gives it",
    "new-unsafe": "a cell crashed, hung or entered the memory-unsafe class where its baseline had it outside",
    "lost-coverage": "a cell the baseline has, of a case file and device the run covered, did not run (no record, "
                     "unsupported, a fault of the harness)",
}
