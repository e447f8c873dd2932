"""ExecuTorch's lowering of the seed cases as torch ships it, against the same lowering with the harness's two
changes to torch.export's bookkeeping (adapters/torch_export.py: the operator table reused, ``py_impl`` with its
annotations postponed), side by side.

Each side is a process of its own, both at once: it imports ExecuTorch, lowers one program to warm up, then lowers
the default ExecuTorch variant (portable kernels) of every seed case of ``cases/*.yaml`` that torch can say, the
conversion cache off. The claim: the patched side takes under 2/3 of the plain side's lowering time, and every
program's ``.pte`` bytes are the same on both sides.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from benchmarks.common import ROOT, Row

LIMIT = 2 / 3
QUICK_CASES = ("cases/gather_elements.yaml",)

# What each side runs: argv[1] "plain" (torch as shipped) or "patched"; argv[2:] the case files. Prints one JSON
# line: seconds spent lowering and each program's sha256 by (case, variant).
_SIDE = """
import hashlib, json, sys, time
from gather_scatter_conformance.adapters import torch_export
if sys.argv[1] == "plain":
    torch_export._installed = True  # reuse_op_tables() then does nothing: torch as shipped
from gather_scatter_conformance.adapters import executorch as ex
from gather_scatter_conformance.adapters.base import Unsupported
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run.runner import case_data
from gather_scatter_conformance.vocab import variants
from pathlib import Path
work = []
for path in sys.argv[2:]:
    for case in load_file(Path(path), path):
        if isinstance(case, Case):
            variant = ex.ADAPTER.variants(case.op)[0]
            work.append((case.nodeid, variant, case_data(case)))
def lower(data, variant):
    torch_variant, mode = variants.split(variant)
    return ex.program(data, torch_variant, ex.et.BACKENDS[str(mode)]).buffer
lower(work[0][2], work[0][1])  # imports and first-use set-up, on both sides
digests, start = {}, time.perf_counter()
for nodeid, variant, data in work:
    try:
        digests[f"{nodeid}[{variant}]"] = hashlib.sha256(lower(data, variant)).hexdigest()
    except Unsupported:
        continue
    except Exception as exc:  # the exporter's refusal is a result: the same on both sides
        digests[f"{nodeid}[{variant}]"] = f"error: {type(exc).__name__}"
print(json.dumps({"seconds": time.perf_counter() - start, "digests": digests}))
"""


def _start(side: str, cases: list[str]) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GSC_"))}
    env["GSC_CONVERSION_CACHE"] = "off"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.Popen([sys.executable, "-c", _SIDE, side, *cases], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def run(quick: bool = False) -> list[Row]:
    """Both sides at once: their lowering seconds, the ratio, and the programs whose bytes differ."""
    cases = list(QUICK_CASES) if quick else sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cases").glob("*.yaml"))
    started = time.perf_counter()
    procs = {side: _start(side, cases) for side in ("plain", "patched")}
    out = {}
    for side, proc in procs.items():
        stdout, _ = proc.communicate(timeout=7200)
        if proc.returncode != 0:
            raise RuntimeError(f"{side} side exited {proc.returncode}")
        out[side] = json.loads(stdout.strip().splitlines()[-1])
    plain, patched = out["plain"], out["patched"]
    differing = sorted(k for k in plain["digests"] if plain["digests"][k] != patched["digests"].get(k))
    ratio = patched["seconds"] / plain["seconds"]
    detail = (f"patched {patched['seconds']:.0f} s, plain {plain['seconds']:.0f} s; {len(plain['digests'])} programs, "
              f"{len(cases)} files; {time.perf_counter() - started:.0f} s in all")
    return [
        Row("lowering", "executorch: lowering with torch_export's changes / as torch ships (side by side)", ratio,
            f"< {LIMIT:.2f}", ratio < LIMIT, detail=detail),
        Row("lowering", "executorch: programs whose .pte bytes differ", float(len(differing)), "0",
            not differing, unit="", detail=", ".join(differing[:5])),
    ]
