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

# The mode of index provenance (issue #40): the variant ``<api>/constant`` runs ``<api>`` with the case's indices a
# compile-time constant (an ONNX initializer, an OpenVINO constant node) instead of a run-time input, since runtimes
# fold, check or specialise constants at compile time. Defined here, below adapters (onnx_graph.CONSTANT is this
# name) and the report (behaviour.provenance_changes sets each such variant beside ``<api>``).
CONSTANT_MODE = "constant"
# A variant that already has a mode gets its twin as ``<mode>_constant`` (TensorFlow's ``gather/xla_constant``,
# JAX's ``take/jit_constant``): the same compile mode, the indices a constant.
_CONSTANT_SUFFIX = "_" + CONSTANT_MODE


def constant_twin(variant: str) -> str:
    """The variant that runs ``variant`` with the indices a compile-time constant: ``Gather-13`` ->
    ``Gather-13/constant``, ``gather/xla`` -> ``gather/xla_constant``."""
    api, mode = split(variant)
    return join(api, CONSTANT_MODE if mode is None else mode + _CONSTANT_SUFFIX)


def constant_parent(variant: str) -> str | None:
    """The variant whose constant twin ``variant`` is (its indices a run-time input), or None when ``variant`` is
    no twin (or off the grammar)."""
    try:
        api, mode = split(variant)
    except ValueError:
        return None
    if mode == CONSTANT_MODE:
        return api
    if mode and mode.endswith(_CONSTANT_SUFFIX):
        return join(api, mode.removesuffix(_CONSTANT_SUFFIX))
    return None


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
