"""Rename API variants to the one grammar ``<api>[/<mode>]`` (adapters/variants.py) in data written before it.

    python scripts/migrate_variants.py baselines/*.yaml            # labels' keys ``file::id[variant][@device]``
    python scripts/migrate_variants.py results/run.jsonl           # each record's ``variant``
    python scripts/migrate_variants.py --framework jax known/jax.yaml   # old names in ``variants:`` lists
    python scripts/migrate_variants.py cases/regression/*.yaml docs/x.md  # ``fw:old``, ``variant: old``, [old], 'old'

:data:`RENAMES` is the complete old -> new table, keyed by (framework, op, old) because one old name can become
different names per operator (jax's ``eager`` is ``take`` for Gather, ``take_along_axis`` for GatherElements).
An old name is rewritten only where its framework and operator are known (a baseline's framework and its case
file's ``op:``; a record's fields; ``--framework`` and a YAML block's cases or ``op:``), or where it has one new
name whatever they are. Running the script twice changes nothing: no new name is an old name of the same
(framework, op). Files are rewritten in place, line by line, so comments and layout stay.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OPS = ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Take")


def _onnx_versions() -> dict[tuple[str, str, str], str]:
    # onnxruntime and DirectML: opset<N> -> the ONNX operator version the model uses (Take is built as Gather).
    versions = {"Gather": (13, 11, 1), "GatherElements": (13, 11), "GatherND": (13, 12, 11),
                "ScatterElements": (18, 16, 13, 11), "ScatterND": (18, 16, 13, 11), "Take": (13, 11, 1)}
    onnx_type = {"Take": "Gather"}
    return {(fw, op, f"opset{v}"): f"{onnx_type.get(op, op)}-{v}"
            for fw in ("onnxruntime", "directml") for op, vs in versions.items() for v in vs}


_JAX_API = {"Gather": "take", "GatherElements": "take_along_axis", "GatherND": "indexing", "ScatterElements": "at",
            "ScatterND": "at", "Take": "take"}
_MXNET = {"Gather": {"take-raise": "take/raise", "np-indexing": "np.indexing"},
          "GatherElements": {"pick-wrap": "pick/wrap", "np-indexing": "np.indexing"},
          "GatherND": {"np-indexing": "np.indexing"},
          "ScatterElements": {"np-setitem": "np.setitem"},
          "ScatterND": {"np-setitem": "np.setitem"}}

RENAMES: dict[tuple[str, str, str], str] = {
    **_onnx_versions(),
    **{("jax", op, "eager"): api for op, api in _JAX_API.items()},
    **{("jax", op, "jit"): f"{api}/jit" for op, api in _JAX_API.items()},
    **{("mxnet", op, old): new for op, names in _MXNET.items() for old, new in names.items()},
    **{("openvino", op, "onnx-frontend"): "read_model" for op in OPS},
    **{("tensorrt", op, "onnx-parser"): "OnnxParser" for op in OPS},
}
FRAMEWORKS = sorted({fw for fw, _, _ in RENAMES})
_OLD = sorted({old for _, _, old in RENAMES}, key=len, reverse=True)
_OLD_ALT = "|".join(re.escape(o) for o in _OLD)


def rename(framework: str, op: str | None, old: str) -> str:
    """The new name of ``old`` for (framework, op); ``old`` itself where unchanged or where op is unknown and the
    new name depends on it."""
    if op is not None:
        return RENAMES.get((framework, op, old), old)
    news = {new for (fw, _, o), new in RENAMES.items() if fw == framework and o == old}
    return news.pop() if len(news) == 1 else old


def unambiguous(old: str) -> str | None:
    """The new name of ``old`` when every framework and operator agree on it, else None."""
    news = {new for (_, _, o), new in RENAMES.items() if o == old}
    return news.pop() if len(news) == 1 else None


@cache
def case_op(case_file: str) -> str | None:
    """The top-level ``op:`` of a case file (a path relative to the repository root), or None."""
    path = ROOT / case_file
    if not path.is_file():
        return None
    m = re.search(r"^op:[ \t]*(\w+)", path.read_text(), re.M)
    return m.group(1) if m else None


# --- baselines: keys ``cases/probes/gather.yaml::probe-x[variant]@gpu`` -------------------------------------------

_KEY = re.compile(r"^(?P<pre>\s*['\"]?(?P<file>[^\s:'\"]+\.yaml)::[^\[\s]+\[)(?P<variant>[^\]]+)(?P<post>\].*)$")


def migrate_baseline(text: str, framework: str) -> str:
    """A baseline file with every label key's variant renamed for ``framework`` and the key's case file's op."""
    out = []
    for line in text.splitlines(keepends=True):
        m = _KEY.match(line)
        if m:
            line = m["pre"] + rename(framework, case_op(m["file"]), m["variant"]) + m["post"] + (
                "\n" if line.endswith("\n") and not m["post"].endswith("\n") else "")
        out.append(line)
    return "".join(out)


# --- results: JSON Lines records -------------------------------------------------------------------------------


def migrate_results(text: str) -> str:
    """Results JSON Lines with each record's ``variant`` renamed (its framework, its op or its case file's)."""
    out = []
    for line in text.splitlines(keepends=True):
        if not line.strip():
            out.append(line)
            continue
        rec = json.loads(line)
        if rec.get("variant") and rec.get("framework"):
            op = rec.get("op") or case_op(str(rec.get("case", "")).split("::")[0])
            new = rename(rec["framework"], op, rec["variant"])
            if new != rec["variant"]:
                rec["variant"] = new
                line = json.dumps(rec) + ("\n" if line.endswith("\n") else "")
        out.append(line)
    return "".join(out)


# --- other text: YAML data (known deviations, cases), docs ------------------------------------------------------

_CASE_REF = re.compile(r"(cases/[\w./-]+\.yaml)::")
_OWN_LIST = re.compile(r"::[^\s:]+:\s*\S")
_OP_KEY = re.compile(r"\bop:[ \t]*['\"]?(\w+)")
_FLOW_LIST = re.compile(r"^(?P<pre>\s*(?:-\s+)?(?:variants|[^\s]+::[^\s:]+):\s*\[)(?P<items>[^\]]*)(?P<post>\].*)$",
                        re.S)
_BLOCK_ITEM = re.compile(r"^(?P<pre>\s*-\s+)(?P<item>[^\s#:]+)(?P<post>\s*(?:#.*)?)$", re.S)
_FW_TOKEN = re.compile(rf"\b(?P<fw>{'|'.join(map(re.escape, FRAMEWORKS))}):(?P<old>{_OLD_ALT})(?![\w./-])")
_VARIANT_KEY = re.compile(rf"^(?P<pre>\s*variant:[ \t]*['\"]?)(?P<old>{_OLD_ALT})(?P<post>['\"]?\s*(?:#.*)?)$", re.S)
_FRAMEWORK_KEY = re.compile(r"^\s*(?:-\s+)?framework:[ \t]*['\"]?([\w-]+)")
_QUOTED = re.compile(rf"(?P<open>\[)(?P<old>{_OLD_ALT})(?P<close>\])|(?P<q>')(?P<qold>{_OLD_ALT})'")


def _block_ops(lines: list[str], i: int, file_op: str | None) -> set[str | None]:
    """The operators a ``variants:`` list at line ``i`` is about: those of the case files (but cases with a list of
    their own) and ``op:`` keys in the enclosing list item (a known deviation), else the file's own ``op:``."""
    here = len(lines[i]) - len(lines[i].lstrip())
    start = i
    while start > 0 and not (lines[start].lstrip().startswith("- ") and
                             len(lines[start]) - len(lines[start].lstrip()) < here):
        start -= 1
    top = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > top):
        end += 1
    block = lines[start:end] if lines[start].lstrip().startswith("- ") else []
    # A case with its own list (``cases/x.yaml::id: [a, b]``) does not take the item's ``variants:``.
    refs = [ref for line in block if not _OWN_LIST.search(line) for ref in _CASE_REF.findall(line)]
    ops: set[str | None] = {case_op(f) for f in refs} | set(_OP_KEY.findall("".join(block)))
    return ops or {file_op}


def _rename_items(items: str, framework: str, ops: set[str | None]) -> str:
    def one(item: str) -> str:
        name = item.strip().strip("'\"")
        news = {rename(framework, op, name) for op in ops}
        if len(news) > 1:
            # One old name, several new ones (a known deviation over ScatterElements and ScatterND cases): the entry
            # must be split by hand, one per operator.
            print(f"ambiguous: {framework} {name!r} is {sorted(news)} for operators {sorted(map(str, ops))}; "
                  "left as it is", file=sys.stderr)
            return item
        return item.replace(name, news.pop())

    return ",".join(one(item) for item in items.split(","))


def _quoted(m: re.Match[str]) -> str:
    old = m["old"] or m["qold"]
    new = unambiguous(old) or old
    return f"[{new}]" if m["old"] else f"'{new}'"


def migrate_text(text: str, framework: str | None = None) -> str:
    """Rename old spellings in a YAML or text file.

    With ``framework``: the names in ``variants:`` lists (flow ``[a, b]`` or block ``- a``) and in a case entry's
    own list (``cases/x.yaml::id: [a, b]``), for the operators of the enclosing item's cases. Always: ``fw:old``
    tokens and ``variant: old`` keys beside a ``framework:`` key, for the file's ``op:`` (where the new name depends
    on it and the file names none, the old name stays); and ``[old]`` / ``'old'`` where the new name is the same for
    every framework and operator.
    """
    lines = text.splitlines(keepends=True)
    file_op = (m.group(1) if (m := re.search(r"^op:[ \t]*(\w+)", text, re.M)) else None)
    out = []
    in_variants = -1  # indentation of an open block-style ``variants:`` key, -1 when none
    sibling_fw: str | None = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if re.match(r"^\s*- id:", line):
            sibling_fw = None  # a new case: its bug names its own framework
        if fw_match := _FRAMEWORK_KEY.match(line):
            sibling_fw = fw_match.group(1)
        if framework:
            m = _FLOW_LIST.match(line)
            if m:
                ref = _CASE_REF.search(m["pre"])
                ops = {case_op(ref.group(1))} if ref else _block_ops(lines, i, file_op)
                line = m["pre"] + _rename_items(m["items"], framework, ops) + m["post"]
            elif re.match(r"^\s*(?:-\s+)?variants:\s*$", line):
                in_variants = len(line) - len(line.lstrip())
            elif in_variants >= 0 and (b := _BLOCK_ITEM.match(line)) and len(line) - len(line.lstrip()) >= in_variants:
                line = b["pre"] + _rename_items(b["item"], framework, _block_ops(lines, i, file_op)) + b["post"]
            elif stripped:
                in_variants = -1
        if sibling_fw and (v := _VARIANT_KEY.match(line)):
            line = v["pre"] + rename(sibling_fw, file_op, v["old"]) + v["post"]
        line = _FW_TOKEN.sub(lambda t: f"{t['fw']}:{rename(t['fw'], file_op, t['old'])}", line)
        line = _QUOTED.sub(_quoted, line)
        out.append(line)
    return "".join(out)


def migrate_file(path: Path, framework: str | None = None) -> bool:
    """Rewrite one file in place; True when it changed. A baseline's framework is its file name."""
    text = path.read_text()
    migrate: Callable[[str], str]
    if path.suffix == ".jsonl":
        migrate = migrate_results
    elif path.parent.name == "baselines" and path.suffix == ".yaml":
        migrate = lambda t: migrate_baseline(t, framework or path.stem)  # noqa: E731
    else:
        migrate = lambda t: migrate_text(t, framework)  # noqa: E731
    new = migrate(text)
    if path.suffix in (".yaml", ".yml") and new != text:
        yaml.safe_load(new)  # a rewrite must leave valid YAML
    if new != text:
        path.write_text(new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    """Migrate every file named; print the ones that changed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--framework", help="the framework whose old names a YAML file's variants: lists hold")
    args = parser.parse_args(argv)
    for path in args.files:
        if migrate_file(path, args.framework):
            print(f"migrated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
