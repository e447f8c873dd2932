"""Safe YAML loading that remembers the line of every key, so errors can name file, line and field."""

from __future__ import annotations

from typing import Any

import yaml

from gather_scatter_conformance.harness.cases.errors import CaseFileError

Path = tuple[str | int, ...]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Nodes that aliases may add to a document beyond those written in it. A case file needs a handful of aliases at
# most; a "billion laughs" file of 515 bytes expands to 9**9 nodes (the walk that followed each alias took 25 s and
# 1.45 GB at 7 levels, minutes and 4.46 GB at 9).
ALIAS_LIMIT = 10_000


class _Walk:
    """One pass over a document's node graph: each node is visited once, by identity (an alias is the node it
    names, met again), so the pass is linear in the file whatever its aliases; it counts the nodes the aliases
    would add when the document is expanded, and refuses more than :data:`ALIAS_LIMIT` or an alias to itself."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[Path, int] = {}
        self.sizes: dict[int, int] = {}  # id(node) -> nodes in its expansion, for every node walked
        self.open: set[int] = set()  # the nodes being walked: the path from the root down
        self.added = 0

    def node(self, node: yaml.Node, path: Path, line: int) -> int:
        """Walk ``node`` met at ``path`` (on ``line``); return the size of its expansion."""
        key = id(node)
        if key in self.open:
            raise CaseFileError(self.file, line, format_path(path), "a recursive alias (a node that contains itself)")
        if key in self.sizes:  # an alias of a node already walked: its expansion is added again, not walked
            self.added += self.sizes[key]
            if self.added > ALIAS_LIMIT:
                raise CaseFileError(self.file, line, format_path(path), f"aliases expand the file by more than "
                                    f"{ALIAS_LIMIT:,} values (a case file needs a few aliases at most)")
            return self.sizes[key]
        self.open.add(key)
        self.lines.setdefault(path, node.start_mark.line + 1)
        size = 1
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for k, value in node.value:
                name = k.value
                at = k.start_mark.line + 1
                if name in seen:
                    raise CaseFileError(self.file, at, format_path(path + (name,)),
                                        f"duplicate key (first at line {seen[name]})")
                seen[name] = at
                self.lines[path + (name,)] = at
                size += 1 + self.node(value, path + (name,), at)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.lines.setdefault(path + (i,), item.start_mark.line + 1)
                size += self.node(item, path + (i,), line)  # an alias item's own line is not kept: its sequence's
        self.open.discard(key)
        self.sizes[key] = size
        return size


def load(text: str, file: str) -> tuple[Any, dict[Path, int]]:
    """Parse ``text`` with a safe loader; return the data and a map from key paths to 1-based line numbers.

    Raises CaseFileError (with the line of the problem) on syntax errors, duplicate keys, a recursive alias and
    aliases that expand the document by more than :data:`ALIAS_LIMIT` nodes.
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        walk = _Walk(file)
        walk.node(node, (), node.start_mark.line + 1)
        return loader.construct_document(node), walk.lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise CaseFileError(file, line, "", f"YAML syntax error: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise CaseFileError(file, None, "", f"YAML error: {exc}") from None
    except RecursionError:
        raise CaseFileError(file, None, "", "nested too deeply") from None
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
