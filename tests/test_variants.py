"""The one variant grammar (adapters/variants.py) and the migration of data written with the old names
(scripts/migrate_variants.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gather_scatter_conformance import adapters
from gather_scatter_conformance.vocab import variants
from gather_scatter_conformance.vocab.ops import OPS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import migrate_variants as migrate  # noqa: E402


def _all_variants() -> list[tuple[str, str, str]]:
    out = []
    for name in adapters.table():
        adapter = adapters.get(name)  # adapter modules import no framework
        out += [(name, op, v) for op in OPS for v in adapter.variants(op)]
    return out


def test_every_variant_of_every_adapter_follows_the_grammar() -> None:
    bad = [(fw, op, v) for fw, op, v in _all_variants() if not variants.is_valid(v)]
    assert not bad, f"variants off the grammar <api>[/<mode>]: {bad}"


def test_no_adapter_offers_an_old_name() -> None:
    old = [(fw, op, v) for fw, op, v in _all_variants() if (fw, op, v) in migrate.RENAMES]
    assert not old
    offered = set(_all_variants())
    missing = [(fw, op, new) for (fw, op, _), new in migrate.RENAMES.items() if (fw, op, new) not in offered]
    assert not missing, f"renamed to variants no adapter offers: {missing}"


@pytest.mark.parametrize(("variant", "parts"), [
    ("take", ("take", None)), ("np.take", ("np.take", None)), ("Gather-13", ("Gather-13", None)),
    ("take/jit", ("take", "jit")), ("add_gather_v2/DEFAULT", ("add_gather_v2", "DEFAULT")),
    ("np.indexing", ("np.indexing", None)), ("take/raise", ("take", "raise")),
])
def test_split_and_join(variant: str, parts: tuple[str, str | None]) -> None:
    assert variants.split(variant) == parts
    assert variants.join(*parts) == variant


@pytest.mark.parametrize("bad", ["take-raise", "np-indexing", "opset13x/", "onnx-frontend", "a/b/c", "", "/jit"])
def test_names_off_the_grammar_are_refused(bad: str) -> None:
    assert not variants.is_valid(bad)
    with pytest.raises(ValueError, match="not <api>"):
        variants.split(bad)


def test_op_version() -> None:
    assert variants.op_version("Gather-13") == ("Gather", 13)
    assert variants.op_version("ScatterElementsUpdate-12") == ("ScatterElementsUpdate", 12)
    assert variants.op_version("take/jit") is None


# --- the migration script ----------------------------------------------------------------------------------------


def test_baseline_keys_are_renamed_by_the_case_files_op_and_idempotently() -> None:
    text = ("framework: jax\nlabels:\n"
            "  cases/probes/gather.yaml::probe-x[eager]: ok\n"
            "  cases/probes/gather_nd.yaml::probe-y[jit]@gpu: clamp\n"
            "  cases/probes/gather.yaml::probe-z[indexing]: ok\n")
    once = migrate.migrate_baseline(text, "jax")
    assert once == ("framework: jax\nlabels:\n"
                    "  cases/probes/gather.yaml::probe-x[take]: ok\n"
                    "  cases/probes/gather_nd.yaml::probe-y[indexing/jit]@gpu: clamp\n"
                    "  cases/probes/gather.yaml::probe-z[indexing]: ok\n")
    assert migrate.migrate_baseline(once, "jax") == once


def test_results_records_get_the_new_variant() -> None:
    recs = [{"case": "cases/take.yaml::t", "op": "Take", "framework": "onnxruntime", "variant": "opset11"},
            {"case": "cases/x.yaml::y", "op": "GatherElements", "framework": "mxnet", "variant": "pick-wrap"},
            {"case": "cases/x.yaml::y", "op": "Gather", "framework": "tensorflow", "variant": "gather/eager"}]
    text = "".join(json.dumps(r) + "\n" for r in recs)
    out = [json.loads(line) for line in migrate.migrate_results(text).splitlines()]
    assert [r["variant"] for r in out] == ["Gather-11", "pick/wrap", "gather/eager"]
    assert migrate.migrate_results(migrate.migrate_results(text)) == migrate.migrate_results(text)


def test_variants_lists_in_a_known_deviations_file() -> None:
    text = """framework: jax
deviations:
  - why: "fill"
    claim: {op: Gather, api: jnp.take}
    variants: [eager, jit]
    cases:
      - cases/gather.yaml::a
      - cases/regression/gather_nd.yaml::b: [eager, jit]
  - why: "clamp"
    variants:
      - indexing
      - eager
    cases:
      - cases/gather_elements.yaml::c
"""
    once = migrate.migrate_text(text, "jax")
    assert "variants: [take, take/jit]" in once
    assert "gather_nd.yaml::b: [indexing, indexing/jit]" in once
    assert "      - indexing\n      - take_along_axis\n" in once
    assert migrate.migrate_text(once, "jax") == once


def test_case_files_and_prose() -> None:
    text = ("op: ScatterND\ncases:\n- id: x\n  description: 'jax:eager and mxnet:np-setitem agree, jax:jit too'\n"
            "  bug:\n    framework: onnxruntime\n    variant: opset18\n")
    once = migrate.migrate_text(text)
    assert "jax:at and mxnet:np.setitem agree, jax:at/jit too" in once and "variant: ScatterND-18" in once
    assert migrate.migrate_text(once) == once
    # Without an op, only names whose new name is the same everywhere change.
    assert migrate.migrate_text("run [take-raise] and 'opset13' and [opset12]") == (
        "run [take/raise] and 'opset13' and [GatherND-12]")


@pytest.mark.parametrize(("variant", "kind", "twin"), [
    ("Gather-13", "constant", "Gather-13/constant"),
    ("gather/xla", "constant", "gather/xla_constant"),
    ("index_select/compile", "dynamic", "index_select/compile_dynamic"),
    ("Gather-13", "dynamic", "Gather-13/dynamic"),
])
def test_a_twin_names_its_parent_and_kind(variant: str, kind: str, twin: str) -> None:
    """#40: a twin is the same call with the indices a constant or the shapes symbolic; its name says which and of
    what, and the report reads both back (behaviour.twin_changes)."""
    assert variants.twin(variant, kind) == twin
    assert variants.twin_of(twin) == (variant, kind)
    assert variants.twin_of(variant) is None
    assert (variants.constant_parent(twin), variants.dynamic_parent(twin)) == (
        (variant, None) if kind == "constant" else (None, variant))
    with pytest.raises(ValueError, match="unknown twin"):
        variants.twin(variant, "static")
