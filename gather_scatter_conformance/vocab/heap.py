"""What glibc prints when it finds its heap damaged (``free(): invalid next size (fast)``, ``double free or
corruption (out)``, ``corrupted size vs. prev_size``, ...) before it aborts: one line each, matched by
:data:`GLIBC_MESSAGE`. The memory checkers' evidence (harness.evidence.parse) and the crash repro scripts
(harness.run.repro) both read it."""

from __future__ import annotations

# A whole line of standard error (strip it first).
GLIBC_MESSAGE = r"^(?:[\w.]+\(\): .+|double free or corruption.*|corrupted .+|free\(\): .+)$"
