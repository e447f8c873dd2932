"""Case-file text the harness's own tests share."""

# A Gather file's head: one in-range case (3 elements, two indices); a test appends the cases it is about.
GATHER_IN_RANGE = """\
op: Gather
cases:
  - id: in-range
    source: test
    inputs: {data: [1, 2, 3], indices: [2, 0]}
"""


def records_of(path) -> list[dict]:
    """The records of a results file as plain JSON objects, its run's manifest line (the first) left out."""
    import json
    from pathlib import Path

    lines = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return [rec for rec in lines if "gsc_manifest" not in rec]
