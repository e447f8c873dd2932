"""Generated in-range cases for the overhead benchmark: every operator, two sizes, loaded as real cases.

They are written as a case file (seeded ``random``/``generate`` inputs) and loaded with harness.cases.load.load_file,
so they are exactly what a suite case is. In range and without duplicate scatter targets, so every framework
has one right answer and no case is risky (none needs a forked process).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import yaml

OPS = ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Take")
SMALL_MAX = 64  # data elements of a suite-sized case (the shipped cases are this small)


def _shape(rng: np.random.Generator, medium: bool) -> list[int]:
    if medium:
        return [int(rng.integers(50, 300)), int(rng.integers(100, 330))]
    return [int(rng.integers(2, 8)), int(rng.integers(2, 8))]


def _case(i: int, op: str, medium: bool, rng: np.random.Generator) -> dict[str, Any]:
    r, c = _shape(rng, medium)
    data = {"random": {"shape": [r, c], "dtype": "float32", "seed": i}}
    m = int(rng.integers(2, r + 1))
    attrs: dict[str, Any] = {}
    if op == "Gather":
        axis = int(rng.integers(0, 2))
        indices = {"generate": {"kind": "in-range", "shape": [m], "seed": i}}
        attrs = {"axis": axis}
    elif op == "GatherElements":
        axis = int(rng.integers(0, 2))
        indices = {"generate": {"kind": "in-range", "shape": [m, c] if axis == 0 else [r, max(2, c // 2)], "seed": i}}
        attrs = {"axis": axis}
    elif op == "GatherND":
        k = int(rng.integers(1, 3))
        indices = {"generate": {"kind": "in-range", "shape": [m, k], "seed": i}}
    elif op == "ScatterElements":
        axis = int(rng.integers(0, 2))
        shape = [m, c] if axis == 0 else [r, int(rng.integers(1, c + 1))]
        indices = {"generate": {"kind": "unique", "shape": shape, "seed": i}}
        attrs = {"axis": axis, "reduction": "add" if i % 4 == 3 else "none"}
    elif op == "ScatterND":
        k = int(rng.integers(1, 3))
        indices = {"generate": {"kind": "unique", "shape": [m, k], "seed": i}}
        attrs = {"reduction": "add" if i % 4 == 3 else "none"}
    else:
        indices = {"generate": {"kind": "in-range", "shape": [m], "seed": i}}
        attrs = {"axis": 0, "mode": "raise"}
    inputs: dict[str, Any] = {"data": data, "indices": indices}
    if op.startswith("Scatter"):
        inputs["updates"] = {"random": {"dtype": "float32", "seed": i + 1}}
    return {"id": f"bench-{i:04d}-{'medium' if medium else 'small'}", "source": "benchmarks/cases.py",
            "inputs": inputs, "attrs": attrs}


def generate(n: int, seed: int = 9) -> list[Any]:
    """``n`` cases (half of them medium-sized), cycling through the six operators."""
    from gather_scatter_conformance.harness.cases.load import Case, load_file

    rng = np.random.default_rng(seed)
    by_op: dict[str, list[dict[str, Any]]] = {op: [] for op in OPS}
    for i in range(n):
        op = OPS[i % len(OPS)]
        by_op[op].append(_case(i, op, medium=(i // len(OPS)) % 2 == 1, rng=rng))
    out: list[Case] = []
    with tempfile.TemporaryDirectory(prefix="gsc-bench-cases-") as tmp:
        for op, cases in by_op.items():
            if not cases:
                continue
            path = Path(tmp) / f"{op.lower()}.yaml"
            path.write_text(yaml.safe_dump({"op": op, "cases": cases}, sort_keys=False))
            for entry in load_file(path, f"bench/{path.name}"):
                if not isinstance(entry, Case):
                    raise ValueError(f"generated case is invalid: {entry}")
                out.append(entry)
    return out


def size_class(case: Any) -> str:
    """'small' (suite-sized) or 'medium', by the data's element count."""
    return "small" if int(np.prod(case.inputs()["data"].shape)) <= SMALL_MAX else "medium"


def reset(case: Any) -> None:
    """Forget everything a case computed lazily (inputs, reference, encoded payload, validated spec), so the next
    run pays for it as the first run of that case in a fresh process does."""
    for name in ("_inputs", "_reference", "_spec"):
        if hasattr(case, name) and (name != "_spec" or getattr(case, "raw", None) is not None):
            setattr(case, name, None)
    if hasattr(case, "memo"):
        case.memo.clear()
