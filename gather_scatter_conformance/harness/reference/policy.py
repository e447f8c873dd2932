"""Index-handling policies and the reference engine's exceptions.

A :class:`Policy` says what the engine does with index values the canonical (ONNX) semantics leave undefined or
forbid: out-of-range indices, negative indices, and duplicate scatter targets. Enumerating :data:`POLICY_VALUES`
gives every behaviour the harness can attribute to a framework.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from gather_scatter_conformance.vocab.ops import SCATTER_OPS

OUT_OF_BOUNDS = ("error", "zero", "clamp", "wrap", "fill", "skip")
NEGATIVE = ("wrap", "error", "oob")
DUPLICATES = ("any-of", "last", "first", "accumulate")

# Every allowed value of every Policy field; the first value of each is the canonical one.
POLICY_VALUES: dict[str, tuple[str, ...]] = {
    "out_of_bounds": OUT_OF_BOUNDS,
    "negative": NEGATIVE,
    "duplicates": DUPLICATES,
}

# out_of_bounds values that make sense per operator kind; the others raise PolicyNotApplicable.
GATHER_OUT_OF_BOUNDS = ("error", "zero", "clamp", "wrap", "fill")
SCATTER_OUT_OF_BOUNDS = ("error", "clamp", "wrap", "skip")


class InvalidInput(ValueError):
    """The inputs or attributes are invalid whatever the index values are (shape, rank, dtype, axis...)."""


class IndexOutOfRange(ValueError):
    """An index value makes the input an error under the canonical semantics or the policy in force."""


class PolicyNotApplicable(ValueError):
    """The policy value has no meaning for this operator (e.g. out_of_bounds='fill' for a scatter)."""


@dataclass(frozen=True)
class Policy:
    """How index values outside the canonical domain are treated.

    ``out_of_bounds``: what happens to an index outside the axis after ``negative`` has been applied.
    ``negative``: ``wrap`` adds the axis size (valid range [-s, s-1]), ``error`` rejects every negative,
    ``oob`` hands negatives to ``out_of_bounds`` unchanged. ``duplicates``: which update wins when a scatter
    without reduction writes one place more than once.
    """

    out_of_bounds: str = "error"
    negative: str = "wrap"
    duplicates: str = "any-of"

    def __post_init__(self) -> None:
        for name, allowed in POLICY_VALUES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"policy {name}={value!r} is not one of {', '.join(allowed)}")

    def to_dict(self) -> dict[str, str]:
        """Return the policy as a plain dict of its three fields (round-trips through :meth:`from_dict`)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Policy:
        """Build a policy from a dict; missing fields take canonical values, unknown keys raise ValueError."""
        unknown = set(d) - set(POLICY_VALUES)
        if unknown:
            raise ValueError(f"unknown policy field(s): {', '.join(sorted(unknown))}")
        return cls(**dict(d))

    def applies_to(self, op: str) -> bool:
        """True if this policy is meaningful for ``op``; compute() raises PolicyNotApplicable otherwise."""
        if op in SCATTER_OPS:
            return self.out_of_bounds in SCATTER_OUT_OF_BOUNDS
        return self.out_of_bounds in GATHER_OUT_OF_BOUNDS


CANONICAL = Policy(out_of_bounds="error", negative="wrap", duplicates="any-of")


def all_policies() -> Iterator[Policy]:
    """Yield every combination of policy values, canonical first."""
    for values in itertools.product(*POLICY_VALUES.values()):
        yield Policy(**dict(zip(POLICY_VALUES, values, strict=True)))
