"""A converter path as an adapter: run the source natively, convert it, run the converted model on the target.

A path's variants are the source framework's API variants it converts (torch ``index_put``, tensorflow
``gather/function``). For one case, :meth:`ConversionPath.prepare` returns a :class:`~adapters.base.Call` whose run

1. runs the source API natively, through the source's own adapter, and keeps what happened: the preservation
   verdict (gather_scatter_conformance.harness.judge.preservation) compares the target's outcome with it;
2. converts the source function, traced on the case's shapes and dtypes with in-range example indices (all zeros:
   a tracer that executes the function must not trip over the case's out-of-range values; the exported graph
   depends on shapes and dtypes only), cached by (source, converter, their versions, variant, attributes, input
   signature), in memory and on disk, so that repeated runs convert nothing again;
3. runs the converted model in the target runtime on the case's own inputs.

What the run learns goes into ``Call.facts``: ``ops`` (the converted graph's operators, e.g.
``ScatterND(reduction=add)``) and ``conversion`` (the path, versions, options, the source's result, the stage
reached). A converter that fails raises :class:`ConversionFailed`: a recorded result, never the run's end. A
target that cannot run on this machine (Core ML off macOS) raises :class:`NotRun` once the model is converted: the
record keeps the converted program's ``ops`` and its verdict is ``conversion-only`` (stage ``converted``).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, Unsupported
from gather_scatter_conformance.adapters.cache import LRU

CACHE_ENV = "GSC_CONVERSION_CACHE"  # a directory; "off" keeps conversions in memory only
FORMAT = 2  # bump when what is stored changes (2: source functions take the case inputs in the operator's order)


class ConversionFailed(Exception):
    """The converter rejected or broke on the source: the path's result for the case (stage ``convert``)."""


class NotRun(Unsupported):
    """The model converted, but its target cannot run here (the reason, one line): raised by
    :meth:`ConversionPath.runner`; the record keeps the converted program's operators (stage ``converted``,
    preservation and verdict ``conversion-only``)."""


@dataclass
class Converted:
    """A converter's output: what the target runs, the graph's operators, and facts about the conversion."""

    artifact: Any  # an ONNX ModelProto, TFLite flatbuffer bytes, an openvino.Model, a SavedModel directory, ...
    ops: list[str]
    details: dict[str, Any] = field(default_factory=dict)  # e.g. {"opset": 18}


def cache_dir() -> Path | None:
    """Where converted models are kept between runs: ``$GSC_CONVERSION_CACHE``, else
    ``$XDG_CACHE_HOME/gather-scatter-conformance/conversions``; None when set to ``off``."""
    from gather_scatter_conformance.resources import cache_dir as location

    return location(CACHE_ENV, "conversions")


def example_inputs(case: CaseData) -> dict[str, np.ndarray]:
    """The inputs a converter traces with: the case's own arrays, indices replaced by zeros of the same shape and
    dtype (in range for any non-empty axis), so a tracer that executes the function cannot fail on the values."""
    out = dict(case.inputs)
    indices = out.get("indices")
    if indices is not None and indices.dtype.kind in "iub":
        out["indices"] = np.zeros_like(indices)
    return out


def signature(case: CaseData) -> tuple[Any, ...]:
    """What a conversion depends on besides the path and variant: operator, attributes, omitted attributes, opset
    and the inputs' names, shapes and dtypes (never their values)."""
    return (case.op, tuple(sorted((k, repr(v)) for k, v in case.attrs.items())), tuple(case.omit), case.opset,
            tuple((n, tuple(v.shape), str(v.dtype)) for n, v in case.inputs.items()))


class ConversionPath(Adapter):
    """Base of converter paths. Subclasses set the class attributes and implement the methods marked abstract."""

    source: str = ""  # the source framework's adapter name (adapters.names())
    source_id: str = ""  # the source as the path's name says it, where that differs (onnx for onnx-reference)
    converter: str = ""  # the converter as a user names it: "torch.onnx.export(dynamo=True)"
    converter_id: str = ""  # its short name in the path's name: "onnx-dynamo"
    target: str = ""  # the runtime that runs the converted model: "onnxruntime"
    options: ClassVar[dict[str, Any]] = {}  # the converter's options as passed (opset, flags)
    converter_requires: tuple[str, ...] = ()  # the converter's own top-level modules
    # The source variants a path converts: those invoked in this mode (None: plainly, the eager ones; tensorflow's
    # paths convert the tf.function graph, "function"); compiled modes (jit, compile, static) are no source to trace.
    source_mode: str | None = None
    mapping = "docs/conversion.md"
    extra = "convert"  # the converters; the source and the target come with their own extras
    focus_only = True  # a conversion costs 0.05-5 s: paths run on probe, regression and seed cases only

    def __init__(self) -> None:
        self.conversions: LRU[Converted | ConversionFailed] = LRU(256)  # by conversion key
        self.runners: LRU[Any] = LRU(64)  # the target's compiled model, by conversion key

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.source_id or self.source}~{self.converter_id}~{self.target}"

    @property
    def requires(self) -> tuple[str, ...]:  # type: ignore[override]
        """The source's modules, the converter's and the target's (asked of their adapters; nothing imported)."""
        from gather_scatter_conformance import adapters

        return tuple(dict.fromkeys((*adapters.get(self.source).requires, *self.converter_requires,
                                    *adapters.get(self.target).requires)))

    # --- what a subclass provides ----------------------------------------------------------------------------

    def source_variants(self, op: str) -> list[str]:
        """The source adapter's variants this path converts, those in :attr:`source_mode` (the first is the
        default; [] where the source does not map ``op``). Imports no framework."""
        from gather_scatter_conformance import adapters
        from gather_scatter_conformance.vocab import variants

        return [v for v in adapters.get(self.source).variants(op) if variants.mode(v) == self.source_mode]

    def converter_version(self) -> str:
        """The converter's version (with that of what it relies on, e.g. ``2.13.0, onnxscript 0.7.2``)."""
        raise NotImplementedError

    def warm(self) -> None:
        """The versions asked, and the converter imported (:meth:`import_converter`): the template that forks a
        child per risky case is forked after this, so each child starts with it loaded (importing coremltools takes
        16 s here, a cost every child paid again). Importing starts no framework's thread pool; running would
        (harness.run.worker)."""
        self.version()
        self.import_converter()

    def import_converter(self) -> None:
        """Import the converter as :meth:`convert` does (by default its modules, ``converter_requires``)."""
        import importlib

        for module in self.converter_requires:
            importlib.import_module(module)

    def versions(self) -> dict[str, str]:
        """``{"source": ..., "converter": ..., "target": ...}``: the source's and target's as their own adapters
        report them, the converter's from :meth:`converter_version`."""
        from gather_scatter_conformance import adapters

        return {"source": adapters.get(self.source).version(), "converter": self.converter_version(),
                "target": adapters.get(self.target).version()}

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        """Convert the source's ``variant`` call of ``case``, traced on ``example``. Any exception is the
        converter's failure (the caller wraps it in ConversionFailed)."""
        raise NotImplementedError

    def runner(self, converted: Converted) -> Any:
        """The target's loaded/compiled model for ``converted`` (cached by the caller); :class:`NotRun` where the
        target cannot run on this machine."""
        raise NotImplementedError

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """Run ``runner`` on the case's inputs in the target runtime; its first output as a NumPy array."""
        raise NotImplementedError

    def repro(self, case: CaseData, variant: str) -> str:
        """Statements that convert and run, after the source's own statements (``Call.source``) have made the
        source tensors / function: they assign the target's output, as a NumPy array, to ``result``."""
        raise NotImplementedError

    def target_facts(self, runner: Any) -> dict[str, Any]:
        """What the target's last :meth:`execute` of ``runner`` learnt about itself, read from the runtime (e.g.
        :func:`adapters.base.delegation`'s ``providers``): merged into ``Call.facts``. None by default."""
        return {}

    def ops_of(self, converted: Converted) -> list[str]:
        """The operators this path's target runs (a conversion shared by two targets may hold one list each)."""
        return converted.ops

    def dump(self, artifact: Any) -> bytes | None:
        """The artifact as bytes for the disk cache (None: kept in memory only)."""
        return None

    def load(self, blob: bytes) -> Any:
        """The artifact back from :meth:`dump`'s bytes."""
        raise NotImplementedError

    # --- the adapter ---------------------------------------------------------------------------------------------

    def version(self) -> str:
        v = self.versions()
        return f"{self.source} {v['source']}; {self.converter_id} {v['converter']}; {self.target} {v['target']}"

    def variants(self, op: str) -> list[str]:
        return self.source_variants(op)

    def has_data_input(self, op: str, variant: str) -> bool:
        # The converted model computes what the source API did: a data-less source (tf.scatter_nd) converts to a
        # scatter into the zeros it made, not into a data input.
        from gather_scatter_conformance import adapters

        return adapters.get(self.source).has_data_input(op, variant)

    def is_slow(self, variant: str) -> bool:
        return True

    def describe_path(self) -> dict[str, Any]:
        """The path's static description (no framework imported): name, source, converter, options, target."""
        return {"path": self.name, "source": self.source_id or self.source, "converter": self.converter,
                "converter_id": self.converter_id, "options": dict(self.options), "target": self.target}

    def prepare(self, case: CaseData, variant: str) -> Call:
        from gather_scatter_conformance import adapters

        self.check_variant(case.op, variant)
        source_adapter = adapters.get(self.source)
        source_call = source_adapter.prepare(case, variant)  # Unsupported where the source API cannot say the case
        facts: dict[str, Any] = {}
        api = f"{self.converter}({source_call.api}) -> {self.target}"

        def run() -> np.ndarray:
            versions = self.versions()
            conversion = facts["conversion"] = {**self.describe_path(), "versions": versions,
                                                "source_api": source_call.api, "stage": "source"}
            # Each stage is noted before it starts: a converter or target that kills the process (SIGFPE on an
            # empty tensor) or hangs leaves the parent this note, so the record still says whose death it was.
            _note(case.progress, facts)
            conversion["source_result"] = _source_result(source_adapter, source_call)
            conversion["stage"] = "convert"
            _note(case.progress, facts)
            key = self._key(case, variant, versions)
            converted = self.conversions.get_or_make(key, lambda: self._convert_cached(key, case, variant))
            if isinstance(converted, ConversionFailed):
                raise converted
            facts["ops"] = self.ops_of(converted)
            conversion.update(converted.details, stage="run")
            _note(case.progress, facts)
            try:
                runner = self.runners.get_or_make(key, lambda: self.runner(converted))
            except NotRun:
                conversion["stage"] = "converted"  # converted, not run: what the record says is the program
                raise
            try:
                return self.execute(runner, dict(case.inputs))
            finally:
                facts.update(self.target_facts(runner))

        source = "\n".join([
            "try:  # the source API natively, for comparison (it may raise where the converted model does not)",
            textwrap.indent(source_call.source, "    "),
            "    source_result = result",
            "except Exception as exc:",
            "    source_result = exc",
            self.repro(case, variant),
        ])
        return Call(api, run, source=source, facts=facts)

    def describe(self, case: CaseData, variant: str) -> tuple[str, str]:
        call = self.prepare(case, variant)  # prepares the source call only: nothing converts before run()
        return call.api, call.source

    def to_numpy(self, out: Any) -> np.ndarray:
        return np.asarray(out)

    def release(self) -> None:
        self.runners.clear()
        self.conversions.clear()

    # --- conversion cache --------------------------------------------------------------------------------------

    def _key(self, case: CaseData, variant: str, versions: dict[str, str]) -> str:
        """The conversion's cache key: paths that share source and converter share conversions."""
        text = repr((FORMAT, self.source, self.converter_id, versions["source"], versions["converter"],
                     sorted(self.options.items()), variant, signature(case)))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def _convert_cached(self, key: str, case: CaseData, variant: str) -> Converted | ConversionFailed:
        folder = cache_dir()
        meta_path = folder / f"{key}.json" if folder else None
        if meta_path is not None and meta_path.exists():
            try:
                meta = json.loads(meta_path.read_text())
                if "error" in meta:
                    return ConversionFailed(meta["error"])
                blob = (folder / f"{key}.bin").read_bytes()
                return Converted(self.load(blob), meta["ops"], meta["details"])
            except Exception:
                pass  # a torn or foreign entry is a miss
        try:
            converted: Converted | ConversionFailed = self.convert(case, variant, example_inputs(case))
        except (Exception, SystemExit) as exc:  # onnx2tf refuses an operator it cannot convert with sys.exit(1)
            converted = ConversionFailed(_one_line(exc))
        if meta_path is not None:
            if isinstance(converted, ConversionFailed):
                write_atomic(meta_path, json.dumps({"error": str(converted)}).encode())
            else:
                blob = self.dump(converted.artifact)
                if blob is not None:
                    write_atomic(meta_path.with_suffix(".bin"), blob)
                    write_atomic(meta_path, json.dumps({"ops": converted.ops, "details": converted.details}).encode())
        return converted


def _one_line(exc: BaseException) -> str:
    """``Type: message`` of a converter's exception, shortened: converters' messages run to pages of trace."""
    text = " ".join((str(exc).strip() or repr(exc)).split())
    if len(text) > 600:
        text = text[:600] + " ..."
    return f"{type(exc).__name__}: {text}"


def entry_name(*parts: object) -> str:
    """The name of a disk cache entry for what ``parts`` say shaped it (a format number, the releases, the call):
    32 hex digits of the SHA-256 of their ``repr``, so an entry of another release or format is another file."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def cache_file(folder: str, name: str) -> Path | None:
    """``<conversion cache>/<folder>/<name>``, where an adapter keeps what it compiled or converted; None when the
    cache is off."""
    root = cache_dir()
    return None if root is None else root / folder / name


def read_entry(path: Path | None) -> bytes | None:
    """The bytes kept at ``path``; None where there is no cache or no readable entry (a miss, never an error)."""
    try:
        return None if path is None else path.read_bytes()
    except OSError:
        return None


def write_atomic(path: Path, data: bytes) -> None:
    """Write atomically (several workers may convert the same thing); an unwritable cache is no error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


def _note(progress: str | None, facts: dict[str, Any]) -> None:
    """Write the call's facts so far to ``progress`` (see CaseData.progress), atomically; nothing when unset."""
    if not progress:
        return
    tmp = f"{progress}.tmp"
    with open(tmp, "wb") as fh:
        pickle.dump(facts, fh, 5)
    os.replace(tmp, progress)


def read_progress(progress: str) -> dict[str, Any]:
    """The facts a path's call last noted in ``progress`` (empty when it noted none)."""
    try:
        with open(progress, "rb") as fh:
            return pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError):
        return {}


def _source_result(adapter: Adapter, call: Call) -> dict[str, Any]:
    """What the source API did natively on the case: ``{"outcome": "ok", "value": <wire>}`` or the error."""
    from gather_scatter_conformance.vocab import wire

    try:
        value = adapter.to_numpy(call.run())
    except Exception as exc:
        return {"outcome": "error", "error_type": type(exc).__name__, "error_message": _one_line(exc)[:400]}
    return {"outcome": "ok", "value": wire.encode(value)}
