"""The result cache: a record measured before is reused when nothing it depends on has changed.

A run measures every case on every framework variant; most of them give the same record night after night. An
entry is one JSON file per key, the record as it was measured, in ``$GSC_RESULT_CACHE`` (a directory; ``off``
disables it), else ``$XDG_CACHE_HOME/gather-scatter-conformance/results`` (``~/.cache/...``): beside the parse
cache (``cases/``) and the conversion cache (``conversions/``), with the same location rule. Files are written
atomically (a temporary file, then ``os.replace``), so pytest-xdist workers share one directory safely. A missing,
unreadable or corrupt entry is a miss; a directory that cannot be written is ignored.

The key (:func:`key`) hashes everything a record depends on:

* the case's content: its id and file name (the record names them), its mapping as written (op, attrs, opset,
  omit, repeat, dimension, expected, tolerance, tags...) and its input arrays as the worker gets them (dtype, shape,
  bytes: generated inputs included);
* the framework, variant and device;
* the code: every source file of the harness packages a record is made by (``adapters``, ``vocab``,
  ``harness/cases``, ``harness/reference``, ``harness/judge``, ``harness/run``) and the known file of the framework
  (a record carries its known-deviation annotation). All of them rather than the adapter's own module and its
  imports: adapters share helpers (onnx_graph, convert/, base) and the judge decides the verdict, so tracing the
  imports would be fragile for little gain; the cost is that editing any of them invalidates every entry;
* the framework's packages: the interpreter that runs it (another one for MXNet's ``.venv-mxnet``) and the names
  (versions included) and modification times of every ``*.dist-info``/``*.egg-info`` on its ``sys.path``, listed
  once per interpreter per process; the version a worker reports is not known before it runs;
* the environment variables that change what a framework does (``GSC_*`` but the cache locations, ``DEV``,
  ``KERAS_BACKEND``, thread counts, visible devices);
* the platform (``platform.platform()``, machine, Python version) and the harness version.

What is never reused is :func:`reusable`'s business. A reused record gets ``cached: true`` and keeps its original
``time`` and ``duration_s``.

A hang is never reused either, but it is kept (:func:`keeps`): a cell whose entry is a hang (no result within the
full case timeout, on a first try and on a second one in a fresh process) is measured again, and a first try that
hangs again is then recorded as a hang without the second full-timeout try, where the entry's case timeout was at
least this run's (:func:`hung_before`,
harness.run.isolation.Isolated.run). The second try tells a hang from a stall of a loaded machine; the entry is
that second witness, made by the same code, packages, platform and case. Each hang then costs its first try only.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.harness.judge.repeats import suspect
from gather_scatter_conformance.vocab.dimensions import is_memory_unsafe
from gather_scatter_conformance.vocab.record import Record, harness_version

if TYPE_CHECKING:
    from gather_scatter_conformance.harness.cases.load import Case

FORMAT = 1  # bump when what an entry holds, or what the key covers, changes
ENV = "GSC_RESULT_CACHE"
PACKAGE = Path(__file__).resolve().parents[2]  # gather_scatter_conformance/
# The packages whose code makes a record: the adapters' calls, the record's vocabulary, case loading, the
# reference result, the verdict and label, and the runner and its workers.
CODE = ("adapters", "vocab", "harness/cases", "harness/reference", "harness/judge", "harness/run")
# Environment variables that change a framework's answer (GSC_* ones are all included but these locations).
_ENV_NAMES = ("DEV", "KERAS_BACKEND", "TVM_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
              "CUDA_VISIBLE_DEVICES", "JAX_PLATFORMS", "JAX_ENABLE_X64", "TF_ENABLE_ONEDNN_OPTS")
_NOT_ENV = ("GSC_RESULT_CACHE", "GSC_CONVERSION_CACHE", "GSC_CASE_CACHE", "GSC_ENV_CACHE", "GSC_JAX_CACHE",
            "GSC_INDUCTOR_CACHE")
_NEVER_OUTCOMES = ("crash", "timeout", "harness-error")
# Devices that run on this machine's CPU, so the key (platform, packages, environment) says what answered: "cpu",
# and ONNX Runtime's OpenVINO execution provider ("openvino"), which the adapter starts without a device_type, so it
# runs on OpenVINO's CPU plugin ("By default, Intel CPU is used to run inference":
# https://onnxruntime.ai/docs/api/python/ReadMeOV.html). A GPU's record is not reused: the key cannot see which GPU
# answered.
HOST_DEVICES = ("cpu", "openvino")
_NONDETERMINISTIC_LABELS = ("nondeterministic",)


def reusable(record: Record, baseline_label: str | None) -> bool:
    """True when ``record`` may be reused for its cell instead of measuring it again; checked both when an entry
    is stored and when it is read (a baseline may have changed in between).

    Never reused (always measured): a record whose outcome is crash, timeout or harness-error (a process's fate,
    or the harness's failure); a memory-unsafe label (``vocab.dimensions.is_memory_unsafe``: garbage, alias,
    crash:...: what lies in memory decides it) or a nondeterministic one; a record whose repeated runs disagreed
    (``distinct_outputs`` > 1) or that was repeated at all (it has a ``distribution``: its first run was suspect,
    harness.judge.repeats); a record off the CPU (:data:`HOST_DEVICES`: the key
    cannot see which accelerator answered); and any cell whose ``baseline_label`` (the label its baseline gives
    it, ``harness.judge.baseline.label_at``; None where there is none) flipped (holds ``|``) or is memory-unsafe.
    """
    if record.outcome in _NEVER_OUTCOMES or record.outcome not in ("ok", "error", "unsupported"):
        return False
    if record.device not in HOST_DEVICES:
        return False
    label = record.label
    if is_memory_unsafe(label) or (label or "") in _NONDETERMINISTIC_LABELS or "|" in (label or ""):
        return False
    if (record.distinct_outputs or 1) > 1 or record.distribution:
        return False
    return not suspect(baseline_label)


def keeps(record: Record, baseline_label: str | None) -> bool:
    """True when ``record`` is stored for its cell: a reusable one (:func:`reusable`), or a hang (outcome timeout:
    both tries hung) that the next run's first try may confirm alone (:func:`hung_before`)."""
    return reusable(record, baseline_label) or _hang(record.outcome, record.distribution)


def _hang(outcome: str, distribution: dict[str, int] | None) -> bool:
    """True for the record of a cell that hung on every run it had (a repeated cell's ``distribution``: each a
    hang)."""
    return outcome == "timeout" and (not distribution or set(distribution) == {"timeout"})


def hung_before(stored: Record | None, stored_timeout_s: float | None, timeout_s: float) -> str | None:
    """When ``stored`` (an entry's record, :func:`read`) is a hang recorded with a case timeout
    (``stored_timeout_s``) of at least ``timeout_s`` (so it had no result within this run's limit either), the time
    it was recorded; else None."""
    if stored is None or not _hang(stored.outcome, stored.distribution):
        return None
    if stored_timeout_s is None or stored_timeout_s < timeout_s:
        return None
    return stored.time or "an earlier run"


def directory(given: str | os.PathLike[str] | None = None) -> Path | None:
    """Where entries live: ``given`` (``--gsc-cache-dir``), else ``$GSC_RESULT_CACHE`` (``off`` disables it: None),
    else ``$XDG_CACHE_HOME/gather-scatter-conformance/results``."""
    if given:
        return Path(given)
    from gather_scatter_conformance.resources import cache_dir

    return cache_dir(ENV, "results")


@functools.cache
def code_fingerprint() -> str:
    """A digest of every source file of the packages in :data:`CODE` (see the module's docstring for why all)."""
    h = hashlib.sha256(f"format {FORMAT}\n".encode())
    for sub in CODE:
        for path in sorted((PACKAGE / sub).rglob("*.py")):
            h.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


@functools.cache
def packages_fingerprint(python: str) -> str:
    """A digest of interpreter ``python`` (its path) and the distributions installed on its ``sys.path``: each
    ``*.dist-info``/``*.egg-info`` name (which holds the version) and modification time. Computed once per
    interpreter per process; another interpreter than this one is asked for its ``sys.path`` (one short
    subprocess)."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        paths = list(sys.path)
    else:
        try:
            out = subprocess.run([python, "-c", "import sys, json; print(json.dumps(sys.path))"],
                                 capture_output=True, text=True, timeout=60, check=True).stdout
            paths = json.loads(out.strip().splitlines()[-1])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            paths = []  # an interpreter that does not answer: its path alone
    h = hashlib.sha256(f"{python}\n".encode())
    for entry in dict.fromkeys(paths):
        try:
            names = sorted(n for n in os.listdir(entry or ".") if n.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
        h.update(f"{entry}\n".encode())
        for name in names:
            with contextlib.suppress(OSError):
                h.update(f"{name}:{os.stat(os.path.join(entry or '.', name)).st_mtime_ns}\n".encode())
    return h.hexdigest()


@functools.cache
def _platform() -> list[str]:
    return [platform.platform(), platform.machine(), platform.python_version(), harness_version()]


def environment_fingerprint() -> str:
    """The platform, the harness version and the environment variables that change a framework's answer."""
    env = {k: v for k, v in os.environ.items() if (k.startswith("GSC_") and k not in _NOT_ENV) or k in _ENV_NAMES}
    return json.dumps([*_platform(), sorted(env.items())])


def case_digest(case: Case) -> str:
    """A digest of ``case``'s content: its id, file and tags, its mapping as written, and its input arrays as a
    worker gets them (dtype, shape and bytes). Kept on the case: every framework and variant shares it."""
    if "result_cache_digest" not in case.memo:
        from gather_scatter_conformance.harness.run.runner import payload

        job = payload(case)
        h = hashlib.sha256()
        h.update(json.dumps([case.file, case.id, case.op, list(case.tags), case.dimension, case.raw,
                             {k: v for k, v in job.items() if k not in ("inputs", "device")}],
                            sort_keys=True, default=repr).encode())
        for name in sorted(job["inputs"]):
            enc = job["inputs"][name]
            h.update(json.dumps([name, enc["dtype"], enc["shape"], enc.get("items")], default=repr).encode())
            h.update(enc.get("bytes") or b"")
        case.memo["result_cache_digest"] = h.hexdigest()
    return str(case.memo["result_cache_digest"])


def _known_fingerprint(framework: str) -> str:
    from gather_scatter_conformance.harness.judge import known

    return _file_digest(known.directory() / f"{framework}.yaml")


@functools.cache
def _file_digest(path: Path) -> str:
    """The digest of a file read once per process ('' for none)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


@functools.cache
def adapter_fingerprint(framework: str) -> str:
    """A digest of the adapter's own source file where it lies outside this package (a project's or another
    distribution's adapter, registered by entry point); empty for the package's own (:func:`code_fingerprint`)."""
    import inspect

    from gather_scatter_conformance import adapters

    try:
        source = Path(inspect.getsourcefile(type(adapters.get(framework))) or "").resolve()
        if source.is_relative_to(PACKAGE):
            return ""
        return hashlib.sha256(source.read_bytes()).hexdigest()
    except Exception:  # an adapter that does not load or has no file: the run reports that, not the cache
        return "unknown"


def key(case: Case, framework: str, variant: str, device: str, python: str, environment: str | None = None) -> str:
    """The cache key of ``case`` on ``framework``/``variant`` on ``device``, the framework run by ``python``, in
    ``environment`` (:func:`environment_fingerprint`, read now where not given)."""
    h = hashlib.sha256()
    env = environment_fingerprint() if environment is None else environment
    for part in (code_fingerprint(), packages_fingerprint(python), env, case_digest(case),
                 framework, variant, device, _known_fingerprint(framework), adapter_fingerprint(framework)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def _path(where: Path, entry_key: str) -> Path:
    return where / entry_key[:2] / f"{entry_key}.json"


def get(where: Path | None, entry_key: str) -> Record | None:
    """The record stored under ``entry_key``, or None on a miss (including an unreadable or corrupt entry, or one
    that is not a valid record: read as a results line is, vocab.record). The caller decides with :func:`reusable`
    whether to use it."""
    return read(where, entry_key)[0]


def read(where: Path | None, entry_key: str) -> tuple[Record | None, float | None]:
    """The record stored under ``entry_key`` (as :func:`get` gives it) and the case timeout it ran under (None
    where the entry does not say it as a number), from one read of the entry."""
    value = _entry(where, entry_key)
    limit = value.get("timeout_s") if value else None
    if not isinstance(limit, (int, float)) or isinstance(limit, bool):
        limit = None
    return _record(value), limit


def _record(entry: dict[str, Any] | None) -> Record | None:
    """The record an entry holds, read as a results line is (vocab.record); None where it is not a valid one."""
    stored = entry.get("record") if entry else None
    if not isinstance(stored, dict):
        return None
    from pydantic import ValidationError

    try:
        return Record.read(stored)
    except ValidationError:
        return None


def _entry(where: Path | None, entry_key: str) -> dict[str, Any] | None:
    """The entry stored under ``entry_key`` as read (its format and key checked), or None."""
    if where is None:
        return None
    try:
        with open(_path(where, entry_key), encoding="utf-8") as fh:
            value = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("format") != FORMAT or value.get("key") != entry_key:
        return None
    return value


def put(where: Path | None, entry_key: str, record: Record, timeout_s: float | None = None) -> None:
    """Store ``record`` under ``entry_key`` atomically, with the case timeout it ran under (``timeout_s``: what
    a hang's entry must say, :func:`hung_before`); a directory that cannot be written is ignored."""
    if where is None:
        return
    target = _path(where, entry_key)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"format": FORMAT, "key": entry_key, "record": record.dump(), "timeout_s": timeout_s}, fh,
                          default=str, allow_nan=True)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise
    except OSError:
        pass


def reused(record: Record) -> Record:
    """The record a cell gets from the cache: the stored one (its ``time`` and ``duration_s`` kept), marked
    ``cached: true``."""
    out = record.model_copy()
    out.cached = True
    return out
