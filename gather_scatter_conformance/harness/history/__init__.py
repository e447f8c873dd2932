"""Behaviour across releases: ``gsc history FRAMEWORK --releases SPEC`` runs the behaviour-defining
cases (probes and seed cases) against several releases of one framework, each in its own cached environment, and
keeps one record per release × operator × API variant × dimension in ``history/<framework>.jsonl``.

Modules: ``pins`` (what each framework's releases need installed beside them), ``releases`` (a release spec
resolved against the package index), ``envs`` (one cached environment per release, made with uv where it is
installed), ``sweep`` (running a release and folding its results into history records), ``store`` (reading and
writing history files, the label changes between releases, and release-range baselines). Docs: docs/history.md.
"""
