"""The classifier names behaviours from observations; each expected label here is derived by hand."""

from __future__ import annotations

import numpy as np
import pytest

from gather_scatter_conformance.harness.judge.alias import unchecked_gather
from gather_scatter_conformance.harness.judge.classify import label
from gather_scatter_conformance.vocab.record import Record

F = np.float32
DATA = np.array([10, 20, 30, 40, 50], F)


def _rec(outcome: str, verdict: str = "deviates", **extra: object) -> Record:
    """A judged record of a case (one that names no adapter unless ``framework`` is given)."""
    return Record.read({"case": "c.yaml::p", "framework": "", "outcome": outcome, "verdict": verdict, **extra})


def _ok(value, **extra) -> tuple[Record, np.ndarray]:
    return _rec("ok", **extra), np.asarray(value)


@pytest.mark.parametrize(
    ("observed", "expected_label"),
    [([30.0], "wrap"), ([50.0], "clamp"), ([0.0], "zero"), ([np.nan], "fill-nan"), ([12345.0], "garbage")],
)
def test_out_of_bounds_gather(observed: list[float], expected_label: str) -> None:
    rec, obs = _ok(np.array(observed, F))
    inputs = {"data": DATA, "indices": np.array([7])}
    assert label("oob-positive", "Gather", inputs, {"axis": 0, "batch_dims": 0}, rec, obs) == expected_label


def test_outcomes_become_labels() -> None:
    inputs = {"data": DATA, "indices": np.array([7])}
    attrs = {"axis": 0, "batch_dims": 0}
    assert label("oob-positive", "Gather", inputs, attrs, _rec("error"), None) == "error"
    assert (
        label("oob-positive", "Gather", inputs, attrs, _rec("crash", signal="SIGFPE"), None) == "crash:SIGFPE"
    )
    assert label("oob-positive", "Gather", inputs, attrs, _rec("timeout"), None) == "timeout"
    rec, obs = _ok(np.array([30.0], F), distinct_outputs=3)
    assert label("oob-positive", "Gather", inputs, attrs, rec, obs) == "garbage"


def test_negative_indices_wrap_or_treated_as_out_of_range() -> None:
    inputs = {"data": DATA, "indices": np.array([-1])}
    attrs = {"axis": 0, "batch_dims": 0}
    assert label("negative-indices", "Gather", inputs, attrs, *_ok(np.array([50.0], F))) == "wrap"
    assert label("negative-indices", "Gather", inputs, attrs, *_ok(np.array([10.0], F))) == "clamp"
    assert label("negative-indices", "Gather", inputs, attrs, *_ok(np.array([0.0], F))) == "zero"


def test_alias_reads_the_next_row() -> None:
    data = np.arange(15, dtype=F).reshape(3, 5)
    inputs = {"data": data, "indices": np.array([[5], [6], [0]])}
    attrs = {"axis": 1, "batch_dims": 1}
    # Row 0 index 5 is offset 5 = data[1, 0]; row 1 index 6 is offset 11 = data[2, 1]; row 2 index 0 is data[2, 0].
    assert unchecked_gather("Gather", inputs, attrs).tolist() == [[5.0], [11.0], [10.0]]
    assert label("oob-alias", "Gather", inputs, attrs, *_ok(np.array([[5], [11], [10]], F))) == "alias"
    assert label("oob-alias", "Gather", inputs, attrs, *_ok(np.array([[4], [9], [10]], F))) == "clamp"


def test_alias_none_when_offset_leaves_the_buffer() -> None:
    inputs = {"data": DATA, "indices": np.array([7])}
    assert unchecked_gather("Gather", inputs, {"axis": 0, "batch_dims": 0}) is None


def test_unchecked_scatter_writes_the_next_row() -> None:
    inputs = {"data": np.zeros((2, 2), F), "indices": np.array([[2], [0]]), "updates": np.array([[7], [8]], F)}
    out = unchecked_gather("ScatterElements", inputs, {"axis": 1, "reduction": "none"})
    assert out.tolist() == [[0.0, 0.0], [8.0, 0.0]] or out.tolist() == [[0.0, 0.0], [7.0, 0.0]]


@pytest.mark.parametrize(
    ("observed", "expected_label"),
    [([2.0, 0.0], "last-wins"), ([1.0, 0.0], "first-wins"), ([3.0, 0.0], "accumulate"), ([9.0, 0.0], "garbage")],
)
def test_duplicates(observed: list[float], expected_label: str) -> None:
    inputs = {"data": np.zeros(2, F), "indices": np.array([[0], [0]]), "updates": np.array([1, 2], F)}
    rec, obs = _ok(np.array(observed, F))
    assert label("duplicates", "ScatterND", inputs, {"reduction": "none"}, rec, obs) == expected_label
    rec.distinct_outputs = 2
    assert label("duplicates", "ScatterND", inputs, {"reduction": "none"}, rec, obs) == "nondeterministic"


def test_uncovered() -> None:
    inputs = {"data": np.array([5, 6, 7], F), "indices": np.array([[1]]), "updates": np.array([9], F)}
    attrs = {"reduction": "none"}
    assert label("uncovered", "ScatterND", inputs, attrs, *_ok(np.array([5, 9, 7], F))) == "keep-data"
    assert label("uncovered", "ScatterND", inputs, attrs, *_ok(np.array([0, 9, 0], F))) == "zero"


@pytest.mark.parametrize(("framework", "variant", "want"), [
    ("tensorflow", "scatter_nd/eager", "zero-fill"),  # declared data-less (TensorFlowAdapter.NO_DATA_INPUT)
    ("mxnet", "scatter_nd", "zero-fill"),
    ("tensorflow~tf2onnx~onnxruntime", "scatter_nd/function", "zero-fill"),  # a path answers for its source API
    ("tensorflow", "tensor_scatter_nd/eager", "keep-data"),  # takes data: the zeros are the data it kept
    ("mxnet", "np.setitem", "keep-data"),
    ("", "", "keep-data"),  # a record that names no adapter
])
def test_uncovered_zero_data_says_whether_the_api_has_data(framework: str, variant: str,
                                                           want: str) -> None:
    """On all-zero data keep-data and zero coincide; an API without a data input is labelled zero-fill, for the
    zeros are its own, not data it kept."""
    inputs = {"data": np.zeros((2, 3), F), "indices": np.array([[1, 0]]), "updates": np.array([-1], F)}
    rec, obs = _ok(np.array([[0, 0, 0], [-1, 0, 0]], F), framework=framework, variant=variant)
    assert label("uncovered", "ScatterND", inputs, {"reduction": "none"}, rec, obs) == want


def test_zero_fill_needs_the_zeros() -> None:
    """A data-less API whose uncovered places are not 0 is not labelled zero-fill."""
    inputs = {"data": np.zeros(3, F), "indices": np.array([[1]]), "updates": np.array([9], F)}
    rec, obs = _ok(np.array([7, 9, 7], F), framework="tensorflow", variant="scatter_nd/eager")
    assert label("uncovered", "ScatterND", inputs, {"reduction": "none"}, rec, obs) == "garbage"


def test_default_axis() -> None:
    data = np.arange(6, dtype=F).reshape(2, 3)
    inputs = {"data": data, "indices": np.array([1])}
    attrs = {"axis": 0, "batch_dims": 0}
    assert label("default-axis", "Gather", inputs, attrs, *_ok(np.array([[3, 4, 5]], F))) == "axis-0"
    assert label("default-axis", "Gather", inputs, attrs, *_ok(np.array([1], F))) == "flatten"
    assert label("default-axis", "Gather", inputs, attrs, *_ok(np.array([[1], [4]], F))) == "last"
    assert label("default-axis", "Gather", inputs, attrs, _rec("error"), None) == "required"


def test_support_dimensions() -> None:
    inputs = {"data": DATA, "indices": np.array(1)}
    assert (
        label(
            "scalar-indices", "Gather", inputs, {"axis": 0}, _rec("ok", "conforms"), np.array(20, F)
        )
        == "ok"
    )
    assert (
        label(
            "scalar-indices", "Gather", inputs, {"axis": 0}, _rec("ok", "deviates"), np.array([20], F)
        )
        == "wrong"
    )


def test_default_axis_flattening_within_each_batch() -> None:
    # jax.vmap(jnp.take) flattens each batch element: row 0 of [[1..4],[5..8],[9..12]] gives 3 and 1 for [2, 0].
    data = np.arange(1, 25, dtype=F).reshape(2, 3, 4)
    inputs = {"data": data, "indices": np.array([[2, 0], [1, 2]])}
    attrs = {"axis": 1, "batch_dims": 1}
    assert label("default-axis", "Gather", inputs, attrs, *_ok(np.array([[3, 1], [14, 15]], F))) == "flatten"


def test_zero_fill_conforms_and_zero_does_not() -> None:
    """zero-fill (a data-less API's zeros on all-zero data) conforms beside keep-data; zero (data lost) does not."""
    from gather_scatter_conformance.harness.judge.dimensions import canonical_label, conforms

    assert canonical_label("ScatterND", "uncovered") == "keep-data"
    assert conforms("ScatterND", "uncovered", "zero-fill") and conforms("ScatterND", "uncovered", "keep-data")
    assert not conforms("ScatterND", "uncovered", "zero")
    assert not conforms("Gather", "oob-positive", "zero-fill")  # only where the vocabulary allows it
