"""ONNX's own backend node tests of the harness's operators, run through the reference engine."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest
from onnx import helper

from gather_scatter_conformance.harness.reference import AllowedOutputs, compute
from gather_scatter_conformance.vocab.ops import INPUTS, OPS

FAMILY = {*OPS, "Scatter"} - {"Take"}  # the vocabulary's operators that ONNX has, and the deprecated Scatter


# ONNX's node-test modules of those operators. collect_testcases() imports all ~190 of them, and each computes its
# expected outputs on import (the pooling ones alone take seconds): about 20 s of every pytest worker's collection,
# in `make check` too. Importing these seven registers their cases only; test_case_count notices a change.
FAMILY_MODULES = ("gather", "gatherelements", "gathernd", "scatter", "scatterelements", "scatternd", "tensorscatter")


def _family_cases() -> list:
    import importlib

    from onnx.backend.test.case import node

    with warnings.catch_warnings():  # as collect_testcases does: the exports' own numpy warnings are not ours
        warnings.simplefilter("ignore")
        for name in FAMILY_MODULES:
            importlib.import_module(f"{node.__name__}.{name}")
    return [
        c
        for c in node._NodeTestCases  # what the imports registered (collect_testcases returns this same list)
        if c.kind == "node"
        and c.model is not None
        and len(c.model.graph.node) == 1
        and c.model.graph.node[0].op_type in FAMILY
    ]


CASES = _family_cases()


def test_case_count() -> None:
    # onnx 1.23.2 has 29 such tests: Gather 4, GatherElements 3, GatherND 3, Scatter 2, ScatterElements 7,
    # ScatterND 7, TensorScatter 3 (opset 24).
    assert onnx.__version__ == "1.23.2", "recount the operators' node tests for this onnx version"
    assert len(CASES) == 29


def _opset(model: onnx.ModelProto) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case(case) -> None:
    node = case.model.graph.node[0]
    op = "ScatterElements" if node.op_type == "Scatter" else node.op_type  # Scatter-9/11 = ScatterElements
    if node.op_type == "Scatter":
        assert _opset(case.model) < 13  # deprecated in 11, removed in 13: only old models carry it
    attrs = {}
    for a in node.attribute:
        value = helper.get_attribute_value(a)
        attrs[a.name] = value.decode() if isinstance(value, bytes) else value
    assert case.data_sets, "node test without data"
    for inputs, outputs in case.data_sets:
        assert len(inputs) <= len(INPUTS[op]) and len(outputs) == 1
        result = compute(op, dict(zip(INPUTS[op], inputs, strict=False)), attrs)
        assert not isinstance(result, AllowedOutputs), "ONNX's tests have no order-dependent duplicates"
        expected = np.asarray(outputs[0])
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected, strict=True)  # assert_array_equal treats NaN == NaN
