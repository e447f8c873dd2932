"""Baselines: the behaviour labels each framework version is known to have, so the nightly run catches changes.

In the spirit of array-api-tests' xfails files, but exact: a probe test passes when its observed label equals the
baseline's, and fails when the label changed (or has no baseline yet). ``--update-baseline`` rewrites the file
from a run. Files live in ``baselines/<framework>.yaml`` with the version they were measured on; a run on another
version is compared with them all the same, which is what makes a release's behaviour change visible.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import yaml


def item_key(case_nodeid: str, variant: str, device: str = "cpu") -> str:
    """The key of one probe result in a baseline file: ``file::id[variant]`` (plus ``@device`` off the CPU)."""
    return f"{case_nodeid}[{variant}]" + (f"@{device}" if device != "cpu" else "")


def path_for(root: Path, framework: str) -> Path:
    """Where a framework's baseline file lives."""
    return root / f"{framework}.yaml"


def load(root: Path, framework: str) -> dict[str, Any]:
    """The baseline of a framework: ``{"framework", "version", "labels": {key: label}}`` (empty if none)."""
    path = path_for(root, framework)
    if not path.exists():
        return {"framework": framework, "version": None, "labels": {}}
    data = yaml.safe_load(path.read_text()) or {}
    data.setdefault("labels", {})
    return data


def update(root: Path, framework: str, version: str, labels: dict[str, str]) -> None:
    """Merge ``labels`` into the framework's baseline file (locked: several pytest-xdist workers may write)."""
    root.mkdir(parents=True, exist_ok=True)
    path = path_for(root, framework)
    with open(root / f".{framework}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = load(root, framework)
        data["framework"] = framework
        data["version"] = version
        data["labels"] = dict(sorted({**data["labels"], **labels}.items()))
        tmp = path.with_suffix(".tmp")
        header = (
            f"# Behaviour labels measured on {framework} {version}; a probe test fails when its label changes.\n"
            "# Regenerate with: python -m pytest cases/probes --framework NAME --update-baseline\n"
        )
        tmp.write_text(header + yaml.safe_dump(data, sort_keys=False, width=200))
        os.replace(tmp, path)


def covers(baseline: dict[str, Any], case_file: str) -> bool:
    """True when the baseline holds labels of some probe in ``case_file`` (a probe of a file it has never seen, a
    user's own case file, has nothing to be checked against)."""
    files = baseline.get("_files")
    if files is None:
        files = baseline["_files"] = {k.split("::", 1)[0] for k in baseline["labels"]}
    return case_file in files


def check(baseline: dict[str, Any], key: str, observed: str, version: str) -> str | None:
    """None when ``observed`` matches the baseline, or the baseline knows nothing of the probe's case file;
    otherwise the failure message."""
    known = baseline["labels"].get(key)
    if known is None and not covers(baseline, key.split("::", 1)[0]):
        return None
    if known is None:
        return (f"no baseline label for {key} (observed {observed!r} on {version}); "
                "run with --update-baseline to record it")
    if known != observed:
        return (f"behaviour changed: baseline says {known!r} (measured on {baseline.get('version')}), "
                f"observed {observed!r} on {version}")
    return None


def from_records(root: Path, records: list[dict[str, Any]]) -> dict[str, int]:
    """Write baseline files from result records (every probe record's label); returns labels per framework."""
    by_fw: dict[str, dict[str, str]] = {}
    versions: dict[str, str] = {}
    for rec in records:
        if rec.get("label"):
            key = item_key(rec["case"], rec.get("variant", ""), rec.get("device", "cpu"))
            by_fw.setdefault(rec["framework"], {})[key] = rec["label"]
            versions[rec["framework"]] = rec.get("framework_version", "")
    for framework, labels in by_fw.items():
        update(root, framework, versions[framework], labels)
    return {fw: len(labels) for fw, labels in by_fw.items()}
