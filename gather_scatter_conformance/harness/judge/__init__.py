"""Judging observations: comparison with the reference engine, verdicts, behaviour labels and dimensions, alias
detection, baselines and known deviations."""
