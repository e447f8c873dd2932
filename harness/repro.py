"""The failure message of a deviating test: the smallest repro a framework engineer can paste and run."""

from __future__ import annotations

from typing import Any

import numpy as np

from harness import dtypes
from harness.cases import Case

_MAX_SHOWN = 200  # elements; larger inputs are shown by shape, dtype and how to regenerate them


def _literal(arr: np.ndarray) -> str:
    name = dtypes.name_of(arr.dtype)
    if arr.size > _MAX_SHOWN:
        return f"<{name} array of shape {list(arr.shape)}; regenerate from the case file>"
    values = np.asarray(arr, dtype=np.float32).tolist() if name == "bfloat16" else arr.tolist()
    if name == "bfloat16":
        return f"np.array({values!r}, dtype=ml_dtypes.bfloat16)"
    dt = "object" if name == "string" else f"np.{name}" if name != "bool" else "bool"
    return f"np.array({values!r}, dtype={dt})"


def snippet(case: Case, api: str) -> str:
    """Python lines that rebuild the inputs as NumPy arrays, then the native call (framework-specific names)."""
    lines = ["import numpy as np"]
    lines += [f"{name} = {_literal(arr)}" for name, arr in case.inputs().items()]
    if api:
        lines.append(api)
    return "\n".join(lines)


def failure_message(case: Case, record: dict[str, Any]) -> str:
    """A self-contained description of a deviation: what was called on what, what was expected, what happened."""
    head = f"{case.nodeid} [{record['framework']} {record.get('framework_version', '')}, {record['variant']}]"
    lines = [
        f"{head}: deviates from canonical ONNX semantics: {record.get('reason', '')}",
        f"  op:       {case.op} {case.attrs}",
        f"  source:   {case.spec.source}",
        f"  call:     {record.get('api') or '(not reached)'}",
        f"  expected: {record.get('expected') if record.get('expected') is not None else '(large; see case)'}",
    ]
    if record["outcome"] == "ok":
        lines.append(
            f"  observed: {record.get('observed') if record.get('observed') is not None else '(large)'}"
            f" dtype={record.get('observed_dtype')}"
        )
        for m in record.get("first_mismatches") or []:
            lines.append(f"    at {m['index']}: expected {m['expected']!r}, observed {m['observed']!r}")
    else:
        lines.append(
            f"  observed: {record['outcome']}: {record.get('error_type') or ''}: {record.get('error_message')}"
        )
    lines.append("  repro:")
    lines += ["    " + line for line in snippet(case, record.get("api", "")).splitlines()]
    return "\n".join(lines)
