"""gather_scatter_conformance.adapters.cache.LRU: the one cache of compiled sessions, models and engines."""

from __future__ import annotations

import pytest

from gather_scatter_conformance.adapters.cache import LRU


def test_a_bounded_lru_counts_hits_and_misses() -> None:
    cache: LRU[str] = LRU(2)
    first = cache.get_or_make("k1", lambda: "v1")
    cache.get_or_make("k2", lambda: "v2")
    assert cache.get_or_make("k1", lambda: "other") is first  # a hit refreshes k1
    cache.get_or_make("k3", lambda: "v3")  # evicts k2, the least recently used
    assert len(cache) == 2 and (cache.hits, cache.misses) == (1, 3)
    assert cache.values() == ["v1", "v3"]
    assert cache.get_or_make("k2", lambda: "v2 again") == "v2 again" and cache.misses == 4


def test_a_failed_make_caches_nothing_and_clear_resets() -> None:
    cache: LRU[int] = LRU(4)

    def fail() -> int:
        raise RuntimeError("cannot build")

    with pytest.raises(RuntimeError):
        cache.get_or_make("k", fail)
    assert len(cache) == 0 and cache.misses == 1
    assert cache.get_or_make("k", lambda: 7) == 7
    cache.clear()
    assert (len(cache), cache.hits, cache.misses) == (0, 0, 0)
