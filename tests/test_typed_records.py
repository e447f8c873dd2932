"""Records are typed from the reader and the runner to the page (issue #37, "typed all the way"): outside the reader
and the writer, no result record is read by string key.

A record is a :class:`~gather_scatter_conformance.vocab.record.Record` wherever the package holds one, so
``rec["outcome"]`` would fail at run time; this test finds the string-key reads that could still be records: every
``x["<field>"]`` and ``x.get("<field>")`` whose key is a Record field. Each dict that shares such a key without being
a record (a worker's answer, a report row, a baseline entry...) is listed below with what it is; a read on anything
else fails, named by file and line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from gather_scatter_conformance.vocab.record import Record

PACKAGE = Path(__file__).resolve().parents[1] / "gather_scatter_conformance"
# Where a record is a JSON object: the reader and writer of results files, and the record's own module.
READER_WRITER = {"harness/run/records.py", "vocab/record.py"}
FIELDS = frozenset(Record.model_fields)

# module -> {the expression read by key (as ast.unparse writes it): what it is, not being a record}
NOT_RECORDS: dict[str, dict[str, str]] = {}


def string_key_reads(source: str) -> Iterator[tuple[int, str, str]]:
    """(line, the expression read, the key) for every read by a string key that is a Record field in ``source``:
    ``x["key"]`` (not as an assignment target) and ``x.get("key")`` / ``x.pop`` / ``x.setdefault``."""
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant)
                and node.slice.value in FIELDS):
            yield node.lineno, ast.unparse(node.value), str(node.slice.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("get", "pop", "setdefault") and node.args
              and isinstance(node.args[0], ast.Constant) and node.args[0].value in FIELDS):
            yield node.lineno, ast.unparse(node.func.value), str(node.args[0].value)


def _reads() -> Iterator[tuple[str, int, str, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module not in READER_WRITER:
            for line, expr, key in string_key_reads(path.read_text(encoding="utf-8")):
                yield module, line, expr, key


def test_no_record_is_read_by_string_key_outside_the_reader_and_writer() -> None:
    reads = list(_reads())
    suspects = [f"gather_scatter_conformance/{m}:{line}: {expr}[{key!r}]" for m, line, expr, key in reads
                if expr not in NOT_RECORDS.get(m, {})]
    assert not suspects, (f"{len(suspects)} read(s) by string key of a Record field on something that may be a "
                          "record (read its attribute, or list the dict in NOT_RECORDS with what it is):\n"
                          + "\n".join(suspects))
    print(f"{len(reads)} string-key read(s) of a Record field name, all on dicts that are not records")


def test_every_listed_dict_is_still_read() -> None:
    # An entry whose reads are gone would let a record of that name through unseen later.
    read = {(m, expr) for m, _, expr, _ in _reads()}
    stale = [f"{m}: {expr}" for m, names in NOT_RECORDS.items() for expr in names if (m, expr) not in read]
    assert not stale, "NOT_RECORDS lists dicts no longer read by a record field's key:\n" + "\n".join(stale)


def test_the_count_finds_each_kind_of_read() -> None:
    source = ("def f(rec, row):\n    a = rec['outcome']\n    b = rec.get('label')\n    rec['verdict'] = 1\n"
              "    c = row['not_a_field']\n    d = (rec or {}).get('device', 'cpu')\n")
    assert list(string_key_reads(source)) == [(2, "rec", "outcome"), (3, "rec", "label"),
                                              (6, "rec or {}", "device")]
