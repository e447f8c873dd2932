"""Deterministic YAML text for generated case files: exact values, nested lists laid out row by row. The one
writer of case files: the importers (ONNX node tests) and the fuzzer (``cases/found/``) both render through
:func:`case_lines` and :func:`file_text`.

PyYAML's dumper would do, but its float spelling is not the case files' (``1e-05`` reads back as a string), its
layout puts every element on a line of its own, and it cannot write comments. Values here are exact: every float
is written in the shortest decimal that reads back (float64, then cast to the declared dtype, as
``harness.cases.values.to_array`` does) to the very same bits, or else as the exact float64 of the value.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from gather_scatter_conformance.vocab import dtypes

WIDTH = 116  # the case files' line length (ruff's 120, less some slack)


def _float_literal(text: str) -> str:
    """A spelling YAML 1.1 reads as a float: PyYAML wants a dot in the mantissa and a signed exponent."""
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        if exponent[0] not in "+-":
            exponent = "+" + exponent
        return f"{mantissa}e{exponent}"
    return text if "." in text else text + ".0"


def float_text(x: Any, dtype_name: str) -> str:
    """The shortest exact YAML spelling of one float of ``dtype_name``; raises ValueError if none reads back."""
    dtype = dtypes.to_numpy(dtype_name)
    value = dtype.type(x)
    f = float(value)
    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    candidates = [np.format_float_positional(value, unique=True, trim="0")]
    if dtype_name != "bfloat16":
        candidates.append(np.format_float_scientific(value, unique=True, trim="0"))
    candidates.append(repr(f))  # a float64 holds every narrower float exactly
    for text in sorted(candidates, key=len):
        literal = _float_literal(text)
        if np.array([float(literal)]).astype(dtype).view(np.uint8).tobytes() == np.array([value]).view(
            np.uint8
        ).tobytes():
            return literal
    raise ValueError(f"no exact decimal spelling of {value!r} as {dtype_name}")


def scalar_text(x: Any, dtype_name: str) -> str:
    """One element of an array of ``dtype_name`` as YAML text."""
    if dtype_name == "bool":
        return "true" if bool(x) else "false"
    if dtype_name == "string":
        return json.dumps(str(x), ensure_ascii=True)
    if dtype_name in dtypes.INDEX_DTYPES:
        return str(int(x))
    if dtype_name in dtypes.COMPLEX_DTYPES:
        if complex(x).imag:
            raise ValueError("inline complex values can only be real (docs/writing-cases.md)")
        return float_text(complex(x).real, "float64" if dtype_name == "complex128" else "float32")
    return float_text(x, dtype_name)


def _row(items: list[str], col: int) -> str:
    """A flat list starting at column ``col``, wrapped after a comma when it would pass WIDTH."""
    if not items:
        return "[]"
    lines, line, start = [], "[", col  # start: the column the current line's text begins at
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "]")
        if line.strip() not in ("", "[") and start + len(line) + 1 + len(piece) > WIDTH:
            lines.append(line)
            line, start = " " * (col + 1) + piece, 0
        else:
            line += ("" if line == "[" else " ") + piece
    lines.append(line)
    return "\n".join(lines)


def nested_text(arr: np.ndarray, col: int) -> str:
    """An array as a nested flow list whose opening bracket sits at column ``col``: innermost rows on a line each."""
    name = dtypes.name_of(arr.dtype)
    if arr.ndim == 0:
        return scalar_text(arr[()], name)
    if arr.ndim == 1:
        return _row([scalar_text(x, name) for x in arr], col)
    if arr.shape[0] == 0:
        return "[]"
    parts = [nested_text(sub, col + 1) for sub in arr]
    return "[" + (",\n" + " " * (col + 1)).join(parts) + "]"


def inline_text(arr: np.ndarray) -> str:
    """An array as a nested flow list on one line: ``[[1.0, 2.0], [3.0, 4.0]]``."""
    name = dtypes.name_of(arr.dtype)
    if arr.ndim == 0:
        return scalar_text(arr[()], name)
    if arr.ndim == 1:
        return "[" + ", ".join(scalar_text(x, name) for x in arr) + "]"
    return "[" + ", ".join(inline_text(sub) for sub in arr) + "]"


def block(key: str, arr: np.ndarray, indent: int) -> list[str]:
    """``key: value`` for an array: on one line when it fits, else the nested list on the lines below the key."""
    pad = " " * indent
    one = inline_text(arr)
    if indent + len(key) + 2 + len(one) <= WIDTH:
        return [f"{pad}{key}: {one}"]
    return [f"{pad}{key}:", *(pad + "  " + line if i == 0 else line for i, line in
                              enumerate(nested_text(arr, indent + 2).split("\n")))]


def input_block(name: str, arr: np.ndarray, indent: int) -> list[str]:
    """An inline input ``{value, dtype[, shape]}``; empty and 0-d arrays carry their shape explicitly."""
    pad = " " * indent
    dtype_name = dtypes.name_of(arr.dtype)
    shape = f", shape: {list(arr.shape)}" if arr.ndim == 0 or arr.size == 0 else ""
    value = arr.reshape(-1) if arr.size == 0 else arr
    one = f"{pad}{name}: {{value: {inline_text(value)}, dtype: {dtype_name}{shape}}}"
    if len(one) <= WIDTH:
        return [one]
    lines = [f"{pad}{name}:", f"{pad}  dtype: {dtype_name}"]
    if shape:
        lines.append(f"{pad}  shape: {list(arr.shape)}")
    return lines + block("value", value, indent + 2)


def string(text: str, col: int = 0, indent: int = 6) -> str:
    """A double-quoted YAML scalar (JSON's escapes are YAML's) starting at column ``col``, folded at spaces onto
    lines indented by ``indent`` when it would pass WIDTH (YAML reads each fold back as one space)."""
    quoted = json.dumps(text, ensure_ascii=True)
    lines, start = [], col
    while start + len(quoted) > WIDTH:
        cut = quoted.rfind(" ", 0, WIDTH - start)
        if cut <= 0 or quoted[cut - 1] in " \\" or quoted[cut + 1] == " ":
            break  # a run of spaces would fold into one: leave the line long rather than change the text
        lines.append(quoted[:cut])
        quoted, start = quoted[cut + 1 :], indent
    return ("\n" + " " * indent).join([*lines, quoted])


def flow(value: Any) -> str:
    """A small mapping or list of plain scalars in flow style, nested too: ``{axis: 1, reduction: add}``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float_text(value, "float64")
    if isinstance(value, str) and value.replace("-", "").replace("_", "").isalnum() and not value[0].isdigit():
        if value not in ("true", "false", "null", "yes", "no", "on", "off", "y", "n"):
            return value
    return string(str(value))


def quoted(value: Any) -> str:
    """A scalar as a double-quoted YAML string, whatever its characters (``"openvino:Gather-8"``)."""
    return json.dumps(str(value), ensure_ascii=True)


def comment(text: str, indent: int = 0) -> list[str]:
    """``text`` as ``# `` comment lines indented by ``indent``, wrapped at spaces before WIDTH."""
    pad, out, line = " " * indent + "# ", [], text
    while len(pad) + len(line) > WIDTH and line.rfind(" ", 0, WIDTH - len(pad)) > 0:
        cut = line.rfind(" ", 0, WIDTH - len(pad))
        out.append(pad + line[:cut])
        line = line[cut + 1 :]
    return [*out, pad + line]


def _strings(key: str, items: list[str], indent: int) -> list[str]:
    """A list of strings, quoted, wrapped like a flow row."""
    pad = " " * indent
    return [f"{pad}{key}: " + _row([quoted(x) for x in items], indent + len(key) + 2)]


def _answers(key: str, mapping: dict[str, str], indent: int) -> list[str]:
    """A mapping of quoted keys to quoted strings: in flow style when it fits a line, else one ``"api": "what it
    did"`` per line (folded)."""
    pad = " " * indent
    one = f"{pad}{key}: {{" + ", ".join(f"{quoted(k)}: {quoted(v)}" for k, v in mapping.items()) + "}"
    if len(one) <= WIDTH:
        return [one]
    lines = [f"{pad}{key}:"]
    for k, v in mapping.items():
        head = f"{pad}  {quoted(k)}: "
        lines.append(head + string(v, len(head), indent + 4))
    return lines


def _finding(finding: dict[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    lines = [f"{pad}finding:", f"{pad}  by: {quoted(finding['by'])}"]
    lines += _answers("kinds", finding["kinds"], indent + 2) + _answers("apis", finding["apis"], indent + 2)
    if finding.get("agree"):
        lines += _strings("agree", finding["agree"], indent + 2)
    return lines


def case_lines(fields: dict[str, Any], why: list[str] | None = None) -> list[str]:
    """The YAML lines of one case entry (two-space list indentation, as in the hand-written files), with ``why`` as
    comment lines above it. ``inputs`` and a value ``expected`` are arrays (written exactly, in flow style); the
    other fields are written as the schema (harness/cases/schema.py) reads them. Keys keep the order of ``fields``."""
    lines = [line for text in why or [] for line in comment(text, 2)]
    lines.append(f"  - id: {fields['id']}")
    for key, value in fields.items():
        if key == "id":
            continue
        if key in ("source", "description"):
            lines.append(f"    {key}: {string(value, len(key) + 6)}")
        elif key == "inputs":
            lines.append("    inputs:")
            for name, arr in value.items():
                lines += input_block(name, arr, 6)
        elif key == "expected" and isinstance(value, np.ndarray):
            lines += block("expected", value, 4)
        elif key == "caveat":
            lines.append(f"    caveat: {{kind: {value['kind']}, why: {string(value['why'], 34)}}}")
        elif key == "finding":
            lines += _finding(value, 4)
        elif key != "attrs" or value:
            lines.append(f"    {key}: {flow(value)}")
    return lines


def file_text(header: list[str], op: str, cases: list[list[str]]) -> str:
    """A whole case file: ``header`` as comment lines (wrapped), then the cases (each from :func:`case_lines`),
    a blank line between two."""
    body = [f"op: {op}", "cases:"]
    for i, lines in enumerate(cases):
        body += ([""] if i else []) + lines
    return "\n".join([line for text in header for line in comment(text)] + body) + "\n"
