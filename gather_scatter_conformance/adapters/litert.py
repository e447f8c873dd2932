"""LiteRT (ai-edge-litert): a TFLite model per case, converted from a tf.function, run by the LiteRT Interpreter.

Each case becomes a ``tf.function`` with a fixed ``input_signature`` (the case's input shapes and dtypes), converted
by ``tf.lite.TFLiteConverter.from_concrete_functions`` with TFLITE_BUILTINS only and run by
``ai_edge_litert.interpreter.Interpreter(model_content=...)`` (adapters/litert_model.py). Variants are named by the
TFLite builtin the model is meant to lower to (``GATHER``, ``GATHER_ND``, ``SCATTER_ND``); the builtins the converter
really emitted, in execution order, are recorded as ``facts["ops"]`` and shown in the api string.

The TensorFlow call each case is written as is a user's ordinary one (adapters/tensorflow_calls.py shares it with the
TensorFlow adapter); GatherElements is a coordinate grid fed to tf.gather_nd, since a TFLite user has no
take_along_axis builtin. A graph the converter can only keep with Flex (TF Select) ops or types TFLite lacks is no
builtins-only LiteRT model: that is Unsupported, with the converter's reason. Conversion happens in ``prepare``
(cached by op, variant, call and input signature), so its other failures are recorded errors of the case.

A converted model is also kept on disk under the conversion cache ($GSC_CONVERSION_CACHE, as ExecuTorch's programs):
the conversion (a SavedModel written and read back, then the MLIR converter: about 0.14 s a case here) depends on
the same key and the TensorFlow release, never on the input values, so the next process or run loads the flatbuffer.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters import litert_model
from gather_scatter_conformance.adapters import tensorflow_calls as calls
from gather_scatter_conformance.adapters.attrs import required
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, ReleaseRules, Unsupported
from gather_scatter_conformance.adapters.cache import LRU
from gather_scatter_conformance.adapters.convert.path import cache_file, entry_name, read_entry, write_atomic
from gather_scatter_conformance.vocab import variants

CACHE_SIZE = 128
GATHER, GATHER_ND, SCATTER_ND = "GATHER", "GATHER_ND", "SCATTER_ND"
ZEROS = variants.join(SCATTER_ND, "zeros")  # tf.scatter_nd: a SCATTER_ND into zeros, with no data input

# Variants per operator, the default first: the builtin each operator's model is meant to lower to.
_VARIANTS: dict[str, list[str]] = {
    "Gather": [GATHER],
    "Take": [GATHER],
    "GatherElements": [GATHER_ND],
    "GatherND": [GATHER_ND],
    "ScatterElements": [SCATTER_ND],
    "ScatterND": [SCATTER_ND, ZEROS],
}


def _tf() -> Any:
    from gather_scatter_conformance.adapters.tensorflow import (
        tf_module,  # TensorFlow imported quietly, with its small thread pools
    )

    return tf_module()


def gather_elements(tf: Any, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> calls.Spec:
    """GatherElements -> tf.gather_nd(data, coordinates): every element's full coordinate, aranges over the indices'
    shape with ``indices`` itself on ``axis`` (the aranges cast to the indices' dtype; tf.stack needs one dtype)."""
    if "axis" in omit:  # the coordinates put indices on a stated axis: there is no default to fall back on
        raise required("tf.gather_nd with per-axis coordinates")
    axis = int(attrs["axis"])

    def fn(data: Any, indices: Any) -> Any:
        coords = tf.meshgrid(*[tf.cast(tf.range(n), indices.dtype) for n in indices.shape], indexing="ij")
        coords[axis] = indices  # a list: an axis outside [-rank, rank-1] raises IndexError, as for a user
        return tf.gather_nd(data, tf.stack(coords, axis=-1))

    return calls.Spec(
        ("data", "indices"),
        "tf.gather_nd(data, tf.stack(coords, axis=-1))",
        fn,
        prelude=(
            "coords = tf.meshgrid(*[tf.cast(tf.range(n), indices.dtype) for n in indices.shape], indexing='ij');"
            f" coords[{axis}] = indices"
        ),
    )


def take(tf: Any, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> calls.Spec:
    """Take -> tf.gather (mode 'raise'; axis None reshapes to 1-D first) or tf.experimental.numpy.take (modes
    'clip' and 'wrap', which TensorFlow computes with index arithmetic before the GATHER); 'fill' has no TF API."""
    mode = attrs["mode"]
    if mode == "raise":
        return calls.take_as_gather(tf, attrs, omit)
    if mode in ("clip", "wrap"):
        return calls.take(tf, attrs, omit)
    raise Unsupported(f"no TensorFlow call takes with mode={mode!r} (tf.gather raises; tnp.take has clip and wrap)")


def spec_for(tf: Any, case: CaseData, variant: str) -> calls.Spec:
    """The TensorFlow call (adapters/tensorflow_calls.Spec) whose converted model runs ``case`` in ``variant``."""
    ADAPTER.check_variant(case.op, variant)
    op, attrs, omit = case.op, case.attrs, case.omit
    if op == "Gather":
        return calls.gather(tf, attrs, omit)
    if op == "Take":
        return take(tf, attrs, omit)
    if op == "GatherElements":
        return gather_elements(tf, attrs, omit)
    if op == "GatherND":
        return calls.gather_nd(tf, attrs, omit)
    if op == "ScatterElements":
        return calls.scatter_elements(tf, attrs, omit)
    if variant == ZEROS:
        return calls.scatter_nd(tf, attrs, case.inputs["data"], case.inputs["indices"])
    return calls.tensor_scatter_nd(tf, attrs, omit)


def _tf_dtype(tf: Any, arr: np.ndarray) -> Any:
    return tf.string if arr.dtype == object or arr.dtype.kind in "US" else tf.as_dtype(arr.dtype)


def _dtype_source(arr: np.ndarray) -> str:
    return "tf.string" if arr.dtype == object or arr.dtype.kind in "US" else f"tf.as_dtype({arr.dtype.name!r})"


def _to_input(arr: np.ndarray) -> np.ndarray:
    """A case input as the Interpreter takes it: strings as an object array of bytes, the rest unchanged."""
    if arr.dtype == object or arr.dtype.kind in "US":
        out = np.empty(arr.shape, dtype=object)
        out.reshape(-1)[:] = [s.encode("utf-8") if isinstance(s, str) else s for s in arr.reshape(-1).tolist()]
        return out
    return arr


@dataclasses.dataclass
class _Model:
    """A converted case: the flatbuffer, its builtins in execution order, and the Interpreter that runs it."""

    model: bytes
    ops: list[str]
    interpreter: Any
    order: list[int]  # the Spec argument each model input takes, in the model's input order


def _loaded(model: bytes, spec: calls.Spec) -> _Model:
    """``model`` in an Interpreter, its inputs matched to the call's arguments (the model orders them by name)."""
    interp = litert_model.interpreter(model)
    names = litert_model.input_names(interp)
    if sorted(names) != sorted(spec.args):
        raise RuntimeError(f"the converted model's inputs {names} are not the call's arguments {spec.args}")
    order = [spec.args.index(n) for n in names]
    return _Model(model, litert_model.ops(model), interp, order)


# Models on disk: an entry is the flatbuffer, named by a hash of what shaped it (the in-memory key: op, variant, the
# call's text, the input signature) and the TensorFlow and LiteRT releases.
_MODEL_FORMAT = 1


def _model_file(tf: Any, key: tuple[Any, ...]) -> Path | None:
    return cache_file("litert", f"{entry_name(_MODEL_FORMAT, tf.__version__, litert_model.version(), key)}.tflite")


def _body(spec: calls.Spec) -> str:
    return f"{spec.prelude}; {spec.body}" if spec.prelude else spec.body


class LitertAdapter(Adapter):
    name = "litert"
    requires = ("ai_edge_litert", "tensorflow")
    extra = "litert"
    # TensorFlow is the converter here (litert_model.convert), not the runtime under test: every release's
    # environment gets the pinned one (its CPU wheel), so each release runs the same flatbuffers and a label that
    # changes is the runtime's (ReleaseRules' docstring). The check reaches the Interpreter, the resolver that lists a
    # model's builtins, and the converter.
    releases = ReleaseRules("ai-edge-litert", "ai_edge_litert", extra=("tensorflow-cpu==2.21.0",),
                            check="from ai_edge_litert.interpreter import Interpreter, OpResolverType; "
                                  "OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES; Interpreter._get_ops_details; "
                                  "import tensorflow as tf; tf.lite.TFLiteConverter.from_concrete_functions; "
                                  "tf.lite.OpsSet.TFLITE_BUILTINS")
    VARIANTS = _VARIANTS
    # the model of tf.scatter_nd: SCATTER_ND(indices, updates, shape)
    NO_DATA_INPUT: ClassVar[dict[str, tuple[str, ...]]] = {"ScatterND": (ZEROS,)}
    mapping = "docs/mapping/litert.md"

    def __init__(self) -> None:
        # Converted models and their interpreters, keyed by everything that shapes one but not the input values.
        self.cache: LRU[_Model] = LRU(CACHE_SIZE)

    def version(self) -> str:
        return litert_model.version()

    def warm(self) -> None:
        import ai_edge_litert.interpreter  # noqa: F401  # the runtime, then TensorFlow (the converter)

        _tf()

    def describe(self, case: CaseData, variant: str) -> tuple[str, str]:
        """The call without converting it (the converter and the interpreter are what could crash)."""
        spec = spec_for(_tf(), case, variant)
        return f"Interpreter(model: {_body(spec)}).invoke()", _source(spec, case)

    def prepare(self, case: CaseData, variant: str) -> Call:
        """Convert (or take from the cache) the case's model; Unsupported where TF or builtins-only TFLite cannot
        express it. The api string names the builtins the converter emitted."""
        tf = _tf()
        spec = spec_for(tf, case, variant)
        arrays = [case.inputs[name] for name in spec.args]
        signature = tuple((name, tuple(a.shape), str(a.dtype)) for name, a in zip(spec.args, arrays, strict=True))
        key = (case.op, variant, spec.prelude, spec.body, signature)
        entry = self.cache.get_or_make(key, lambda: self._convert(tf, spec, arrays, _model_file(tf, key)))
        inputs = [_to_input(arrays[i]) for i in entry.order]
        api = f"Interpreter(model: {_body(spec)} -> [{', '.join(entry.ops)}]).invoke()"
        facts = {"ops": list(entry.ops)}

        def run() -> np.ndarray:
            return litert_model.invoke(entry.interpreter, inputs)

        return Call(api, run, source=_source(spec, case), facts=facts)

    @staticmethod
    def _convert(tf: Any, spec: calls.Spec, arrays: list[np.ndarray], kept: Path | None) -> _Model:
        stored = read_entry(kept)
        if stored is not None:
            try:
                return _loaded(stored, spec)
            except Exception:  # a damaged or foreign entry is a miss: converted anew
                pass
        specs = [tf.TensorSpec(a.shape, _tf_dtype(tf, a), name=n) for n, a in zip(spec.args, arrays, strict=True)]
        concrete = tf.function(spec.fn, input_signature=specs).get_concrete_function()
        try:
            model = litert_model.convert(concrete)
        except Exception as exc:
            why = litert_model.needs_flex(exc)
            if why is not None:
                raise Unsupported(f"no builtins-only TFLite model: {why}") from exc
            raise
        loaded = _loaded(model, spec)
        if kept is not None:  # only a model the interpreter loaded with the call's inputs
            write_atomic(kept, model)
        return loaded

    def to_numpy(self, out: Any) -> np.ndarray:
        from gather_scatter_conformance.adapters.tensorflow import from_tensor

        return from_tensor(out)  # tf.string outputs (bytes) become str, as the reference engine has them

    def release(self) -> None:
        self.cache.clear()


def _source(spec: calls.Spec, case: CaseData) -> str:
    """The call as standalone statements (Call.source): the tf.function, its conversion, the Interpreter run."""
    args = ", ".join(spec.args)
    sig = ", ".join(f"tf.TensorSpec({n}.shape, {_dtype_source(case.inputs[n])}, name={n!r})" for n in spec.args)
    lines = ["import tensorflow as tf", "from ai_edge_litert.interpreter import Interpreter", f"def f({args}):"]
    if spec.prelude:
        lines.append(f"    {spec.prelude}")
    lines += [
        f"    return {spec.body}",
        f"concrete = tf.function(f, input_signature=[{sig}]).get_concrete_function()",
        "holder = tf.Module()",
        "holder.f = concrete  # the trackable_obj: without one TensorFlow takes its deprecated conversion path",
        "converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], holder)",
        "converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]",
        "interpreter = Interpreter(model_content=converter.convert())",
        "interpreter.allocate_tensors()",
        f"feeds = {{{', '.join(f'{n!r}: {n}' for n in spec.args)}}}",
        "for detail in interpreter.get_input_details():",
        "    x = feeds[detail['name'].removeprefix('serving_default_').removesuffix(':0')]",
        "    if x.dtype == object or x.dtype.kind in 'US':  # strings go in as bytes",
        "        x = np.vectorize(lambda s: s.encode('utf-8'), otypes=[object])(x) if x.size else x.astype(object)",
        "    interpreter.set_tensor(detail['index'], x)",
        "interpreter.invoke()",
        "out = interpreter.get_tensor(interpreter.get_output_details()[0]['index'])",
        "result = np.vectorize(lambda b: b.decode('utf-8'), otypes=[object])(out) "
        "if out.dtype.kind in 'OS' and out.size else np.asarray(out)",
    ]
    return "\n".join(lines)


ADAPTER = LitertAdapter()
