"""Finding case files under a folder: each real file once, through symlinks but never round a symlink loop."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path


def case_files(root: Path, patterns: tuple[str, ...] = ("*.yaml", "*.yml")) -> list[Path]:
    """The files under ``root`` whose names match one of ``patterns``, sorted by path. A folder reached twice
    (a symlink loop, or two links to one folder) is walked once, and a file reached by two paths is listed once
    (``Path.rglob`` neither follows linked folders nor lists a linked file once)."""
    found: list[Path] = []
    folders: set[str] = set()
    files: set[str] = set()
    for folder, subfolders, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in folders:
            subfolders[:] = []
            continue
        folders.add(real)
        subfolders.sort()
        for name in sorted(names):
            if any(fnmatch.fnmatch(name, p) for p in patterns):
                path = Path(folder) / name
                if (real_file := os.path.realpath(path)) not in files:
                    files.add(real_file)
                    found.append(path)
    return sorted(found)
