"""Generated cases as case-file entries (harness/cases/schema.py), and found cases written to ``cases/found/``.

In memory an entry's inputs are ``{value: <flat list>, dtype, shape}`` (what the fuzzer runs is what is written);
on disk they are nested flow lists through the case files' one writer, :mod:`harness.importers.yamltext`, with a
comment above each case saying why it was written. The ``expected`` value is the reference engine's
(``{error: true}`` where canonical semantics raise). Files are merged by case id (a digest of the case's content),
so running the same seed again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.cases import yamlsrc
from gather_scatter_conformance.harness.cases.load import Case, ExpectedError
from gather_scatter_conformance.harness.cases.schema import CaseSpec
from gather_scatter_conformance.harness.cases.values import to_array, to_jsonable
from gather_scatter_conformance.harness.fuzz.strategies import GenCase
from gather_scatter_conformance.harness.importers import yamltext
from gather_scatter_conformance.vocab import dtypes
from gather_scatter_conformance.vocab.ops import FILE_NAMES, SCATTER_OPS, with_defaults

HEADER = [
    "Cases found by differential fuzzing (gsc fuzz; docs/fuzzing.md). Each is a shrunk case on which "
    "a framework API disagrees with the reference engine in a way its baseline labels do not explain; its finding "
    "block says which, and what every API answered. Written by harness/fuzz/writer.py; entries are merged by id.",
]
SOURCE = "differential fuzzing, shrunk (finding.by); expected: reference engine"


@dataclass(frozen=True)
class Found:
    """A found case to write: its entry (a mapping for CaseSpec) and the comment lines saying why it exists."""

    spec: dict[str, Any]
    why: list[str] = field(default_factory=list)


def _input(arr: np.ndarray) -> dict[str, Any]:
    return {"value": to_jsonable(arr.reshape(-1)), "dtype": dtypes.name_of(arr.dtype), "shape": list(arr.shape)}


def risk_tags(gc: GenCase) -> list[str]:
    """Tags that make harness.run.isolation.is_risky run the case in a worker of its own, where they apply."""
    from gather_scatter_conformance.harness.fuzz.triage import index_features

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


def to_spec(gc: GenCase, source: str, description: str = "", expected: Any = None,
            finding: dict[str, Any] | None = None) -> dict[str, Any]:
    """The case-file entry (a dict for CaseSpec) of a generated case; ``expected`` and ``finding`` (a FindingSpec
    mapping) are written when given."""
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
    if finding is not None:
        spec["finding"] = finding
    return spec


def to_case(gc: GenCase, source: str = "harness fuzz") -> Case:
    """A harness Case for ``gc``, validated by the case schema, inputs read back from the written form."""
    raw = to_spec(gc, source)
    spec = CaseSpec.model_validate(raw)
    # Case caches its reference result: the fuzzer asks for it once per API.
    return Case("<fuzz>", 0, gc.op, raw, with_defaults(gc.op, spec.attrs), {}, spec.id, list(spec.tags),
                spec.dimension, _spec=spec)


def _arrays(spec: dict[str, Any]) -> dict[str, Any]:
    """The entry with its inputs and value ``expected`` as arrays, for yamltext (every operator's output has the
    data's dtype)."""
    out = dict(spec)
    out["inputs"] = {name: to_array(v["value"], v["dtype"], v.get("shape")) for name, v in spec["inputs"].items()}
    if "expected" in spec and not isinstance(spec["expected"], dict):
        out["expected"] = to_array(spec["expected"], dtypes.name_of(out["inputs"]["data"].dtype))
    return out


def _load(path: Path) -> list[Found]:
    """The entries of a found-case file, each with the comment lines above it."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    data, lines = yamlsrc.load(text, str(path))
    src = text.split("\n")
    out = []
    for i, spec in enumerate((data or {}).get("cases") or []):
        first = lines[("cases", i)] - 1
        while first > 0 and src[first - 1].lstrip().startswith("#"):
            first -= 1
        # Line by line: each was wrapped to fit, so writing it again gives the same line.
        out.append(Found(spec, [ln.strip().removeprefix("#").strip() for ln in src[first : lines[("cases", i)] - 1]]))
    return out


def write_found(out_dir: Path, op: str, found: list[Found]) -> tuple[Path, int]:
    """Merge ``found`` into ``out_dir``/<op file>: same id replaces, new ids append in id order (so the file does
    not depend on the order findings were met in). Returns (path, number of new entries)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FILE_NAMES[op]
    entries = _load(path)
    index = {e.spec.get("id"): i for i, e in enumerate(entries)}
    added = 0
    for new in sorted(found, key=lambda f: f.spec["id"]):
        if new.spec["id"] in index:
            entries[index[new.spec["id"]]] = new
        else:
            index[new.spec["id"]] = len(entries)
            entries.append(new)
            added += 1
    if entries:
        cases = [yamltext.case_lines(_arrays(e.spec), e.why) for e in entries]
        path.write_text(yamltext.file_text(HEADER, op, cases), encoding="utf-8")
    return path, added
