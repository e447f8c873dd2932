"""Running cases: the runner, worker processes with crash and hang isolation, the fork template, arrays on the wire,
result records and the pytest plugin."""
