"""Safe YAML loading that remembers the line of every key, so errors can name file, line and field."""

from __future__ import annotations

from typing import Any

import yaml

from gather_scatter_conformance.harness.cases.errors import CaseFileError

Path = tuple[str | int, ...]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _walk(node: yaml.Node, path: Path, lines: dict[Path, int], file: str) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key, value in node.value:
            name = key.value
            line = key.start_mark.line + 1
            if name in seen:
                raise CaseFileError(
                    file, line, format_path(path + (name,)), f"duplicate key (first at line {seen[name]})"
                )
            seen[name] = line
            lines[path + (name,)] = line
            _walk(value, path + (name,), lines, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            _walk(item, path + (i,), lines, file)


def load(text: str, file: str) -> tuple[Any, dict[Path, int]]:
    """Parse ``text`` with a safe loader; return the data and a map from key paths to 1-based line numbers.

    Raises CaseFileError (with the line of the problem) on syntax errors and duplicate keys.
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        lines: dict[Path, int] = {}
        _walk(node, (), lines, file)
        return loader.construct_document(node), lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise CaseFileError(file, line, "", f"YAML syntax error: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise CaseFileError(file, None, "", f"YAML error: {exc}") from None
    finally:
        loader.dispose()


def format_path(path: Path) -> str:
    """Render a key path the way users read it: ``cases[3].inputs.indices``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def line_of(lines: dict[Path, int], path: Path) -> int | None:
    """The line of the deepest existing prefix of ``path``."""
    for n in range(len(path), -1, -1):
        if path[:n] in lines:
            return lines[path[:n]]
    return None
