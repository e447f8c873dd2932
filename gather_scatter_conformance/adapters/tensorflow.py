"""TensorFlow: tf.gather, tf.gather_nd, tnp.take / take_along_axis, tf.tensor_scatter_nd_* and tf.scatter_nd.

Every call runs in three execution modes, each a variant: ``eager``, inside ``tf.function`` (graph), and inside
``tf.function(jit_compile=True)`` (XLA). They are worth telling apart: they disagree on out-of-range indices
(eager and graph raise on CPU, XLA clamps gathers; tensorflow/tensorflow#61865). Variant names are
``<api>/<mode>``, e.g. ``gather/xla``; what each api means is in adapters/tensorflow_calls.py. The graph modes have
two twins each (issue #40): ``<api>/<mode>_constant`` (the indices a Const of the traced graph) and
``<api>/<mode>_dynamic`` (traced with an ``input_signature`` whose dimensions are all None: shapes unknown).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters import source
from gather_scatter_conformance.adapters import tensorflow_calls as calls
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, NoDevice, ReleaseRules
from gather_scatter_conformance.vocab import variants

MODES = ("eager", "function", "xla")

# The APIs per operator, primary first; every API runs in every mode.
APIS: dict[str, tuple[str, ...]] = {
    "Gather": ("gather",),
    "GatherElements": ("take_along_axis",),
    "GatherND": ("gather_nd",),
    "ScatterElements": ("tensor_scatter_nd",),
    "ScatterND": ("tensor_scatter_nd", "scatter_nd"),
    "Take": ("take", "gather"),
    "TensorScatter": (calls.EMULATED_SCATTER,),  # no TensorScatter: coordinates computed for tensor_scatter_nd_update
}

# (op, api) -> builder of the native call from the attributes
_BUILDERS: dict[tuple[str, str], Callable[[Any, dict[str, Any], tuple[str, ...]], calls.Spec]] = {
    ("Gather", "gather"): calls.gather,
    ("GatherElements", "take_along_axis"): calls.take_along_axis,
    ("GatherND", "gather_nd"): calls.gather_nd,
    ("ScatterElements", "tensor_scatter_nd"): calls.scatter_elements,
    ("ScatterND", "tensor_scatter_nd"): calls.tensor_scatter_nd,
    ("Take", "take"): calls.take,
    ("Take", "gather"): calls.take_as_gather,
}

THREADS = 2  # TensorFlow's intra-/inter-op pools; the default (all cores) buys nothing on these tiny inputs

_tf: Any = None
# One tf.function per (mode, api text): the text holds every attribute value, so equal texts compute the same
# thing; TensorFlow then traces it once per input signature (shapes, dtypes) and keeps the traces. A dynamic twin's
# text holds its input_signature (each input's rank and dtype, no sizes), so it has a function of its own, traced once.
_FUNCTIONS: dict[tuple[str, str], Any] = {}


def tf_module() -> Any:
    """Import TensorFlow once, quietly and with a small thread pool; return the module."""
    global _tf
    if _tf is None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # C++ INFO/WARNING logs off (before the import)
        # Each worker would otherwise map nearly all of a GPU's memory when it first touches it: the next one fails.
        os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
        import tensorflow as tf

        try:
            tf.config.threading.set_intra_op_parallelism_threads(THREADS)
            tf.config.threading.set_inter_op_parallelism_threads(THREADS)
        except RuntimeError:  # the runtime was already started in this process: keep its pools
            pass
        tf.get_logger().setLevel("ERROR")  # tf.function retracing warnings: one trace per shape is intended
        _tf = tf
    return _tf
# Every API in every mode, the first the default (the converter paths convert the /function ones); then, for each
# API, its graph modes again with the indices a constant of the traced function (index provenance, #40:
# ``gather/function_constant``, ``gather/xla_constant``), a trace and compile per index value: focus cases only;
# then its graph modes traced for unknown dimensions (dynamic shapes, #40: ``gather/function_dynamic``,
# ``gather/xla_dynamic``), run where the constant twins run.
# Operators whose call here is an emulation that builds a coordinate grid from the inputs' static shapes (tf.range
# over indices.shape): traced with unknown dimensions it fails (ValueError: None values not supported), which says
# nothing about TensorFlow's own ops, so they have no dynamic twin.
NO_DYNAMIC_TWIN = {
    "ScatterElements": "its tensor_scatter_nd call builds the coordinate grid from indices.shape",
    "TensorScatter": "its tensor_scatter_nd_update emulation builds the coordinate grid from updates.shape",
}
_VARIANTS = {op: [variants.join(api, mode) for api in apis for mode in MODES]
             + [variants.constant_twin(variants.join(api, mode)) for api in apis for mode in MODES[1:]]
             + ([variants.dynamic_twin(variants.join(api, mode)) for api in apis for mode in MODES[1:]]
                if op not in NO_DYNAMIC_TWIN else [])
             for op, apis in APIS.items()}


def split_variant(variant: str) -> tuple[str, str]:
    """``"gather/xla"`` -> ``("gather", "xla")`` (a twin, ``gather/xla_constant`` or ``gather/xla_dynamic``, gives
    its parent's); raises ValueError for a name that is not api/mode."""
    twin = variants.twin_of(variant)
    api, mode = variants.split(twin[0] if twin else variant)
    if mode not in MODES:
        raise ValueError(f"variant {variant!r} is not <api>/<mode> with mode in {', '.join(MODES)}")
    return api, mode  # type: ignore[return-value]  # a mode in MODES is no None


def signature(tf: Any, arrays: list[np.ndarray]) -> list[Any]:
    """A dynamic twin's input_signature: per input a tf.TensorSpec of its rank with every dimension None (a scalar's
    shape stays []) and the dtype :func:`to_tensor` gives it (tf.string for an object array)."""
    return [tf.TensorSpec(shape=[None] * arr.ndim, dtype=tf.string if arr.dtype == object else tf.as_dtype(arr.dtype))
            for arr in arrays]


def signature_text(tf: Any, specs: list[Any]) -> str:
    """``input_signature`` as source: ``[tf.TensorSpec([None, None], tf.float32), ...]``. Only ranks (ints) and
    TensorFlow's own dtype names go in, each name checked to be the ``tf`` attribute of that dtype."""
    parts = []
    for spec in specs:
        name = spec.dtype.name
        if getattr(tf, name, None) != spec.dtype:
            raise ValueError(f"dtype {spec.dtype!r} has no tf.{name}")
        parts.append(f"tf.TensorSpec([{', '.join(['None'] * len(spec.shape))}], tf.{name})")
    return f"[{', '.join(parts)}]"


def render(spec: calls.Spec, mode: str, input_signature: str = "") -> str:
    """The call as a user would paste it in ``mode``: the bare call, or the call inside tf.function (with
    ``input_signature``, its source text, the dynamic twin's)."""
    args = ", ".join(spec.args)
    jit = ", jit_compile=True" if mode == "xla" else ""
    if input_signature:
        jit += f", input_signature={input_signature}"
    if mode == "eager":
        return f"{spec.prelude}; {spec.body}" if spec.prelude else spec.body
    if spec.prelude:
        return f"tf.function(f{jit})({args})  # def f({args}): {spec.prelude}; return {spec.body}"
    return f"tf.function(lambda {args}: {spec.body}{jit})({args})"


def compiled(spec: calls.Spec, mode: str, api: str, input_signature: list[Any] | None = None) -> Callable[..., Any]:
    """The function to call in ``mode``: ``spec.fn`` itself (eager) or its cached tf.function wrapper; with
    ``input_signature`` (the dynamic twin's, whose text ``api`` holds), traced once for those unknown shapes."""
    if mode == "eager":
        return spec.fn
    key = (mode, api)
    fn = _FUNCTIONS.get(key)
    if fn is None:
        fn = tf_module().function(spec.fn, jit_compile=(mode == "xla"), input_signature=input_signature)
        _FUNCTIONS[key] = fn
    return fn


def to_tensor(tf: Any, arr: np.ndarray) -> Any:
    """tf.constant of a case input; object arrays are strings (named, since an empty one has nothing to infer from)."""
    if arr.dtype == object:
        return tf.constant(arr, dtype=tf.string)
    return tf.constant(arr)  # bfloat16 arrays (ml_dtypes) become tf.bfloat16 directly


def from_tensor(out: Any) -> np.ndarray:
    """``.numpy()`` of a result; tf.string results (bytes) become an object array of str."""
    value = out.numpy() if hasattr(out, "numpy") else out
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind == "S":
        flat = [x.decode("utf-8") if isinstance(x, bytes) else str(x) for x in arr.reshape(-1).tolist()]
        strs = np.empty(len(flat), dtype=object)
        strs[:] = flat
        return strs.reshape(arr.shape)
    return arr


def build_spec(tf: Any, case: CaseData, api: str) -> calls.Spec:
    """The native call of ``case`` through ``api`` (adapters/tensorflow_calls.py); raises Unsupported where the API
    cannot write the case. The converter paths (adapters/convert/tf_onnx.py) convert the same call."""
    if api == "scatter_nd":
        return calls.scatter_nd(tf, case.attrs, case.inputs["data"], case.inputs["indices"])
    if api == calls.EMULATED_SCATTER:
        return calls.tensor_scatter(tf, case.attrs, {n: a.shape for n, a in case.inputs.items()})
    return _BUILDERS[(case.op, api)](tf, case.attrs, case.omit)  # omitted attributes: TF's defaults


class TensorFlowAdapter(Adapter):
    name = "tensorflow"
    requires = ("tensorflow",)
    extra = "tensorflow"
    # tensorflow-cpu is the CPU-only wheel of the same release; NumPy 2 from 2.18.
    releases = ReleaseRules("tensorflow-cpu", "tensorflow", numpy2_since="2.18.0")
    devices = ("cpu", "gpu")
    VARIANTS = _VARIANTS
    # tf.scatter_nd(indices, updates, shape) scatters into zeros it makes itself
    NO_DATA_INPUT: ClassVar[dict[str, tuple[str, ...]]] = (
        {"ScatterND": tuple(v for v in _VARIANTS["ScatterND"] if variants.split(v)[0] == "scatter_nd")})
    mapping = "docs/mapping/tensorflow.md"

    def is_slow(self, variant: str) -> bool:
        # a constant twin: a trace and compile per index value; a dynamic one: a twin, run where they run
        return variants.twin_of(variant) is not None

    def version(self) -> str:
        return tf_module().__version__

    def prepare(self, case: CaseData, variant: str) -> Call:
        """Build the native call; raises Unsupported where the TensorFlow API has no way to write the case."""
        self.check_variant(case.op, variant)
        api, mode = split_variant(variant)
        tf = tf_module()
        spec = build_spec(tf, case, api)
        dynamic = signature(tf, [case.inputs[name] for name in spec.args]) if variants.dynamic_parent(variant) else None
        shapes = signature_text(tf, dynamic) if dynamic is not None else ""
        text = render(spec, mode, shapes)
        fn = compiled(spec, mode, text, dynamic)
        held = "indices" if variants.constant_parent(variant) and "indices" in spec.args else None
        if held:
            at = spec.args.index(held)
            fn = _closing_over(tf, spec, mode, case.inputs[held], at)
            fed = ", ".join(a for a in spec.args if a != held)
            jit = ", jit_compile=True" if mode == "xla" else ""
            passed = ", ".join("tf.constant(indices)" if a == held else a for a in spec.args)
            text = (f"tf.function(lambda {fed}: f({passed}){jit})({fed})  # indices: a NumPy array, a Const of the "
                    f"graph; f: {render(spec, 'eager')}")
        inputs = [case.inputs[name] for name in spec.args if name != held]
        place, device_name = _placement(tf, case.device)

        def run() -> Any:
            # Pinned: TensorFlow would otherwise put ops on a visible GPU even for a CPU run.
            with tf.device(place):
                return fn(*[to_tensor(tf, arr) for arr in inputs])

        note = "" if case.device == "cpu" else f"  # under tf.device({place!r})"
        return Call(text + note, run, case.device, device_name,
                    source=_source(spec, mode, [case.inputs[name] for name in spec.args], place, held, shapes))

    def to_numpy(self, out: Any) -> np.ndarray:
        return from_tensor(out)


def _placement(tf: Any, device: str) -> tuple[str, str]:
    """(the tf.device string for ``device``, its description); NoDevice when TensorFlow sees no GPU."""
    if device == "cpu":
        return "/CPU:0", ""
    gpus = tf.config.list_logical_devices("GPU")
    if not gpus:
        built = "built with CUDA" if tf.test.is_built_with_cuda() else "a build without CUDA"
        raise NoDevice(f"tensorflow {tf.__version__} sees no GPU ({built})")
    details = tf.config.experimental.get_device_details(tf.config.list_physical_devices("GPU")[0])
    return gpus[0].name, str(details.get("device_name", gpus[0].name))


def _closing_over(tf: Any, spec: calls.Spec, mode: str, indices: np.ndarray, at: int) -> Callable[..., Any]:
    """A tf.function (jit-compiled in ``xla`` mode) of the inputs but the ``at``-th, which is ``tf.constant`` of the
    NumPy ``indices`` made inside the traced function: a Const node of its graph, not a captured input."""
    def body(*rest: Any) -> Any:
        return spec.fn(*rest[:at], tf.constant(indices), *rest[at:])

    return tf.function(body, jit_compile=(mode == "xla"))


def _source(spec: calls.Spec, mode: str, inputs: list[np.ndarray], place: str, held: str | None = None,
            input_signature: str = "") -> str:
    """The call as standalone statements (Call.source): tf.constant inputs, the same body, eager or tf.function;
    with ``held``, that input is a NumPy array the traced function makes a constant of; with ``input_signature``
    (:func:`signature_text`), the tf.function is traced for it (the dynamic twin)."""
    call = {"eager": "f", "function": "tf.function(f)", "xla": "tf.function(f, jit_compile=True)"}[mode]
    if input_signature:
        call = f"{call[:-1]}, input_signature={input_signature})"
    args = ", ".join(spec.args)
    if held:
        fed = ", ".join(a for a in spec.args if a != held)
        args = fed
        passed = ", ".join(f"tf.constant({held}_np)" if a == held else a for a in spec.args)
        call = f"tf.function(lambda {fed}: f({passed}){', jit_compile=True' if mode == 'xla' else ''})"
    return "\n".join([
        "import tensorflow as tf",
        *([f"{held}_np = {held}"] if held else []),
        *source.tensors(spec.args, inputs, "tf.constant({name})", string="tf.constant({name}, dtype=tf.string)"),
        *source.function("f", spec.args, [spec.prelude, spec.body] if spec.prelude else [spec.body]),
        f"with tf.device({place!r}):",
        f"    out = np.asarray({call}({args}).numpy())",  # a 0-d string result's .numpy() is bytes
        "result = np.vectorize(lambda b: b.decode('utf-8'), otypes=[object])(out) "
        "if out.dtype.kind in 'OS' and out.size else np.asarray(out)",
    ])


ADAPTER = TensorFlowAdapter()
