"""Case-file text the harness's own tests share."""

# A Gather file's head: one in-range case (3 elements, two indices); a test appends the cases it is about.
GATHER_IN_RANGE = """\
op: Gather
cases:
  - id: in-range
    source: test
    inputs: {data: [1, 2, 3], indices: [2, 0]}
"""
