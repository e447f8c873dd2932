"""Shrinking a finding with Hypothesis's own shrinker.

The property "this case shows disagreement (api, kind)" is run under ``@given`` with the *same* strategy,
settings and seed as the generation that found it. Generation is deterministic, so Hypothesis produces the same
cases in the same order, and the property answers from the generation run's memo for those (no framework call):
it fails on the *smallest* generated case that showed the disagreement (and on known cases smaller still), so
that is where shrinking starts. Hypothesis then shrinks it, calling the property on smaller candidates, which
run only the one API involved. The last failing call is Hypothesis's final replay of the minimal example.

Shrinking is deterministic too: the shrinker's choices depend only on the seed and the property's answers, which
are memoised per case so that a replay never sees a different answer. A budget bounds the framework calls per
finding; past it, unseen candidates count as not failing, which ends the shrink early but deterministically.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, seed

from gather_scatter_conformance.harness.fuzz.strategies import (
    GenCase,
    case_strategy,
    fuzz_settings,
    with_attrs_defaults,
)

Signature = tuple[str, str]  # (framework:variant, kind of disagreement)


class _Shows(Exception):
    """Raised by the shrink property when a case shows the disagreement being shrunk."""


def shrink(
    op: str,
    examples: int,
    seed_value: int,
    target: Signature,
    known: dict[str, frozenset[Signature]],
    sizes: dict[str, int],
    evaluate: Callable[[GenCase], frozenset[Signature]],
    budget: int = 150,
) -> tuple[GenCase | None, int]:
    """The minimal case of ``op`` showing ``target``, and how many framework evaluations that took.

    ``examples`` and ``seed_value`` must be those the cases were generated with (harness.fuzz.strategies
    .generate); ``known`` maps the generated cases' keys, in generation order, to every signature seen there,
    ``sizes`` gives their sizes (GenCase.size); ``evaluate`` answers for any other case, for the target's API
    only. Returns (None, 0) when no generated case showed ``target``.
    """
    showing = [(sizes[key], i, key) for i, (key, sigs) in enumerate(known.items()) if target in sigs]
    if not showing:
        return None, 0
    start = min(showing)[2]
    memo: dict[str, frozenset[Signature]] = {}
    calls = 0
    last: GenCase | None = None

    @seed(seed_value)
    @fuzz_settings(examples, shrink=True)
    @given(case_strategy(op))
    def shows(case: GenCase) -> None:
        nonlocal calls, last
        gc = with_attrs_defaults(case)
        if gc.key in known:  # a generated case: only the smallest one showing the target fails
            fails = gc.key == start
        else:
            if gc.key not in memo:
                memo[gc.key] = evaluate(gc) if calls < budget else frozenset()
                calls += 1
            fails = target in memo[gc.key]
        if fails:
            last = gc
            raise _Shows(target)

    try:
        shows()
    except _Shows:
        return last, min(calls, budget)
    return None, min(calls, budget)
