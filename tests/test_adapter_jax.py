"""The JAX adapter: every shipped case on every variant, and the translation in detail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance.adapters import jax as jax_adapter
from gather_scatter_conformance.adapters.attrs import InvalidAttribute
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.harness.reference.compare import compare
from gather_scatter_conformance.harness.run.worker import run_case
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.ops import with_defaults

require("jax")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ADAPTER = jax_adapter.ADAPTER
ROOT = Path(__file__).resolve().parents[1]

# --- helpers ---------------------------------------------------------------------------------------------------


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _prepare(case: CaseData, how: str) -> Any:
    """The call of ``case`` run ``how``: "eager" is the op's API called plainly, "jit" the same API under jax.jit
    (its ``<api>/jit`` variant); any other name is a variant as given."""
    api = ADAPTER.variants(case.op)[0]
    return ADAPTER.prepare(case, {"eager": api, "jit": f"{api}/jit"}.get(how, how))


def _run(case: CaseData, variant: str = "eager") -> np.ndarray:
    return ADAPTER.to_numpy(_prepare(case, variant).run())


def _api(case: CaseData, variant: str = "eager") -> str:
    return _prepare(case, variant).api


DATA = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


# --- variants and laziness -------------------------------------------------------------------------------------


def test_variants_are_the_jnp_api_then_its_jit_default_first() -> None:
    assert ADAPTER.variants("Gather") == ["take", "take/jit", "indexing", "take/jit_constant"]
    apis = {"GatherElements": "take_along_axis", "GatherND": "indexing", "ScatterElements": "at", "ScatterND": "at",
            "Take": "take"}
    for op, api in apis.items():
        assert ADAPTER.variants(op) == [api, f"{api}/jit", f"{api}/jit_constant"]
    assert [v for v in ADAPTER.variants("Gather") if ADAPTER.is_slow(v)] == ["take/jit_constant"]


def test_the_constant_variant_closes_jit_over_the_indices() -> None:
    """Index provenance (#40): ``/jit_constant`` is jax.jit of a function of the data alone, the indices a constant of
    the traced program; the repro does the same with the indices it binds."""
    case = _case("Gather", data=DATA, indices=[1, 0])
    call = ADAPTER.prepare(case, "take/jit_constant")
    assert call.api.startswith("jax.jit(lambda data: jnp.take(data, indices")
    np.testing.assert_array_equal(np.asarray(call.run()), np.asarray(DATA)[[1, 0]])
    scope: dict = {"np": np, "data": np.asarray(DATA), "indices": np.array([1, 0])}
    exec(call.source, scope)
    np.testing.assert_array_equal(scope["result"], np.asarray(DATA)[[1, 0]])
    with pytest.raises(ValueError, match="jax has no variant"):
        ADAPTER.prepare(_case("Take", data=DATA, indices=[0]), "indexing")


def test_device_and_version() -> None:
    import jax

    assert _prepare(_case("Gather", data=DATA, indices=[0]), "eager").device == "cpu"
    assert ADAPTER.version() == jax.__version__


# --- Take: mode 1:1 --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["eager", "jit"])
def test_take_modes_map_one_to_one(variant: str) -> None:
    data = np.arange(5, dtype=np.float32)
    idx = np.array([0, -2, 7, -9])
    for mode, want in {"wrap": [0, 3, 2, 1], "clip": [0, 0, 4, 0], "fill": [0, 3, np.nan, np.nan]}.items():
        case = _case("Take", {"axis": 0, "mode": mode}, data=data, indices=idx)
        np.testing.assert_array_equal(_run(case, variant), np.array(want, np.float32))
        eager = f"jnp.take(data, indices, axis=0, mode={mode!r})"
        assert _api(case, variant) == (eager if variant == "eager" else
                                       f"jax.jit(lambda data, indices: {eager})(data, indices)")


def test_take_axis_none_flattens() -> None:
    case = _case("Take", {"axis": None, "mode": "wrap"}, data=DATA, indices=[[1, 25]])
    assert _api(case) == "jnp.take(data, indices, axis=None, mode='wrap')"
    np.testing.assert_array_equal(_run(case), np.array([[1, 1]], np.float32))


@pytest.mark.parametrize("variant", ["take", "take/jit"])
def test_take_raise_is_unsupported_with_jax_message(variant: str) -> None:
    payload = {"op": "Take", "inputs": {"data": wire.encode(np.arange(3.0)), "indices": wire.encode(np.array([1]))},
               "attrs": {"axis": 0, "mode": "raise"}}
    res = run_case("jax", variant, payload)
    assert res["outcome"] == "unsupported"
    assert "NotImplementedError" in res["reason"] and "raise" in res["reason"]


def test_take_fill_values_per_dtype() -> None:
    def filled(data: np.ndarray) -> Any:
        return _run(_case("Take", {"axis": 0, "mode": "fill"}, data=data, indices=[1, 9]))[1]

    assert filled(np.arange(3, dtype=np.int16)) == -32768
    assert filled(np.arange(3, dtype=np.uint32)) == 2**32 - 1
    assert filled(np.zeros(3, bool))


# --- Gather ----------------------------------------------------------------------------------------------------


def test_gather_default_mode_is_takes_default_fill_and_indexing_clamps() -> None:
    case = _case("Gather", {"axis": 1}, data=DATA, indices=[0, 5, -1])
    assert _api(case) == "jnp.take(data, indices, axis=1)"
    assert _api(case, "indexing") == "data[:, indices]"
    for variant in ("eager", "jit"):
        out = _run(case, variant)
        assert np.isnan(out[:, 1]).all() and (out[:, 2] == DATA[:, 2]).all()
    np.testing.assert_array_equal(_run(case, "indexing"), DATA[:, [0, 2, 2]])  # 5 clamped to 2; -1 wraps to 2


@pytest.mark.parametrize("variant", ["eager", "jit", "indexing"])
def test_gather_batch_dims(variant: str) -> None:
    idx = np.array([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [-1, 2]]])
    for axis, batch_dims in ((2, 2), (-1, -1), (2, 1)):
        ind = idx if batch_dims != 1 else idx[:, 0]
        case = _case("Gather", {"axis": axis, "batch_dims": batch_dims}, data=DATA, indices=ind)
        want = compute("Gather", case.inputs, case.attrs)
        np.testing.assert_array_equal(_run(case, variant), want)
    vmapped = _case("Gather", {"axis": -1, "batch_dims": -1}, data=DATA, indices=idx)
    assert _api(vmapped) == "jax.vmap(jax.vmap(lambda d, i: jnp.take(d, i, axis=0)))(data, indices)"
    assert _api(vmapped, "indexing") == ("data[jnp.arange(data.shape[0]).reshape(2, 1, 1), "
                                         "jnp.arange(data.shape[1]).reshape(1, 3, 1), indices.reshape(2, 3, 2)]")


def test_gather_batch_dims_past_axis_raises() -> None:
    case = _case("Gather", {"axis": 0, "batch_dims": 1}, data=DATA, indices=[[0], [1]])
    for variant in ADAPTER.variants("Gather")[1:]:
        with pytest.raises(InvalidAttribute, match="must not exceed axis"):  # the reference engine raises too
            ADAPTER.prepare(case, variant)


def test_gather_bad_axis_is_left_to_jax() -> None:
    case = _case("Gather", {"axis": 3}, data=DATA, indices=[0])
    with pytest.raises(ValueError, match="out of bounds"):
        _run(case)


# --- GatherElements / GatherND ---------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["eager", "jit"])
def test_gather_elements_take_along_axis(variant: str) -> None:
    idx = np.array([[[0, -1, 2, 1]] * 3, [[3, 3, -4, 0]] * 3])
    case = _case("GatherElements", {"axis": -1}, data=DATA, indices=idx)
    assert _api(case) == "jnp.take_along_axis(data, indices, axis=-1)"
    np.testing.assert_array_equal(_run(case, variant), compute("GatherElements", case.inputs, case.attrs))
    oob = _case("GatherElements", {"axis": 0}, data=DATA[:, :1, :1], indices=np.array([[[2]]]))
    assert np.isnan(_run(oob, variant)).all()  # take_along_axis's default mode is 'fill' too


@pytest.mark.parametrize("variant", ["eager", "jit"])
def test_gather_nd_batch_aranges(variant: str) -> None:
    idx = np.array([[[0, 1], [2, -1]], [[1, 3], [0, 0]]])
    case = _case("GatherND", {"batch_dims": 1}, data=DATA, indices=idx)
    assert _api(case) == "data[(jnp.arange(data.shape[0]).reshape(-1, 1),) + tuple(jnp.moveaxis(indices, -1, 0))]"
    np.testing.assert_array_equal(_run(case, variant), compute("GatherND", case.inputs, case.attrs))
    plain = _case("GatherND", data=DATA, indices=[[1, 2], [0, -1]])
    assert _api(plain) == "data[tuple(jnp.moveaxis(indices, -1, 0))]"
    np.testing.assert_array_equal(_run(plain, variant), DATA[[1, 0], [2, -1]])


# --- scatters --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["eager", "jit"])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_reductions(variant: str, reduction: str) -> None:
    idx = np.array([[[1, -1, 0, 2]], [[0, 0, 3, -4]]])
    upd = np.arange(8, dtype=np.float32).reshape(idx.shape) - 3
    case = _case("ScatterElements", {"axis": -1, "reduction": reduction}, data=DATA, indices=idx, updates=upd)
    method = jax_adapter.AT_METHODS[reduction]
    assert _api(case) == ("data.at[tuple(indices if d == 2 else g for d, g in enumerate(jnp.indices(indices.shape, "
                          f"sparse=True)))].{method}(updates)")
    # (1, 0, 0) is written twice: for 'none' the reference allows either update, compare() knows which.
    result = compare(_run(case, variant), compute("ScatterElements", case.inputs, case.attrs))
    assert result.equal, result.reason


@pytest.mark.parametrize("variant", ["eager", "jit"])
def test_scatter_nd_reductions_and_default_drop(variant: str) -> None:
    idx = np.array([[1, 2], [0, -1]])
    upd = np.ones((2, 4), np.float32)
    for reduction, method in jax_adapter.AT_METHODS.items():
        case = _case("ScatterND", {"reduction": reduction}, data=DATA, indices=idx, updates=upd)
        assert _api(case) == f"data.at[tuple(jnp.moveaxis(indices, -1, 0))].{method}(updates)"
        np.testing.assert_array_equal(_run(case, variant), compute("ScatterND", case.inputs, case.attrs))
    oob = _case("ScatterND", data=DATA, indices=[[1, 7]], updates=upd[:1])
    np.testing.assert_array_equal(_run(oob, variant), DATA)  # .at[] default: out-of-range updates are dropped


def test_scatter_elements_out_of_range_axis_raises() -> None:
    case = _case("ScatterElements", {"axis": 3}, data=DATA, indices=np.zeros((1, 1, 1), int),
                 updates=np.zeros((1, 1, 1), np.float32))
    with pytest.raises(InvalidAttribute, match="out of range"):
        _prepare(case, "eager")


# --- dtypes and x64 --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["eager", "jit"])
def test_64_bit_types_are_kept(variant: str) -> None:
    big = np.array([2**40 + 1, -(2**50)], np.int64)
    out = _run(_case("Gather", data=big, indices=np.array([1, 0], np.uint64)), variant)
    assert out.dtype == np.int64 and out.tolist() == [-(2**50), 2**40 + 1]
    f64 = np.array([1 + 2**-40, 0.5])
    out = _run(_case("GatherElements", data=f64, indices=[0]), variant)
    assert out.dtype == np.float64 and out[0] == 1 + 2**-40


def test_bfloat16_round_trips_and_strings_are_unsupported() -> None:
    bf = np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16)
    out = _run(_case("Gather", data=bf, indices=[2, 0]))
    assert out.dtype == np.dtype(ml_dtypes.bfloat16) and out.tolist() == [3.0, 1.5]
    strings = np.array(["a", "b"], dtype=object)
    with pytest.raises(Unsupported, match="no string arrays"):
        _prepare(_case("Gather", data=strings, indices=[0]), "eager")


# --- jit cache -------------------------------------------------------------------------------------------------


def test_jitted_callables_are_cached_per_api_and_attributes() -> None:
    a = _case("Take", {"axis": 1, "mode": "clip"}, data=DATA, indices=[0])
    b = _case("Take", {"axis": 1, "mode": "clip"}, data=DATA[:1], indices=[1, 2])
    c = _case("Take", {"axis": 0, "mode": "clip"}, data=DATA, indices=[0])
    _prepare(a, "jit")
    first = jax_adapter._JITTED[("take", 1, "clip")]
    _prepare(b, "jit")
    assert jax_adapter._JITTED[("take", 1, "clip")] is first
    _prepare(c, "jit")
    assert jax_adapter._JITTED[("take", 0, "clip")] is not first
    n = len(jax_adapter._JITTED)
    _prepare(a, "eager")  # eager calls compile nothing of ours
    assert len(jax_adapter._JITTED) == n


_COMPILE = """
import numpy as np
from gather_scatter_conformance.adapters import jax as jax_adapter
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.vocab.ops import with_defaults
case = CaseData(op="Gather", inputs={"data": np.arange(6.0).reshape(3, 2), "indices": np.array([2, 0])},
                attrs=with_defaults("Gather", {"axis": 0}))
call = jax_adapter.ADAPTER.prepare(case, "take/jit")
print(np.asarray(call.run()).tolist())
import jax
print(jax.config.jax_compilation_cache_dir)
"""


def test_compiles_go_to_the_persistent_cache_given_and_none_when_it_is_off(tmp_path: Path) -> None:
    """#38: JAX's persistent compilation cache under $GSC_JAX_CACHE, so a risky case's forked child loads what
    another child compiled instead of compiling it again; off, JAX keeps no cache and the answer is the same."""
    import os
    import subprocess
    import sys

    def run(value: str) -> list[str]:
        env = {**os.environ, "GSC_JAX_CACHE": value}
        out = subprocess.run([sys.executable, "-c", _COMPILE], capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.split("\n")[:2]

    where = tmp_path / "jax"
    assert run(str(where)) == ["[[4.0, 5.0], [0.0, 1.0]]", str(where)]
    assert any(where.iterdir())  # the compiled program was written there
    assert run("off") == ["[[4.0, 5.0], [0.0, 1.0]]", "None"]
