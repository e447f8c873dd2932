"""Running cases: the runner, worker processes with crash and hang isolation, the fork template, arrays on the wire,
result records, the pytest plugin, and the repro script of a finding (``repro``: what a failing test prints and
the report shows)."""
