"""Importers: case files made from other projects' test data (ONNX's backend node tests) and the regression
cases' measured bug status (``gather_scatter_conformance.harness.importers.regression``).

Everything here writes deterministic text, so generated files can be committed and compared with a fresh import.
"""

from __future__ import annotations
