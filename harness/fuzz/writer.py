"""Generated cases as case-file entries (harness/schema.py), and found cases written to ``cases/found/``.

Inputs are written as ``{value: <flat list>, dtype, shape}``, so any rank reads back exactly; the ``expected``
value is the reference engine's (``{error: true}`` where canonical semantics raise). Files are merged by case
id (a digest of the case's content), so running the same seed again changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from harness import dtypes
from harness.cases import Case, ExpectedError
from harness.fuzz.strategies import GenCase
from harness.ops import FILE_NAMES, SCATTER_OPS, with_defaults
from harness.schema import CaseSpec
from harness.values import to_jsonable

_HEADER = (
    "# Cases found by differential fuzzing (python -m harness fuzz; docs/fuzzing.md). Each is a shrunk case on\n"
    "# which a framework API disagrees with the reference engine in a way its baseline labels do not explain.\n"
    "# Written by harness/fuzz/writer.py; entries are merged by id, so edit descriptions with care.\n"
)


def _input(arr: np.ndarray) -> dict[str, Any]:
    return {"value": to_jsonable(arr.reshape(-1)), "dtype": dtypes.name_of(arr.dtype), "shape": list(arr.shape)}


def risk_tags(gc: GenCase) -> list[str]:
    """Tags that make harness.isolation.is_risky run the case in a worker of its own, where they apply."""
    from harness.fuzz.triage import index_features

    feats = index_features(gc) if gc.op != "Take" or gc.attrs.get("mode") == "raise" else set()
    tags = []
    if {"oob-positive", "oob-negative"} & feats:
        tags.append("out-of-bounds")
    if gc.op in SCATTER_OPS and "negative-indices" in feats:
        tags.append("negative-indices")
    return tags


def case_id(gc: GenCase) -> str:
    """The id a generated case is written under: operator and a digest of its content."""
    return f"fuzz-{gc.op.lower()}-{gc.key[:10]}"


def to_spec(gc: GenCase, source: str, description: str = "", expected: Any = None) -> dict[str, Any]:
    """The case-file entry (a dict for CaseSpec) of a generated case; ``expected`` is written when given."""
    spec: dict[str, Any] = {
        "id": case_id(gc),
        "source": source,
        "description": description,
        "tags": ["found", "fuzz", *risk_tags(gc)],
        "inputs": {name: _input(arr) for name, arr in gc.inputs.items()},
        "attrs": dict(gc.attrs),
    }
    if isinstance(expected, ExpectedError):
        spec["expected"] = {"error": True}
    elif expected is not None:
        spec["expected"] = to_jsonable(np.asarray(expected))
    return spec


def to_case(gc: GenCase, source: str = "harness fuzz") -> Case:
    """A harness Case for ``gc``, validated by the case schema, inputs read back from the written form."""
    raw = to_spec(gc, source)
    spec = CaseSpec.model_validate(raw)
    # Case caches its reference result: the fuzzer asks for it once per API.
    return Case("<fuzz>", 0, gc.op, raw, with_defaults(gc.op, spec.attrs), {}, spec.id, list(spec.tags),
                spec.dimension, _spec=spec)


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return list(data.get("cases") or [])


class _Flow(list):
    """A list YAML writes on one line (``[[1, 2], [3, 4]]``): tensors stay readable at any rank."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Flow, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))


def _flow(value: Any) -> Any:
    return _Flow(_flow(v) for v in value) if isinstance(value, list) else value


def _dump(op: str, entries: list[dict[str, Any]]) -> str:
    def flowed(entry: dict[str, Any]) -> dict[str, Any]:
        out = dict(entry)
        if isinstance(out.get("expected"), list):
            out["expected"] = _flow(out["expected"])
        out["inputs"] = {k: {**v, "value": _flow(v["value"])} for k, v in out["inputs"].items()}
        return out

    body = yaml.dump({"op": op, "cases": [flowed(e) for e in entries]}, Dumper=_Dumper, sort_keys=False,
                     width=120, allow_unicode=True, default_flow_style=None)
    return _HEADER + body


def write_found(out_dir: Path, op: str, specs: list[dict[str, Any]]) -> tuple[Path, int]:
    """Merge ``specs`` into ``out_dir``/<op file>: same id replaces, new ids append in id order (so the file does
    not depend on the order findings were met in). Returns (path, number of new entries)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FILE_NAMES[op]
    entries = _load(path)
    index = {e.get("id"): i for i, e in enumerate(entries)}
    added = 0
    for spec in sorted(specs, key=lambda sp: sp["id"]):
        if spec["id"] in index:
            entries[index[spec["id"]]] = spec
        else:
            index[spec["id"]] = len(entries)
            entries.append(spec)
            added += 1
    if entries:
        path.write_text(_dump(op, entries), encoding="utf-8")
    return path, added
