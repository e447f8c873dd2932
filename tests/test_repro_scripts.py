"""Every finding carries a repro that runs: for each adapter variant that runs here, a finding is measured anew, its
standalone script written (harness.run.repro.script) and run in that framework's own interpreter, where it must exit
0, i.e. the recorded behaviour reproduced. MXNet's scripts run in .venv-mxnet.

The findings are probes whose baseline label differs from the canonical one (baselines/<framework>.yaml): one per
variant (one twin of each kind a framework), measured again here, so a script is judged against what the harness
observes today. A baseline label that names alternatives (``zero|garbage``: an unchecked read) is passed to the
script, which then asserts the class of what it sees, not its bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from _scripts import run_scripts

from gather_scatter_conformance import adapters, resources
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge import baseline
from gather_scatter_conformance.harness.judge.verdict import is_finding
from gather_scatter_conformance.harness.run.isolation import Isolated
from gather_scatter_conformance.harness.run.repro import script
from gather_scatter_conformance.harness.run.runner import execute
from gather_scatter_conformance.vocab.variants import twin_of

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = adapters.venv_pythons(ROOT)
GSC = [sys.executable, "-m", "gather_scatter_conformance"]


def _frameworks() -> list[str]:
    # A converter path's baseline holds preservation verdicts, not labels: its repro is tests/test_convert_paths.py's.
    return [n for n in adapters.names() if (adapters.is_available(n) or n in PYTHONS)
            and adapters.get(n).unavailable() is None and not adapters.is_path(n)]


def _probes() -> dict[str, Case]:
    out = {}
    for path in sorted((ROOT / "cases" / "probes").glob("*.yaml")):
        for case in load_file(path, path.relative_to(ROOT).as_posix()):
            if isinstance(case, Case):
                out[case.nodeid] = case
    return out


def _candidates(known: dict, probes: dict[str, Case]) -> dict[str, list[str]]:
    """variant -> probe node ids whose label in the baseline ``known`` is not canonical (and not a hang), in file
    order. A label naming alternatives (``zero|garbage``: the harness measured that probe's values differ from run
    to run, an unchecked read) is kept: its script asserts their class."""
    from gather_scatter_conformance.harness.judge.dimensions import conforms

    out: dict[str, list[str]] = defaultdict(list)
    for key, label in known["labels"].items():
        nodeid, _, variant = key.partition("[")
        variant = variant.rstrip("]")
        case = probes.get(nodeid)
        if case is None or "@" in variant or label == "unsupported" or "timeout" in label.split("|"):
            continue
        if not conforms(case.op, case.spec.dimension, label):
            out[variant].append(nodeid)
    return out


@pytest.mark.framework
@pytest.mark.slow
@pytest.mark.parametrize("framework", _frameworks())
def test_a_repro_of_a_finding_runs_for_every_variant(framework: str, tmp_path: Path) -> None:
    probes = _probes()
    known = baseline.load(resources.baselines_dir(), framework)
    executor = Isolated(PYTHONS, 120.0)
    written: dict[str, str] = {}
    twins_written: set[str] = set()
    try:
        for variant, nodeids in sorted(_candidates(known, probes).items()):
            # One twin of each kind (constant indices, dynamic shapes) a framework: its script is its parent's with
            # the indices or the shapes written otherwise, the same code for every twin of the kind.
            twin = twin_of(variant)
            if twin and twin[1] in twins_written:
                continue
            for nodeid in nodeids[:3]:  # the first whose finding shows again today, with its baseline label
                record = execute(probes[nodeid], framework, variant, executor)
                if not is_finding(record) or record.outcome == "timeout" or not record.native:
                    continue
                if baseline.check(known, baseline.item_key(nodeid, variant), record.label or "",
                                  record.framework_version):
                    continue  # not its baseline label: an unchecked read found other bytes (garbage read as NaN)
                key = baseline.item_key(nodeid, variant)
                alternatives = baseline.label_at(known, key, record.framework_version)
                path = tmp_path / f"{variant.replace('/', '_')}.py"
                path.write_text(script(probes[nodeid], record, alternatives if "|" in (alternatives or "") else None))
                written[str(path)] = f"{variant}: {nodeid} ({record.outcome}, {record.label}; {alternatives})"
                if twin:
                    twins_written.add(twin[1])
                break
    finally:
        executor.close()
    if not written:
        pytest.skip(f"{framework}: no probe finding in its baseline")
    python = PYTHONS.get(framework, sys.executable)
    # The first script in a process of its own, exactly as a user runs it; the others each in a fresh child of one
    # process that imported what they import (tests/_scripts.py): a framework's import is most of a script's time.
    first, *others = written
    proc = subprocess.run([python, first], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    results = {first: "ok" if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr[-600:]}"}
    if others:
        results.update(run_scripts(python, others, tmp_path))
    failed = {written[p]: r for p, r in results.items() if r != "ok"}
    print(f"{framework}: {len(results)} repro script(s) ran, {len(results) - len(failed)} reproduced:",
          *written.values(), sep="\n  ")
    assert not failed, failed


DEFAULT_AXIS_PROBE = """\
op: GatherElements
cases:
  - id: ge-default-axis
    source: "test: numpy's take_along_axis defaults to the last axis, ONNX to axis 0"
    dimension: default-axis
    omit: [axis]
    inputs:
      data: {value: [[1, 2, 3], [4, 5, 6]], dtype: float32}
      indices: {value: [[1, 0, 1], [0, 1, 0]], dtype: int64}
"""


@pytest.mark.slow
def test_harness_repro_writes_a_script_that_reproduces_the_finding(tmp_path: Path) -> None:
    from gather_scatter_conformance.harness.report.page import generate

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "probe.yaml").write_text(DEFAULT_AXIS_PROBE)
    run = subprocess.run([*GSC, "run", "mine", "--framework", "numpy,onnx-reference", "--results", "r.jsonl"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    out = tmp_path / "repro.py"
    made = subprocess.run([*GSC, "repro", "r.jsonl", "--case", "ge-default-axis", "--framework", "numpy", "--out",
                           str(out)], cwd=tmp_path, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    text = out.read_text()
    assert "np.take_along_axis(data, indices)" in text and "label default-axis = last" in text
    ran = subprocess.run([sys.executable, str(out)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # A conforming record has nothing to reproduce: said, with a non-zero status.
    none = subprocess.run([*GSC, "repro", "r.jsonl", "--case", "ge-default-axis", "--framework", "onnx-reference"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert none.returncode == 2 and "findings only" in none.stderr
    # The report's drill-down carries the same script for the finding.
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        paths = generate([tmp_path / "r.jsonl"], tmp_path / "report")
    finally:
        os.chdir(here)
    html = paths["index.html"].read_text()
    evidence = paths["report-data.js"].read_text()  # the page's evidence, loaded on its first drill-down
    assert "np.take_along_axis(data, indices)" in evidence and "Repro script" in html
    # The finding's cell page carries the whole script, and its upstream issue the same one.
    cells = [json.loads(p.read_text()) for p in (tmp_path / "report" / "GatherElements").rglob("default-axis.json")]
    finding = next(c for c in cells if c["framework"] == "numpy")
    assert "np.take_along_axis(data, indices)" in finding["cases"][0]["repro"]
    assert finding["cases"][0]["repro"].rstrip("\n") in finding["upstream"]


def test_a_page_names_inputs_too_large_to_carry(tmp_path: Path) -> None:
    from gather_scatter_conformance.harness.run.repro import script_head

    (tmp_path / "big.yaml").write_text(
        "op: Gather\ncases:\n  - id: big\n    source: test\n"
        "    inputs: {data: {fill: {value: 1.0, shape: [300, 100]}}, indices: [0]}\n")
    (case,) = load_file(tmp_path / "big.yaml")
    assert "np.frombuffer(base64.b64decode(" in script_head(case)  # the full script has every element
    page = script_head(case, max_elements=1000)
    assert "data = ...  # float32 array of shape [300, 100]" in page and "gsc repro" in page


def test_the_script_server_runs_each_script_as_main_in_its_own_child(tmp_path: Path) -> None:
    """tests/_scripts.py: each script runs as __main__ in a child of its own (a failure, an exit status and a
    crash are that script's), and a module a script imports after setting the environment is not imported before
    it (Keras reads KERAS_BACKEND at import): scripts that set the same environment literally share one import of
    it, made with that environment."""
    (tmp_path / "envmod.py").write_text("import os\nSEEN = os.environ.get('GSC_TEST_ENV')\n")
    backend_log = tmp_path / "backend.log"  # each process that imports backendmod, and the backend it saw
    (tmp_path / "backendmod.py").write_text("import os\nSEEN = os.environ.get('GSC_TEST_BACKEND')\n"
                                            f"open({str(backend_log)!r}, 'a').write(f'{{SEEN}}\\n')\n")
    # A module a script imports inside run() (where repro scripts import their framework) is imported once, by the
    # server, not once per child: it notes each process that imports it.
    log = tmp_path / "heavy.log"
    (tmp_path / "heavymod.py").write_text(f"import os\nopen({str(log)!r}, 'a').write(f'{{os.getpid()}}\\n')\n")
    scripts = {
        "nested.py": "def run():\n    import heavymod\n    return heavymod\nrun()\n",
        "nested2.py": "def run():\n    import heavymod\n    return heavymod\nrun()\n",
        "ok.py": "import envmod\nassert __name__ == '__main__'\nprint('ran')\n",
        "env.py": "import os\nos.environ['GSC_TEST_ENV'] = 'set'\nimport envmod\nassert envmod.SEEN == 'set'\n",
        "fails.py": "assert 1 == 2, 'not reproduced'\n",
        "exits.py": "import sys\nsys.exit(3)\n",
        "dies.py": "import os, signal\nos.kill(os.getpid(), signal.SIGABRT)\n",
        "state.py": "import envmod\nassert not hasattr(envmod, 'TOUCHED')\nenvmod.TOUCHED = True\n",
        "state2.py": "import envmod\nassert not hasattr(envmod, 'TOUCHED')\nenvmod.TOUCHED = True\n",
        **{f"backend_{i}.py": ("import os\ndef run():\n    os.environ['GSC_TEST_BACKEND'] = "
                               f"{backend!r}\n    import backendmod\n"
                               f"    assert backendmod.SEEN == {backend!r}\nrun()\n")
           for i, backend in enumerate(["jax", "jax", "torch", "torch", "jax"])},
        "backend_other.py": ("import os\nos.environ['GSC_TEST_BACKEND'] = os.environ.get('X', 'numpy')\n"
                             "import backendmod\nassert backendmod.SEEN == 'numpy'\n"),
    }
    for name, text in scripts.items():
        (tmp_path / name).write_text(text)
    import os

    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env_path}" if env_path else str(tmp_path)
    try:
        got = run_scripts(sys.executable, [str(tmp_path / n) for n in scripts], tmp_path)
    finally:
        if env_path:
            os.environ["PYTHONPATH"] = env_path
        else:
            del os.environ["PYTHONPATH"]
    by_name = {Path(p).name: r for p, r in got.items()}
    assert by_name["ok.py"] == by_name["env.py"] == by_name["state.py"] == by_name["state2.py"] == "ok", by_name
    assert by_name["nested.py"] == by_name["nested2.py"] == "ok", by_name
    assert len(log.read_text().split()) == 1  # the server's import, inherited by both children
    assert {r for n, r in by_name.items() if n.startswith("backend_")} == {"ok"}, by_name
    # one import for the two jax scripts and the third, one for the torch pair, one in the child that set it otherwise
    assert sorted(backend_log.read_text().split()) == ["jax", "numpy", "torch"]
    assert by_name["fails.py"].startswith("exit 1:") and "not reproduced" in by_name["fails.py"]
    assert by_name["exits.py"].startswith("exit 3") and by_name["dies.py"].startswith("exit -6")
