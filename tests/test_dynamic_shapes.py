"""The shapes a dynamic-shapes twin declares (#40, adapters/onnx_graph.declared_shapes): a dim_param per dimension
but the index depth, and one name where the operator ties two inputs' dimensions, as an exporter's symbolic shapes
name them."""

from __future__ import annotations

from gather_scatter_conformance.adapters.onnx_graph import declared_shapes


def test_static_shapes_are_the_cases() -> None:
    assert declared_shapes("Gather", {"data": (3, 4), "indices": (2,)}, False) == {"data": [3, 4], "indices": [2]}


def test_each_dimension_gets_a_name_but_the_index_depth() -> None:
    assert declared_shapes("GatherND", {"data": (3, 4), "indices": (5, 2)}, True) == {
        "data": ["data_d0", "data_d1"], "indices": ["indices_d0", 2]}
    # TVM 0.27 and IREE 3.13.0 refuse a ScatterND whose index depth is symbolic; an exporter keeps it
    assert declared_shapes("ScatterND", {"data": (3, 4), "indices": (5, 1), "updates": (5, 4)}, True) == {
        "data": ["data_d0", "data_d1"], "indices": ["indices_d0", 1], "updates": ["indices_d0", "data_d1"]}


def test_scatter_updates_share_the_names_of_the_dimensions_they_must_equal() -> None:
    assert declared_shapes("ScatterElements", {"data": (3, 4), "indices": (2, 4), "updates": (2, 4)}, True) == {
        "data": ["data_d0", "data_d1"], "indices": ["indices_d0", "indices_d1"],
        "updates": ["indices_d0", "indices_d1"]}
    # updates = indices.shape[:-1] + data.shape[K:], K the index depth
    assert declared_shapes("ScatterND", {"data": (3, 4, 5), "indices": (2, 2), "updates": (2, 5)}, True)["updates"] \
        == ["indices_d0", "data_d2"]


def test_a_case_whose_shapes_break_the_tie_keeps_names_of_its_own() -> None:
    # a probe of the shape rule: the runtime must see the mismatch it is fed, not a model that forbids it
    assert declared_shapes("ScatterElements", {"data": (3, 4), "indices": (2, 4), "updates": (3, 4)}, True)[
        "updates"] == ["updates_d0", "updates_d1"]
    assert declared_shapes("ScatterND", {"data": (3, 4), "indices": (2, 1), "updates": (2, 3)}, True)[
        "updates"] == ["updates_d0", "updates_d1"]
