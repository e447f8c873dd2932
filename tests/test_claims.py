"""The documented-claims registry (claims/*.yaml, harness/report/claims.py): files load and validate, every claim
cites its source, broken files give a clear error, and lookup picks the right claim. That no verdict code reads the
claims is tests/test_layers.py's: nothing below the report imports it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from gather_scatter_conformance.harness.judge.dimensions import DIMENSIONS
from gather_scatter_conformance.harness.report.claims import (
    DOC_ONLY_LABELS,
    ClaimFileError,
    agrees,
    labels_for,
    load_claim_file,
    load_claims,
    lookup,
    lookup_all,
)
from gather_scatter_conformance.vocab.ops import OPS

ROOT = Path(__file__).resolve().parent.parent
CLAIMS_DIR = ROOT / "claims"
FRAMEWORKS = (
    "onnx",
    "numpy",
    "tensorflow",
    "torch",
    "jax",
    "mxnet",
    "onnxruntime",
    "openvino",
    "tensorrt",
    "directml",
    "caffe2",
)
FILES = sorted(CLAIMS_DIR.glob("*.yaml"))


@pytest.fixture(scope="module")
def claims():
    return load_claims(CLAIMS_DIR)


def test_every_framework_has_a_claim_file():
    names = {f.stem for f in FILES}
    assert set(FRAMEWORKS) | {"blog-2020"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_file_loads_and_validates(path):
    file_claims, _ = load_claim_file(path)
    assert file_claims, f"{path.name} has no claims"
    for c in file_claims:
        assert c.framework == path.stem
        assert c.op in OPS
        assert c.dimension in DIMENSIONS
        assert c.label in labels_for(c.dimension)


def test_every_claim_has_a_citation_and_a_quote(claims):
    citation = re.compile(r"^(https?://\S+|[\w.-]+/[\w.-]+ \S+ @ \S+)$")
    for c in claims:
        assert citation.match(c.source), c
        assert c.text.strip(), c
        for url in c.reported:
            assert url.startswith(("https://", "http://")), c


def test_reported_links_are_issues_not_documentation(claims):
    # Bug reports may only appear in `reported`, never as the source of a documentation claim.
    for c in claims:
        if c.source_kind == "documentation":
            assert not re.search(r"github\.com/[^/]+/[^/]+/(issues|pull)/", c.source), c


def test_doc_only_labels_are_used_and_known(claims):
    used = {c.label for c in claims}
    assert set(DOC_ONLY_LABELS) <= used


def test_blog_tables_are_recorded_cell_by_cell():
    blog_claims, unmapped = load_claim_file(CLAIMS_DIR / "blog-2020.yaml")
    cells = {c.locator for c in blog_claims} | {u.locator for u in unmapped}
    table1 = {loc for loc in cells if loc.startswith("Table 1")}
    table2 = {loc for loc in cells if loc.startswith("Table 2")}
    assert len(table1) == 4 * 6  # 4 rows x (GatherND, ScatterND) x (ONNX, TF, MxNet)
    assert len(table2) == 4 * 5  # 4 rows x (ONNX, TF, Caffe2, Numpy, Mxnet)
    assert all(c.source_kind == "secondary" and c.about for c in blog_claims)


def test_secondary_claims_are_marked(claims):
    caffe2 = [c for c in claims if c.framework == "caffe2"]
    assert any(c.source_kind == "secondary" for c in caffe2)
    assert all(c.source_kind == "documentation" for c in claims if c.framework in ("onnx", "tensorflow", "numpy"))


# ----------------------------------------------------------------------------------------------- broken files


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD_CLAIM = """\
framework: tensorflow
claims:
  - op: Gather
    api: tf.gather
    dimension: oob-positive
    label: error
    device: cpu
    text: "On CPU, if an out of bound index is found, an error is raised."
    source: https://www.tensorflow.org/api_docs/python/tf/gather
"""


def test_a_good_file_in_tmp_path_loads(tmp_path):
    _write(tmp_path, "tensorflow.yaml", GOOD_CLAIM)
    (claim,) = load_claims(tmp_path)
    assert (claim.framework, claim.label, claim.device) == ("tensorflow", "error", "cpu")


def test_the_index_finds_what_a_scan_of_the_list_finds():
    # The report looks every measured cell up through the index (harness.report.claims.Claims): the same claims, in
    # file order, as a scan of the plain list, for every framework, operator and dimension the files name.
    claims = load_claims(CLAIMS_DIR)
    listed = list(claims)
    keys = {(c.framework, c.op, c.dimension) for c in listed} | {("tensorflow", "Gather", "no-such-dimension")}
    for fw, op, dim in sorted(keys):
        assert claims.about(fw, op, dim) == [c for c in listed if (c.framework, c.op, c.dimension) == (fw, op, dim)]
    fw, op, dim = sorted(keys)[0]
    assert lookup_all(claims, fw, op, dim) == lookup_all(listed, fw, op, dim) != []


def test_claims_are_loaded_again_when_a_file_changes(tmp_path):
    _write(tmp_path, "tensorflow.yaml", GOOD_CLAIM)
    first = load_claims(tmp_path)
    assert load_claims(tmp_path) is first  # the report's table, site and advisories share one load
    _write(tmp_path, "tensorflow.yaml", GOOD_CLAIM.replace("label: error", "label: clamp"))
    (claim,) = load_claims(tmp_path)
    assert claim.label == "clamp"


@pytest.mark.parametrize(
    ("old", "new", "field", "words"),
    [
        ("dimension: oob-positive", "dimension: oob-positiv", "claims[0].dimension", "unknown dimension 'oob-positiv'"),
        ("label: error", "label: keep-data", "claims[0].label", "not a label of dimension 'oob-positive'"),
        ("op: Gather", "op: Gatherr", "claims[0].op", "unknown op 'Gatherr'"),
        (
            "    source: https://www.tensorflow.org/api_docs/python/tf/gather\n",
            "",
            "claims[0].source",
            "Field required",
        ),
        (
            "source: https://www.tensorflow.org/api_docs/python/tf/gather",
            "source: the TF docs",
            "claims[0].source",
            "is not a citation",
        ),
        (
            'text: "On CPU, if an out of bound index is found, an error is raised."',
            'text: "   "',
            "claims[0].text",
            "quote",
        ),
        ("device: cpu", "device: GPU!", "claims[0].device", "lower-case token"),
        ("    device: cpu\n", "    device: cpu\n    colour: blue\n", "claims[0].colour", "Extra inputs"),
    ],
)
def test_broken_claim_names_file_line_and_field(tmp_path, old, new, field, words):
    text = GOOD_CLAIM.replace(old, new)
    assert text != GOOD_CLAIM
    path = _write(tmp_path, "tensorflow.yaml", text)
    with pytest.raises(ClaimFileError) as info:
        load_claims(tmp_path)
    message = str(info.value)
    assert str(path) in message
    assert re.search(r"tensorflow\.yaml:\d+: ", message), message
    assert field in message, message
    assert words in message, message


def test_framework_must_match_file_name(tmp_path):
    _write(tmp_path, "torch.yaml", GOOD_CLAIM)
    with pytest.raises(ClaimFileError, match=r"torch\.yaml:1: framework: framework 'tensorflow' must match"):
        load_claims(tmp_path)


def test_duplicate_claim_is_rejected(tmp_path):
    claim = GOOD_CLAIM.split("claims:\n", 1)[1]
    _write(tmp_path, "tensorflow.yaml", GOOD_CLAIM + claim)
    with pytest.raises(ClaimFileError, match=r"claims\[1\]: duplicate of claims\[0\]"):
        load_claims(tmp_path)


def test_yaml_syntax_error_names_the_file(tmp_path):
    _write(tmp_path, "tensorflow.yaml", GOOD_CLAIM + "  - op: [Gather\n")
    with pytest.raises(ClaimFileError, match=r"tensorflow\.yaml:\d+: YAML syntax error"):
        load_claims(tmp_path)


def test_empty_directory_is_an_error(tmp_path):
    with pytest.raises(ClaimFileError, match="no claim files"):
        load_claims(tmp_path)


def test_claims_are_immutable(claims):
    with pytest.raises(ValidationError):
        claims[0].label = "ok"


# ----------------------------------------------------------------------------------------------------- lookup


def test_lookup_device_split(claims):
    cpu = lookup(claims, "tensorflow", "Gather", "oob-positive", "tf.gather", device="cpu")
    gpu = lookup(claims, "tensorflow", "Gather", "oob-positive", "tf.gather", device="gpu")
    assert (cpu.label, gpu.label) == ("error", "zero")
    assert "a 0 is stored" in gpu.text
    # No device asked, none device-free: the first in file order (CPU is listed first).
    assert lookup(claims, "tensorflow", "Gather", "oob-positive").device == "cpu"


def test_lookup_accepts_a_record_api_string(claims):
    c = lookup(claims, "tensorflow", "Gather", "default-axis", "tf.gather(data, indices, axis=0, batch_dims=0)")
    assert (c.api, c.label) == ("tf.gather", "first-non-batch")
    raw = lookup(claims, "tensorflow", "Gather", "default-axis", "tf.raw_ops.GatherV2")
    assert raw.label == "axis-0"
    assert lookup(claims, "tensorflow", "Gather", "default-axis", "tf.nonexistent") is None


def test_lookup_api_version_and_default(claims):
    assert lookup(claims, "onnx", "Gather", "negative-indices").api == "Gather-13"
    assert lookup(claims, "onnx", "Gather", "negative-indices", api="Gather-1").label == "unspecified"
    assert lookup(claims, "onnx", "ScatterND", "duplicates-max", api="ScatterND-16").label == "error"
    assert lookup(claims, "onnx", "ScatterND", "duplicates-max").label == "reduce-all"


def test_lookup_modes(claims):
    assert lookup(claims, "numpy", "Take", "oob-positive").label == "error"  # default mode 'raise' is listed first
    assert lookup(claims, "numpy", "Take", "oob-positive", mode="wrap").label == "wrap"
    assert lookup(claims, "numpy", "Take", "oob-positive", mode="clip").label == "clamp"
    # A mode-free claim answers for any mode.
    assert lookup(claims, "numpy", "Take", "default-axis", mode="clip").label == "flatten"


def test_lookup_secondary_source_by_subject(claims):
    tf = lookup(claims, "blog-2020", "Gather", "default-axis", about="tensorflow")
    onnx = lookup(claims, "blog-2020", "Gather", "default-axis", about="onnx")
    assert (tf.text, tf.label) == ("Defaults to the first non-batch dimension", "first-non-batch")
    assert (onnx.text, onnx.label) == ("Defaults to the outermost axis", "axis-0")


def test_lookup_secondary_source_colon_form(claims):
    c = lookup(claims, "blog-2020:tensorflow", "Gather", "oob-positive", device="gpu")
    assert (c.about, c.label, c.text) == ("tensorflow", "zero", "Zero in GPU/Error in CPU")


def test_agrees_ignores_claims_that_state_nothing_definite(claims):
    undefined = lookup(claims, "torch", "ScatterND", "duplicates")
    assert undefined.label == "undefined"
    assert agrees(undefined, ["last-wins"]) is None
    assert agrees(None, ["ok"]) is None
    oob = lookup(claims, "onnx", "Gather", "oob-positive")
    assert agrees(oob, ["error"]) is True
    assert agrees(oob, ["zero"]) is False


def test_lookup_without_a_claim_is_none(claims):
    assert lookup(claims, "torch", "GatherND", "default-axis") is None
    assert lookup(claims, "no-such-framework", "Gather", "oob-positive") is None
    assert lookup_all(claims, "caffe2", "Take", "oob-positive") == []


def test_lookup_rejects_unknown_dimension(claims):
    with pytest.raises(ValueError, match="unknown dimension"):
        lookup(claims, "onnx", "Gather", "out-of-bounds")


# --- claims per API version -----------------------------------------------------------------------------------

_VERSIONED_FILE = re.compile(r"/([a-z]+(?:-[a-z]+)*)-(\d+)\.rst$")  # OpenVINO: .../gather-elements-6.rst
_ONNX_PAGE = re.compile(r"/onnx__([A-Za-z]+)\.html$")  # onnx.ai: one page per operator, every version on it


def cited_op(source: str) -> tuple[str, int | None] | None:
    """The operator (and version, where the citation names one) a claim's source documents, or None."""
    if m := _VERSIONED_FILE.search(source):
        return "".join(part.capitalize() for part in m.group(1).split("-")), int(m.group(2))
    if m := _ONNX_PAGE.search(source):
        return m.group(1), None
    return None


def version_mismatches(claims) -> list[str]:
    from gather_scatter_conformance.harness.report.claims import op_version

    bad = []
    for c in claims:
        attached, cited = op_version(c.api), cited_op(c.source)
        if attached is None or cited is None:
            continue
        if cited[0].lower() != attached[0].lower() or cited[1] not in (None, attached[1]):
            bad.append(f"{c.framework} {c.api} {c.dimension}: cites {cited[0]}-{cited[1]} ({c.source})")
    return bad


def test_every_claim_cites_the_op_version_it_is_attached_to(claims):
    assert not version_mismatches(claims)


def test_a_claim_citing_another_version_is_caught(claims):
    gather7 = next(c for c in claims if c.framework == "openvino" and c.api == "Gather-7")
    wrong = gather7.model_copy(update={"source": gather7.source.replace("gather-7.rst", "gather-8.rst")})
    assert version_mismatches([wrong]) == [
        f"openvino Gather-7 {wrong.dimension}: cites Gather-8 ({wrong.source})"]


def test_a_claim_about_one_version_never_stands_for_another(claims):
    from gather_scatter_conformance.harness.report.behaviour import _documented

    # OpenVINO documents negative indices for Gather-7 and Gather-8 (wrap) but not for Gather-1: that cell is
    # undocumented, not judged against gather-8.rst.
    for variant, api in (("Gather-1", "ov.opset1.gather(data, indices, axis=0)  # Gather-1; ..."),
                         ("Gather-8", "ov.opset8.gather(data, indices, axis=0, batch_dims=0)  # Gather-8; ...")):
        doc = _documented(claims, "openvino", "Gather", "negative-indices", api, "cpu")
        if variant == "Gather-1":
            assert doc is None or doc.api == "Gather-1", doc
        else:
            assert doc is not None and doc.api == "Gather-8" and "gather-8.rst" in doc.source
    # Gather-8 documents int16 indices; Gather-1's page does not: that cell is undocumented.
    api = "ov.opset1.gather(data, indices, axis=1)  # Gather-1; ov.Core().compile_model(...)"
    assert _documented(claims, "openvino", "Gather", "index-dtype:int16", api, "cpu") is None
    assert _documented(claims, "openvino", "Gather", "index-dtype:int16", "Gather-1", "cpu") is None
    # onnxruntime's Gather-11 model is judged by ONNX's Gather-11 claims, not Gather-13's.
    doc = _documented(claims, "onnxruntime", "Gather", "negative-indices",
                      "onnxruntime.InferenceSession(model: Gather-11(data, indices, axis=0)).run(...)", "cpu")
    assert doc is not None and doc.api == "Gather-11"


def test_a_cell_without_a_claim_says_undocumented() -> None:
    from gather_scatter_conformance.harness.report.behaviour import documentation_state

    assert documentation_state(None, None) == "undocumented"
    assert [documentation_state(object(), a) for a in (True, False, None)] == ["agrees", "contradicts", "unspecified"]


def test_a_wrapped_call_is_named_by_its_innermost_lambda_s_call() -> None:
    from gather_scatter_conformance.harness.report.claims import api_name

    assert api_name("tf.function(lambda data, indices: tf.gather(data, indices, axis=0))") == "tf.gather"
    # jax.jit of a vmap of dynamic_update_slice (TensorScatter's emulation): the claim is about the inner call
    jitted = ("jax.jit(lambda data, updates, indices: jax.vmap(lambda c, u, w: "
              "jax.lax.dynamic_update_slice_in_dim(c, u, w, axis=0))(data, updates, indices))(data, updates, indices)")
    assert api_name(jitted) == "jax.lax.dynamic_update_slice_in_dim"
    assert api_name("InferenceSession(model: Gather-11(data, indices, axis=0))") == "Gather-11"
