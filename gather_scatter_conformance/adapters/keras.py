"""Keras 3: ``keras.ops.take``, ``take_along_axis``, ``scatter_update``, ``scatter`` and ``slice_update`` on each of
its backends (TensorFlow, JAX, PyTorch, NumPy).

A variant is ``<keras.ops function>/<backend>`` (``take/torch``). Keras chooses its backend once, when it is
imported (``KERAS_BACKEND``), so each backend's variants run in a worker process of their own (``worker_env``);
switching inside one process (``keras.config.set_backend``, which re-imports Keras) cost 0.2 s and 13 MB per switch
here and is only the fallback of a run without process isolation.

The call gets the caller's NumPy arrays, as a Keras user passes them, fresh copies each run; after it, they are
compared with the case's inputs, and those the call wrote into are recorded as ``mutates_inputs`` (the NumPy
backend's scatter_update and slice_update assign into ``inputs``).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters import keras_calls as calls
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, ReleaseRules, Unsupported
from gather_scatter_conformance.adapters.source import tensors
from gather_scatter_conformance.vocab import variants

BACKEND_ENV = "KERAS_BACKEND"  # where Keras reads its backend, once, at import
# Backends whose tensors cannot hold strings, and what Keras says when given an object array (measured, 3.15.1);
# TensorFlow's and NumPy's can.
NO_STRINGS = {"jax": "TypeError: Error interpreting argument to stage as a JAX value",
              "torch": "ValueError: Invalid dtype: object"}
VARIANTS = {op: tuple(variants.join(api, backend) for api in apis for backend in calls.BACKENDS)
            for op, apis in calls.APIS.items()}


def _keras(backend: str | None = None) -> Any:
    """The keras module running on ``backend`` (None: whichever $KERAS_BACKEND or Keras's default chose).

    Where this process imported Keras with another backend, keras.config.set_backend switches it (it re-imports the
    keras modules, hence the lookup in sys.modules). JAX gets 64-bit types first, as the jax adapter does: without
    them JAX silently narrows int64/float64 inputs to 32 bits, which would hide every index behaviour behind a
    dtype change.
    """
    import keras

    if backend is not None and keras.config.backend() != backend:
        with warnings.catch_warnings():  # "Using set_backend is dangerous": nothing Keras-made is kept across it
            warnings.simplefilter("ignore")
            keras.config.set_backend(backend)
        keras = sys.modules["keras"]
    if keras.config.backend() == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
    return keras


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality of two arrays of one dtype (NaN payloads included); object arrays by their items."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == object:
        return a.tolist() == b.tolist()
    return a.tobytes() == b.tobytes()


def _lambda(expr: str, names: tuple[str, ...]) -> Callable[..., Any]:
    """The function that runs ``expr`` over ``keras`` and the named inputs."""
    # Safe to eval: keras_calls builds ``expr`` from fixed text plus integers, shapes and reduction names it
    # validated, never from strings taken out of a case file.
    return eval(f"lambda keras, {', '.join(names)}: {expr}")


def _has_reduction(keras: Any) -> bool:
    """Whether this Keras's ``keras.ops.scatter_update`` takes ``reduction`` (3.14 and later)."""
    import inspect

    try:
        return "reduction" in inspect.signature(keras.ops.scatter_update).parameters
    except (TypeError, ValueError):  # no signature to read: let the call say what it takes
        return True


class KerasAdapter(Adapter):
    name = "keras"
    requires = ("keras",)
    extra = "keras"
    # A release sweep installs one Keras release beside the backends at the project's pinned releases (as LiteRT's
    # sweep keeps its converter pinned), so a label that changes between releases is Keras's own; each backend's
    # variants run in a worker of their own (worker_env), so a sweep measures every backend. NumPy's backend is
    # Keras's code alone.
    releases = ReleaseRules("keras", "keras", extra=("tensorflow-cpu==2.21.0", "jax[cpu]==0.10.2", "torch==2.13.0"),
                            reported=("jaxlib",),
                            check="import keras.ops; keras.ops.take; keras.ops.take_along_axis; "
                                  "keras.ops.scatter_update; keras.ops.scatter; keras.ops.slice_update")
    VARIANTS = VARIANTS
    # keras.ops.scatter(indices, values, shape) writes into zeros of the shape (its docstring)
    NO_DATA_INPUT: ClassVar[dict[str, tuple[str, ...]]] = (
        {"ScatterND": tuple(variants.join("scatter", backend) for backend in calls.BACKENDS)})
    mapping = "docs/mapping/keras.md"

    def version(self) -> str:
        return str(_keras().__version__)

    def worker_env(self, variant: str) -> dict[str, str]:
        """Each backend in a process of its own, Keras imported there with it."""
        return {BACKEND_ENV: variants.mode(variant) or calls.BACKENDS[0]}

    def prepare(self, case: CaseData, variant: str) -> Call:
        self.check_variant(case.op, variant)
        api, backend = variants.split(variant)
        assert backend is not None  # every variant names its backend
        names = ("data", "indices", "updates") if "updates" in case.inputs else ("data", "indices")
        if backend in NO_STRINGS and any(case.inputs[n].dtype == object for n in names):
            raise Unsupported(f"Keras's {backend} backend has no string tensors ({NO_STRINGS[backend]})")
        expr = calls.expression(case.op, api, case.inputs, case.attrs, case.omit)
        fn = _lambda(expr, names)
        facts: dict[str, Any] = {}

        def run() -> Any:
            keras = _keras(backend)
            if ", reduction=" in expr and not _has_reduction(keras):
                # A release from before the argument (3.13 and older): no behaviour of it to record; a release
                # sweep counts it where the API arrived.
                raise Unsupported(f"Keras {keras.__version__}'s keras.ops.scatter_update has no reduction argument")
            # Fresh copies each run: a backend that writes into them must not change the next repetition's inputs.
            arrays = {n: case.inputs[n].copy() for n in names}
            try:
                return fn(keras, *(arrays[n] for n in names))
            finally:
                changed = [n for n in names if not _same(arrays[n], case.inputs[n])]
                if changed:
                    facts["mutates_inputs"] = changed

        return Call(f"{expr}  # KERAS_BACKEND={backend}", run, source=_source(expr, names, case.inputs, backend),
                    facts=facts)

    def to_numpy(self, out: Any) -> np.ndarray:
        arr = np.asarray(_keras().ops.convert_to_numpy(out))
        if arr.dtype == object or arr.dtype.kind == "S":  # TensorFlow's strings come back as bytes
            flat = [x.decode("utf-8") if isinstance(x, bytes) else x for x in arr.reshape(-1).tolist()]
            strs = np.empty(len(flat), dtype=object)
            strs[:] = flat
            return strs.reshape(arr.shape)
        return arr


def _source(expr: str, names: tuple[str, ...], inputs: dict[str, np.ndarray], backend: str) -> str:
    """The call as standalone statements (Call.source): Keras imported on the variant's backend, the caller's NumPy
    arrays passed in, and the check that the call left them as they were."""
    lines = ["import os", f"os.environ[{BACKEND_ENV!r}] = {backend!r}  # before keras is imported"]
    if backend == "jax":
        lines += ["import jax", "jax.config.update('jax_enable_x64', True)"]
    lines += ["import keras", *tensors(names, [inputs[n] for n in names], "{name}.copy()")]
    lines += [f"before = [{', '.join(f'{n}.copy()' for n in names)}]", f"out = {expr}",
              "result = np.asarray(keras.ops.convert_to_numpy(out))",
              f"print('inputs written into:', [n for n, a, b in zip({list(names)!r}, [{', '.join(names)}], before) "
              "if not np.array_equal(a, b, equal_nan=a.dtype.kind in 'fc')])"]
    return "\n".join(lines)


ADAPTER = KerasAdapter()
