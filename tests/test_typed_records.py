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
NOT_RECORDS: dict[str, dict[str, str]] = {
    'adapters/convert/path.py': {
        'meta': "a converted program's metadata",
    },
    'adapters/convert/torch_executorch.py': {
        'call.facts': "a call's facts for the worker's answer",
    },
    'adapters/executorch.py': {
        'meta': "a lowered program's stored metadata (its ops and their placement)",
    },
    'adapters/tensorflow.py': {
        'details': "tf.config's device details",
    },
    'adapters/tvm.py': {
        'facts': "a call's facts for the worker's answer",
    },
    'harness/cases/load.py': {
        'm': 'a first_mismatches entry',
        'base': "a case's raw mapping from its YAML file",
    },
    'harness/cli.py': {
        'ev': "a memory checker's evidence line",
    },
    'harness/evidence/advisories.py': {
        'ev': "a memory checker's evidence line",
        'line': "a memory checker's evidence line",
        'r': "a release sweep's history entry",
    },
    'harness/evidence/cells.py': {
        'line': "a memory checker's evidence line",
    },
    'harness/evidence/memcheck.py': {
        'line': "a memory checker's evidence line",
    },
    'harness/evidence/verdict.py': {
        'line': "a memory checker's evidence line",
    },
    'harness/fuzz/run.py': {
        'out': 'a fuzzed case as YAML data',
        'spec': 'a fuzzed case as YAML data',
    },
    'harness/fuzz/writer.py': {
        'spec': 'a fuzzed case as YAML data',
    },
    'harness/history/store.py': {
        'r': "a release sweep's history entry",
        'rec': "a release sweep's history entry",
    },
    'harness/history/sweep.py': {
        'result.records[0]': "a release sweep's history entry",
    },
    'harness/importers/regression.py': {
        'res': "a worker's answer",
        'verdict': "the judge's verdict fields",
    },
    'harness/judge/baseline.py': {
        'baseline': "a baseline file's YAML",
        'entries[-1]': 'a baseline entry',
        'entry': 'a baseline entry',
    },
    'harness/judge/preservation.py': {
        'res': "a worker's answer (Result)",
        'verdict': "the judge's verdict fields",
        'who or {}': "the framework and variant of a path's source side",
    },
    'harness/judge/repeats.py': {
        'answer': "a worker's answer",
    },
    'harness/judge/verdict.py': {
        'fields': "the judge's verdict fields being made",
        'res': "a worker's answer (Result)",
    },
    'harness/report/agreement.py': {
        'df': 'a pandas frame of records',
        'runs': 'a pandas frame of records',
    },
    'harness/report/behaviour.py': {
        'change': 'an index provenance change',
        'parent': 'a behaviour row',
        'r': 'a behaviour row',
        'row': 'a behaviour row',
    },
    'harness/report/build.py': {
        'beh': 'a pandas frame of behaviour rows',
        'c': 'a column of the matrix',
        'change': 'an index provenance change',
        'cols': 'a pandas frame of columns',
        'df': 'a pandas frame of records',
        'failing': 'a pandas frame of records',
        'first': 'a behaviour row',
        'old[bkey(r)]': 'a behaviour row',
        'part': 'a pandas frame of records',
        'r': 'a behaviour row',
        'row': 'a behaviour row',
    },
    'harness/report/conversion.py': {
        'row': 'a behaviour row',
    },
    'harness/report/delegation.py': {
        'r': 'a delegation row',
        'row': 'a delegation row',
        's': 'a delegation summary',
    },
    'harness/report/drilldown.py': {
        'agreement': "the agreement section's data",
        'r': 'a behaviour row',
    },
    'harness/report/findings.py': {
        'g': 'a findings group',
        'i': 'a findings item',
        'r': 'a behaviour row',
    },
    'harness/report/history.py': {
        'f': "a history section's framework entry",
        'rec': "a release sweep's history entry",
    },
    'harness/report/page.py': {
        'c': 'a column of the matrix',
        'ctx': "a page's template context",
        'df': 'a pandas frame of records',
    },
    'harness/report/rows.py': {
        'row': 'a behaviour row',
    },
    'harness/report/site.py': {
        'evidence or {}': "a memory checker's evidence line",
        'f': "a history section's framework entry",
        'p': "a page's cell entry",
        'rec': "a release sweep's history entry",
        'row': 'a behaviour row',
    },
    'harness/report/unsafe.py': {
        'ev': "a memory checker's evidence line",
        'evidence': "a memory checker's evidence line",
        'evidence or {}': "a memory checker's evidence line",
    },
    'harness/report/upstream.py': {
        'evidence or {}': "a memory checker's evidence line",
    },
    'harness/run/isolation.py': {
        'a': "a worker's answer",
        'again': "a worker's answer",
        'first': "a worker's answer",
        'info': "a worker's answer to warming up",
        'payload': "a case's payload to a worker",
        'last': "a worker's answer",
        'prepared': "a worker's answer to preparing a call",
        'result': "a worker's answer",
    },
    'harness/run/repro.py': {
        'm': 'a first_mismatches entry',
    },
    'harness/run/runner.py': {
        'res': "a worker's answer",
    },
    'harness/run/timeouts.py': {
        'result': "a worker's answer",
    },
    'harness/run/worker.py': {
        'payload': "a case's payload to a worker",
        'result': "a worker's answer being made",
    },
    'vocab/variants.py': {
        'm': "a regular expression's match",
    },
}


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
