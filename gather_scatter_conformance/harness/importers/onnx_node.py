"""ONNX's backend node tests of the harness's operators, as case files (``gsc import onnx-node``).

ONNX generates its node tests in memory: each ``export*`` function of ``onnx.backend.test.case.node`` builds a
one-node model and its inputs and outputs (NumPy's global generator seeded with 0 before each export, so the
random inputs are the same on every run). This module reads each model's node attributes and opset import, the
inputs and ONNX's expected output, and writes one case per test, values inline and exact.

The deprecated ``Scatter`` (opset 9/10, ScatterElements' predecessor) becomes a ScatterElements case at opset 11:
ScatterElements-11 is Scatter-11 renamed, and Scatter-11 only added negative indices to Scatter-9, so on
non-negative indices the three agree. The harness's ONNX adapters have no ScatterElements before opset 11;
onnxruntime's ``Scatter-9``/``Scatter-11`` variants run the deprecated operator itself.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.importers import yamltext
from gather_scatter_conformance.vocab import ops

# ONNX op type -> the harness operator its cases belong to: every operator of the vocabulary that ONNX has (Take is
# not ONNX's), and the deprecated Scatter.
FAMILY = {**{op: op for op in ops.OPS if op != "Take"}, "Scatter": "ScatterElements"}
SCATTER_OPSET = 11  # what a Scatter-9/10 model is imported as (see the module docstring)


@dataclass
class NodeTest:
    """One ONNX node test of the family: what the model says, and ONNX's data."""

    name: str
    op_type: str
    opset: int
    attrs: dict[str, Any]
    inputs: list[np.ndarray]
    output: np.ndarray


@dataclass
class Imported:
    """One converted test: the case's fields in file order, and notes for the command's report."""

    op: str
    fields: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def _attr_value(attr: Any) -> Any:
    from onnx import helper

    value = helper.get_attribute_value(attr)
    return value.decode() if isinstance(value, bytes) else value


def node_tests() -> tuple[list[NodeTest], list[tuple[str, str]]]:
    """ONNX's node tests of the harness's operators, sorted by name, and (name, op type) of the other tests whose
    names say gather or scatter (not imported)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():  # generating all node tests raises unrelated overflow warnings
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    family, other = [], []
    for case in cases:
        if case.kind != "node" or case.model is None:
            continue
        graph = case.model.graph
        op_type = graph.node[0].op_type if len(graph.node) == 1 else "(several nodes)"
        if op_type not in FAMILY:
            if "gather" in case.name.lower() or "scatter" in case.name.lower():
                other.append((case.name, op_type))
            continue
        (inputs, outputs), *more = case.data_sets
        if more or len(outputs) != 1:
            raise ValueError(f"{case.name}: expected one data set with one output")
        opset = next(o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx"))
        node = graph.node[0]
        family.append(
            NodeTest(
                name=case.name,
                op_type=op_type,
                opset=opset,
                attrs={a.name: _attr_value(a) for a in node.attribute},
                inputs=[np.asarray(x) for x in inputs],
                output=np.asarray(outputs[0]),
            )
        )
    return sorted(family, key=lambda t: t.name), sorted(other)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def _reference_note(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any], want: np.ndarray) -> str | None:
    """None when the reference engine computes ONNX's output exactly; else what it says instead."""
    from gather_scatter_conformance.harness.reference import AllowedOutputs, IndexOutOfRange, InvalidInput, compute

    try:
        got = compute(op, inputs, attrs)
    except (IndexOutOfRange, InvalidInput) as exc:
        return f"the reference engine raises {type(exc).__name__}: {exc}"
    if isinstance(got, AllowedOutputs):
        return None if got.contains(want).all() else "ONNX's output is not among the reference engine's allowed ones"
    if _same(got, want):
        return None
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"the reference engine gives {got.dtype} {list(got.shape)}, ONNX {want.dtype} {list(want.shape)}"
    bad = np.argwhere(~((got == want) | ((got != got) & (want != want))))
    first = tuple(int(i) for i in bad[0])
    return f"{len(bad)} element(s) differ; first at {list(first)}: reference {got[first]!r}, ONNX {want[first]!r}"


def _tags(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any]) -> list[str]:
    tags = ["imported", "onnx-node", "spec", "onnx"]
    if "indices" in inputs and (inputs["indices"] < 0).any():
        tags.append("negative-indices")
    if attrs.get("batch_dims"):
        tags.append("batch_dims")
    if attrs.get("reduction", "none") != "none":
        tags.append("reduction")
        from gather_scatter_conformance.harness.reference import compute

        counts = compute(
            op,
            {"data": np.zeros(inputs["data"].shape), "indices": inputs["indices"],
             "updates": np.ones(inputs["updates"].shape)},
            {**attrs, "reduction": "add"},
        )
        if (np.asarray(counts) > 1).any():
            tags.append("duplicates")
    return tags


def _signature(t: NodeTest, names: tuple[str, ...]) -> str:
    args = [f"{n} {x.dtype} {list(x.shape)}" for n, x in zip(names, t.inputs, strict=True)]
    args += [f"{k}={v!r}" for k, v in t.attrs.items()]
    return f"{t.op_type}({', '.join(args)}) -> {t.output.dtype} {list(t.output.shape)}"


def convert(t: NodeTest, onnx_version: str) -> Imported:
    """One node test as a case: ONNX's inputs, attributes, opset and expected output, with provenance.

    When the reference engine disagrees with ONNX's output the case gets no ``expected`` (it could not load) and
    a ``caveat`` that records ONNX's value and the difference, so the import still succeeds and says so.
    """
    op = FAMILY[t.op_type]
    names = ops.INPUTS[op]
    if not len(ops.required_inputs(op)) <= len(t.inputs) <= len(names):
        raise ValueError(f"{t.name}: {len(t.inputs)} inputs, {op} takes {len(names)}")
    names = names[:len(t.inputs)]  # an optional input the test leaves out is the last (ONNX's input order)
    inputs = dict(zip(names, t.inputs, strict=False))
    attrs = dict(t.attrs)
    unknown = set(attrs) - set(ops.ATTRS[op])
    if unknown:
        raise ValueError(f"{t.name}: attribute(s) {sorted(unknown)} have no harness equivalent")
    opset = t.opset
    how = f"the model imports opset {t.opset}"
    if t.op_type == "Scatter":
        if (inputs["indices"] < 0).any():
            raise ValueError(f"{t.name}: Scatter-9 has no negative indices; ScatterElements-11 would wrap them")
        opset = SCATTER_OPSET
        how = (f"the model imports opset {t.opset} and uses the deprecated Scatter, imported as ScatterElements at "
               f"opset {SCATTER_OPSET} (same semantics on non-negative indices; onnxruntime's Scatter-9/11 "
               "variants run Scatter itself)")
    note = _reference_note(op, inputs, attrs, t.output)
    signature = _signature(t, tuple(ops.onnx_input_name(op, n) for n in names))  # the node's own input names
    fields: dict[str, Any] = {
        "id": t.name,
        "source": f"onnx {onnx_version} backend node test {t.name}",
        "description": (f"{signature}; {how}. Inputs and expected output are ONNX's own (its exports "
                        "seed NumPy with 0); " + ("the reference engine agrees." if note is None else
                                                  f"NOTE: the reference engine disagrees: {note}.")),
        "tags": _tags(op, inputs, attrs),
        "opset": opset,
        "inputs": inputs,
        "attrs": attrs,
    }
    if note is None:
        fields["expected"] = t.output
    else:
        fields["caveat"] = {"kind": "ambiguous", "why": f"the reference engine disagrees with ONNX's output: {note}"}
    return Imported(op, fields, [f"{t.name}: {note}"] if note else [])


def file_name(op: str) -> str:
    """The imported file of one operator: ``onnx_node_<op file>`` (e.g. onnx_node_gather_nd.yaml)."""
    return "onnx_node_" + ops.FILE_NAMES[op]


def import_files() -> tuple[dict[str, str], list[str]]:
    """Every imported file's text by file name, and report lines (counts, skipped tests, disagreements)."""
    import onnx

    tests, other = node_tests()
    converted = [convert(t, onnx.__version__) for t in tests]
    by_op: dict[str, list[Imported]] = {}
    for c in converted:
        by_op.setdefault(c.op, []).append(c)
    files = {}
    for op in sorted(by_op, key=ops.OPS.index):
        # Only this file's own facts: a header that counted every operator's tests would change every file each
        # time an operator joins (the command's report lists the tests not imported).
        header = [
            f"Generated by `gsc import onnx-node` from onnx {onnx.__version__}'s backend node tests:",
            "do not edit. Each case is one test's one-node model (attributes, opset import) with ONNX's inputs and",
            "expected output, floats in their shortest exact spelling. tests/test_import_onnx_node.py checks that",
            "this file equals a fresh import.",
            f"{len(by_op[op])} {op} tests in this onnx version.",
        ]
        files[file_name(op)] = yamltext.file_text(header, op, [yamltext.case_lines(c.fields) for c in by_op[op]])
    report = [f"onnx {onnx.__version__}: {len(tests)} node tests imported into {len(files)} files"]
    report += [f"not imported: {name} ({op})" for name, op in other]
    report += [f"reference engine disagrees: {n}" for c in converted for n in c.notes]
    return files, report


def cli_main(args: argparse.Namespace) -> int:
    """``gsc import SOURCE``: write (or with ``--check`` compare) the imported case files.

    Returns 0 when the files were written or are up to date, 1 when ``--check`` finds them stale.
    """
    out = Path(args.out or "cases/imported")  # relative to the current directory
    if out.suffix in (".yaml", ".yml"):
        # A case file holds one operator, so the import writes one file per operator into a directory.
        print(f"--out {out}: give a directory; the import writes onnx_node_<op>.yaml, one file per operator",
              file=sys.stderr)
        return 2
    files, report = import_files()
    for line in report:
        print(line)
    if args.check:
        stale = [n for n, text in files.items() if not (out / n).exists() or (out / n).read_bytes() != text.encode()]
        for name in stale:
            print(f"stale: {out / name} differs from a fresh import")
        return 1 if stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        print(f"wrote {out / name}")
    return 0
