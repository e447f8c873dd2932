"""The one bounded LRU the adapters keep their compiled artefacts in (sessions, compiled models, engines).

Compiling costs far more than running a one-node model, so adapters cache what they compile by everything that
shapes it but not the input values. ``functools.lru_cache`` does not fit: an adapter's ``release()`` must drop the
entries of one instance, and benchmarks/overhead.py and the tests read the hit and miss counts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LRU(Generic[V]):
    """At most ``size`` values keyed by hashable keys; the least recently used is dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value cached for ``key``, or ``make()``'s, cached; an exception from ``make`` caches nothing."""
        if key in self._items:
            self.hits += 1
            self._items.move_to_end(key)
            return self._items[key]
        self.misses += 1
        value = make()
        self._items[key] = value
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return value

    def values(self) -> list[V]:
        """The cached values, least recently used first."""
        return list(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        """Drop every entry and reset the counters."""
        self._items.clear()
        self.hits = self.misses = 0
