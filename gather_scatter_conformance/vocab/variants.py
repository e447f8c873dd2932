"""The one grammar of API variant names: ``<api>[/<mode>]``.

``<api>`` names the native entry point a variant calls: a function (``take``, ``index_put``, ``add_gather_v2``), a
namespaced one (``np.take``, ``at``), or an operator version (``Gather-13``, ``ScatterElementsUpdate-12``). The
optional ``<mode>`` says how it is invoked: a compile mode (``jit``, ``xla``, ``function``, ``compile``, ``eager``)
or an API-level mode (MXNet's ``raise``/``wrap``, TensorRT's ``DEFAULT``/``ELEMENT``/``ND``). Every variant of every
adapter matches :data:`VARIANT` (tests/test_variants.py); code that needs a variant's parts asks :func:`split`.
"""

from __future__ import annotations

import re

_WORD = r"[A-Za-z_][A-Za-z0-9_]*"
VARIANT = re.compile(rf"(?P<api>{_WORD}(?:\.{_WORD})*(?:-(?P<version>[0-9]+))?)(?:/(?P<mode>{_WORD}))?")
_OP_VERSION = re.compile(r"(?P<op>[A-Z][A-Za-z]*)-(?P<version>[0-9]+)")

# The twins of a variant (issue #40): the same call with something the compiler may use known or left open.
# ``<api>/constant`` runs ``<api>`` with the case's indices a compile-time constant (an ONNX initializer, an OpenVINO
# constant node) instead of a run-time input, since runtimes fold, check or specialise constants at compile time
# (index provenance); ``<api>/dynamic`` compiles it for inputs whose dimensions are left symbolic (torch.compile's
# dynamic=True, ONNX's dim_params, tf.function's input_signature of None dims), not specialised to the case's shapes,
# since such code takes other paths (dynamic shapes). Defined here, below adapters (onnx_graph.CONSTANT is this name)
# and the report (behaviour.twin_changes sets each twin beside ``<api>``).
CONSTANT_MODE = "constant"
DYNAMIC_MODE = "dynamic"
TWIN_MODES = (CONSTANT_MODE, DYNAMIC_MODE)
# Threads (issue #40 item 5): ``<api>/threads`` runs ``<api>`` with an intra-op thread a core where the parent runs
# one (ONNX Runtime's sessions, torch's eager calls), ``<api>/one_thread`` with one where the parent runs the
# runtime's default of every core (OpenVINO's CPU plugin). Duplicate scatter targets are written in an order that
# may depend on it (onnxruntime#18048, openvino#24021), so these twins run on the duplicate-target probes only
# (vocab.dimensions.thread_sensitive).
THREADS_MODE = "threads"
ONE_THREAD_MODE = "one_thread"
THREAD_MODES = (THREADS_MODE, ONE_THREAD_MODE)
TWIN_KINDS = (*TWIN_MODES, *THREAD_MODES)  # every kind of twin twin_of knows; twins() makes TWIN_MODES' only
# A variant that already has a mode gets its twin as ``<mode>_<twin>`` (TensorFlow's ``gather/xla_constant``, JAX's
# ``take/jit_constant``, torch's ``index_select/compile_dynamic``): the same compile mode, the one thing changed.


def twin(variant: str, kind: str) -> str:
    """The ``kind`` twin (:data:`TWIN_MODES`) of ``variant``: ``Gather-13`` -> ``Gather-13/constant``,
    ``gather/xla`` -> ``gather/xla_constant``, ``index_select/compile`` -> ``index_select/compile_dynamic``."""
    if kind not in TWIN_KINDS:
        raise ValueError(f"unknown twin {kind!r}; known: {', '.join(TWIN_KINDS)}")
    api, mode = split(variant)
    return join(api, kind if mode is None else f"{mode}_{kind}")


def twins(variant: str) -> list[str]:
    """The twins of ``variant``, one of each kind, in :data:`TWIN_MODES` order."""
    return [twin(variant, kind) for kind in TWIN_MODES]


def twin_of(variant: str) -> tuple[str, str] | None:
    """(the variant ``variant`` is a twin of, the twin's kind), or None when ``variant`` is no twin (or off the
    grammar)."""
    try:
        api, mode = split(variant)
    except ValueError:
        return None
    for kind in TWIN_KINDS:
        if mode == kind:
            return api, kind
        if mode and mode.endswith("_" + kind):
            return join(api, mode.removesuffix("_" + kind)), kind
    return None


def constant_twin(variant: str) -> str:
    """The variant that runs ``variant`` with the indices a compile-time constant (:func:`twin`)."""
    return twin(variant, CONSTANT_MODE)


def constant_parent(variant: str) -> str | None:
    """The variant whose constant twin ``variant`` is (its indices a run-time input), or None when ``variant`` is
    no constant twin (or off the grammar)."""
    found = twin_of(variant)
    return found[0] if found and found[1] == CONSTANT_MODE else None


def dynamic_twin(variant: str) -> str:
    """The variant that compiles ``variant`` for symbolic dimensions (:func:`twin`)."""
    return twin(variant, DYNAMIC_MODE)


def dynamic_parent(variant: str) -> str | None:
    """The variant whose dynamic-shapes twin ``variant`` is (compiled for the case's shapes), or None."""
    found = twin_of(variant)
    return found[0] if found and found[1] == DYNAMIC_MODE else None


def threads_of(variant: str) -> tuple[str, str] | None:
    """(the parent, the thread twin's kind: :data:`THREADS_MODE` or :data:`ONE_THREAD_MODE`) for a thread twin,
    else None."""
    found = twin_of(variant)
    return found if found and found[1] in THREAD_MODES else None


def split(variant: str) -> tuple[str, str | None]:
    """``"take/jit"`` -> ``("take", "jit")``, ``"Gather-13"`` -> ``("Gather-13", None)``; ValueError off the grammar."""
    m = VARIANT.fullmatch(variant)
    if m is None:
        raise ValueError(f"variant {variant!r} is not <api>[/<mode>] (e.g. take, np.take, Gather-13, take/jit)")
    return m["api"], m["mode"]


def join(api: str, mode: str | None = None) -> str:
    """The variant of ``api`` invoked in ``mode`` (None: plainly); ValueError when the result is off the grammar."""
    variant = api if mode is None else f"{api}/{mode}"
    split(variant)
    return variant


def mode(variant: str) -> str | None:
    """The ``<mode>`` part of a variant, or None."""
    return split(variant)[1]


def op_version(variant: str) -> tuple[str, int] | None:
    """``("Gather", 13)`` for a variant whose api is an operator version (``Gather-13``), else None."""
    m = _OP_VERSION.fullmatch(split(variant)[0])
    return (m["op"], int(m["version"])) if m else None


def is_valid(variant: str) -> bool:
    """True when ``variant`` follows the grammar."""
    return VARIANT.fullmatch(variant) is not None
