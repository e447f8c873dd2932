"""Statements that adapters' repro sources (``Call.source``) share: the framework's tensors made from the inputs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def tensors(names: Sequence[str], arrays: Sequence[np.ndarray], make: str, *, bfloat16: str = "",
            string: str = "") -> list[str]:
    """One statement per input binding ``name`` to the framework's tensor of the NumPy array of that name: ``make``
    (a format with ``{name}``), or ``bfloat16`` / ``string`` for an input of that dtype where the framework needs
    another spelling (NumPy has no bfloat16 arithmetic of its own; string data are object arrays)."""
    out = []
    for name, arr in zip(names, arrays, strict=True):
        special = bfloat16 if arr.dtype.name == "bfloat16" else string if arr.dtype == object else ""
        out.append(f"{name} = {(special or make).format(name=name)}")
    return out


def function(name: str, args: Sequence[str], body: Sequence[str]) -> list[str]:
    """``def name(args):`` with ``body``'s statements, the last one's value returned: the call as a function of the
    inputs, for a framework that traces or compiles a function."""
    *before, last = body
    return [f"def {name}({', '.join(args)}):", *(f"    {line}" for line in before), f"    return {last}"]
