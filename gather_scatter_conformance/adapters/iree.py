"""IREE: a case compiled by ``iree.compiler`` for the ``llvm-cpu`` target and run by ``iree.runtime`` on the
``local-sync`` device (the CPU, one thread, synchronous).

Two input paths, one variant each per operator:

- ``stablehlo.gather`` / ``stablehlo.scatter`` (the default): the case as one StableHLO op in MLIR text
  (adapters/iree_stablehlo.py), compiled with ``input_type="stablehlo"``: what JAX and TensorFlow lower to;
- ``import_onnx``: the case's one-node ONNX model (adapters/onnx_graph.py) imported by ``iree-import-onnx``
  (``python -m iree.compiler.tools.import_onnx``, run in process through its own ``main``) and compiled with
  ``input_type="onnx"``; and its twins (issue #40, vocab/variants.py), as ONNX Runtime's: ``import_onnx/constant``
  with the indices an initializer (the importer makes it a ``torch.vtensor.literal`` the compiler may fold), and
  ``import_onnx/dynamic`` with the inputs' dimensions symbolic (``dim_param``; ``?`` dimensions for the compiler).

Both compile with IREE's defaults plus ``--iree-llvmcpu-target-cpu=generic`` (without it every compile warns that a
generic CPU was assumed): so float64 is demoted to float32 (``--iree-input-demote-f64-to-f32`` is on by default) and
a float64 input is refused at the call, as a user with default flags sees it. Compiled modules (the .vmfb bytes and
what was read from them) are cached by variant and module text or model bytes, i.e. by operator, attributes, shapes
and dtypes, in one LRU, and the .vmfb on disk beside the converted models (see _stored_vmfb).

Delegation is read from the compiled module, never assumed: the names of the dispatches its executables export
(``main_dispatch_0_elementwise_4_i64xi32``) and the executable format each runs as (``embedded-elf-x86_64``, the
llvm-cpu backend's). ``Call.facts``: ``ops`` (the dispatch names, in the module's order) and
``providers``/``fallback`` (adapters.base.delegation, each dispatch -> the target backend, asked ``llvm-cpu``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import iree_batch, iree_stablehlo, onnx_graph
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, ReleaseRules, delegation
from gather_scatter_conformance.adapters.cache import LRU
from gather_scatter_conformance.adapters.convert.path import cache_dir, cache_file, write_atomic
from gather_scatter_conformance.vocab import variants

TARGET = "llvm-cpu"
DEVICE = "local-sync"
COMPILE_FLAGS = ("--iree-llvmcpu-target-cpu=generic",)
CACHE_SIZE = 256
IMPORT_ONNX = "import_onnx"
_STABLEHLO_OP = {"Gather": "stablehlo.gather", "GatherElements": "stablehlo.gather", "GatherND": "stablehlo.gather",
                 "Take": "stablehlo.gather", "ScatterElements": "stablehlo.scatter", "ScatterND": "stablehlo.scatter"}
_ONNX_VARIANTS = [IMPORT_ONNX, *variants.twins(IMPORT_ONNX)]
_VARIANTS = {op: [name, *_ONNX_VARIANTS] for op, name in _STABLEHLO_OP.items()}
# StableHLO has no op of its own for it. torch-mlir's importer leaves the node as `torch.operator "onnx.TensorScatter"`,
# which the compiler refuses ("failed to legalize operation 'torch.operator'"): an error, recorded as such, since the
# compiler says the same of a node form it does not convert (ScatterElements reduction max), so no run can tell a
# missing converter from a refused input (known/iree.yaml).
_VARIANTS["TensorScatter"] = [IMPORT_ONNX]  # no twins: the node is refused whatever its inputs are
# Executable formats of the llvm-cpu backend (the HAL's embedded ELF, a system library, the VMVX fallback is not).
_LLVM_CPU_FORMATS = ("embedded-elf-", "system-elf-", "system-dll-", "system-dylib-", "static")
_DISPATCH = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*_dispatch_[0-9]+(?:_[A-Za-z0-9_]+)?)")
_FORMAT = re.compile(rb"(embedded-elf-[a-z0-9_]+|system-(?:elf|dll|dylib)-[a-z0-9_]+|vmvx-bytecode-fb|static)")


@functools.cache
def version() -> str:
    """The installed iree-base-compiler's and iree-base-runtime's versions (``3.13.0``, or ``compiler X, runtime
    Y`` when they differ)."""
    import importlib.metadata

    compiler = importlib.metadata.version("iree-base-compiler")
    runtime = importlib.metadata.version("iree-base-runtime")
    return compiler if compiler == runtime else f"compiler {compiler}, runtime {runtime}"


def compile_text(text: str, input_type: str) -> bytes:
    """``text`` (MLIR) compiled by ``iree.compiler.compile_str`` for llvm-cpu: the .vmfb bytes. Compiler errors
    propagate (``iree.compiler.CompilerToolError``, the diagnostics in its message)."""
    import iree.compiler as ireec

    with _quiet():
        return bytes(ireec.compile_str(text, target_backends=[TARGET], input_type=input_type,
                                       extra_args=list(COMPILE_FLAGS)))


def _quiet() -> contextlib.AbstractContextManager[Any]:
    """``iree-compile``'s diagnostics of a compile that succeeds kept off the terminal: the tool echoes them to
    ``sys.stderr``, and torch-mlir's ONNX lowering reports ``error:`` lines for patterns it then converts another
    way (a ScatterND with uint8 indices: "unimplemented: for conversion to byte or char type", and a module
    anyway). In a run they came between the progress lines, from the cases compiled ahead in pytest's process."""
    return contextlib.redirect_stderr(io.StringIO())


def import_onnx(model: Any) -> str:
    """``iree-import-onnx model.onnx``: the ONNX ModelProto as torch-dialect MLIR text, by the tool's own ``main``
    (its shape inference and verification included)."""
    from iree.compiler.tools.import_onnx.__main__ import main, parse_arguments

    with tempfile.TemporaryDirectory(prefix="gsc-iree-") as tmp:
        src, out = Path(tmp) / "model.onnx", Path(tmp) / "model.mlir"
        src.write_bytes(model.SerializeToString())
        main(parse_arguments([str(src), "-o", str(out)]))
        return out.read_text()


def dispatches(vmfb: bytes) -> dict[str, str]:
    """The dispatches the compiled module's executables export -> the target backend that runs them, read from the
    .vmfb: ``llvm-cpu`` for its executable formats (embedded ELF, system libraries), else the format's name. Empty
    where the module needs no dispatch (all its work is VM and HAL transfers)."""
    found = {m.decode() for m in _DISPATCH.findall(vmfb)}
    # An executable's name (main_dispatch_0) prefixes its exports' names, and its object file is named after it
    # (main_dispatch_0_embedded_elf_x86_64.so): neither is a dispatch.
    names = {n for n in found if not n.endswith("_so") and "_embedded_elf_" not in n and "_system_" not in n
             and not any(other.startswith(n + "_") for other in found)}
    # A name stored before a byte that reads as a letter (``..._f32`` then ``X``) is found both ways: the longer
    # is that artefact, never a dispatch of its own (each dispatch name ends in its element types).
    names = {n for n in names if not any(n != other and n.startswith(other) for other in names)}
    formats = sorted({f.decode() for f in _FORMAT.findall(vmfb)})
    backend = TARGET if formats and all(f.startswith(_LLVM_CPU_FORMATS) for f in formats) else "|".join(formats)
    return {n: backend or "unknown" for n in sorted(names, key=iree_batch.dispatch_order)}


@dataclass
class Compiled:
    """A compiled module: its .vmfb, the dispatches read from it (those of the case's own function, where the module
    is a group's: adapters/iree_batch.py) and the function that runs the case (None: the module's one entry point)."""

    vmfb: bytes
    dispatches: dict[str, str]
    function: str | None = None


def compile_flow(text: str, input_type: str = "stablehlo") -> str:
    """``text`` compiled as :func:`compile_text` does, to the flow level only (``--compile-to=flow``): the MLIR text
    whose functions name the dispatches they call (adapters/iree_batch.py)."""
    import iree.compiler as ireec

    with _quiet():
        out = ireec.compile_str(text, target_backends=[TARGET], input_type=input_type,
                                extra_args=[*COMPILE_FLAGS, "--compile-to=flow"])
    return out.decode() if isinstance(out, bytes) else str(out)


def compile_module(text: str, input_type: str) -> Compiled:
    """Compile ``text`` and read its dispatches."""
    vmfb = compile_text(text, input_type)
    return Compiled(vmfb, dispatches(vmfb))


# Compiled modules on disk, beside the converted models (the conversion cache, $GSC_CONVERSION_CACHE): a module
# depends on the variant, the module text or ONNX model (operator, attributes, shapes, dtypes, never values), the
# flags and the release, so the two pytest-xdist workers, the forked child of each repeat of a memory-unsafe cell
# (which starts from a template that never compiled) and the next run load the .vmfb instead of compiling again
# (0.3-1 s a compile). An entry is the SHA-256 of the .vmfb, then the .vmfb: a torn or damaged entry is a miss.
_VMFB_FORMAT = 1


def vmfb_key(variant: str, source: str | bytes) -> str:
    """The disk cache's name for the module of ``variant`` compiled from ``source`` (MLIR text or model bytes)."""
    h = hashlib.sha256(repr((_VMFB_FORMAT, version(), TARGET, COMPILE_FLAGS, variant)).encode())
    h.update(source.encode() if isinstance(source, str) else source)
    return h.hexdigest()[:32]


def _stored_vmfb(path: Path) -> bytes | None:
    """The .vmfb kept at ``path``; None where there is none, or it does not match its digest."""
    return iree_batch.read_digested(path)


def compiled_once(key: str, make: Callable[[], Compiled]) -> Compiled:
    """The module kept on disk under ``key`` (:func:`vmfb_key`), else the function compiled ahead for it in a
    group's module (:func:`compile_ahead`), else ``make()``'s, kept there (an unwritable cache is no error; a failed
    compile keeps nothing)."""
    path = cache_file("iree", f"{key}.vmfb")
    vmfb = _stored_vmfb(path) if path is not None else None
    if vmfb is not None:
        return Compiled(vmfb, dispatches(vmfb))
    ref = iree_batch.read_ref(path.with_suffix(".ref")) if path is not None else None
    group = _group_vmfb(path.parent / f"{ref.group}.vmfb") if ref is not None and path is not None else None
    if ref is not None and group is not None:
        return Compiled(group, ref.dispatches, ref.function)
    compiled = make()
    if path is not None:
        write_atomic(path, hashlib.sha256(compiled.vmfb).digest() + compiled.vmfb)
    return compiled


@functools.lru_cache(maxsize=4)
def _group_vmfb(path: Path) -> bytes | None:
    """A group's .vmfb (its cases run one after another: read once); None where missing or damaged."""
    return _stored_vmfb(path)


def _present(key: str) -> bool:
    """Whether the disk cache has the module of ``key`` (:func:`vmfb_key`), alone or in a group."""
    path = cache_file("iree", f"{key}.vmfb")
    return path is not None and (path.exists() or path.with_suffix(".ref").exists())


# iree_batch's dialect of each input type.
_DIALECTS = {"stablehlo": iree_batch.STABLEHLO, "onnx": iree_batch.ONNX}


def compile_ahead(modules: Iterable[tuple[str, str, str]]) -> list[iree_batch.Ahead]:
    """Compile the (key (:func:`vmfb_key`), input type, module text) ``modules`` that the disk cache lacks, many of
    one input type to a module (adapters/iree_batch.py), so each case's run loads its function instead of compiling;
    what was done for each input type (none without a cache)."""
    folder = cache_dir()
    if folder is None:
        return []
    done = []
    for input_type, dialect in _DIALECTS.items():
        members = [(key, text) for key, kind, text in modules if kind == input_type]
        if members:
            done.append(iree_batch.compile_ahead(
                members, folder / "iree", lambda text, kind=input_type: compile_text(text, kind),
                lambda text, kind=input_type: compile_flow(text, kind), dispatches, write_atomic, _present,
                dialect=dialect))
    return done


def entry_function(names: list[str]) -> str:
    """The module's one entry point: not ``__init``, not the ``$async`` twin the ONNX import adds (``case``)."""
    return next(f for f in names if not f.startswith("__") and "$" not in f)


def run_module(vmfb: bytes, arrays: list[np.ndarray], function: str | None = None) -> np.ndarray:
    """Load ``vmfb`` on a fresh local-sync device context and call ``function`` (default: its one exported function)
    on ``arrays``; the first result as a NumPy array. The runtime's errors (an input dtype the module does not take)
    propagate."""
    import iree.runtime as ireert

    ctx = ireert.SystemContext(config=ireert.Config(DEVICE))
    vm_module = ireert.VmModule.copy_buffer(ctx.instance, vmfb)
    ctx.add_vm_module(vm_module)
    entry = function or entry_function(vm_module.function_names)
    # reshaped back: ascontiguousarray makes a 0-d array 1-d, which the module refuses for a scalar parameter
    out = ctx.modules[vm_module.name][entry](*[np.ascontiguousarray(a).reshape(a.shape) for a in arrays])
    if isinstance(out, (tuple, list)):
        out = out[0]
    return np.asarray(out.to_host() if hasattr(out, "to_host") else out)


_RUN_SOURCE = [
    "import iree.runtime as ireert",
    f"ctx = ireert.SystemContext(config=ireert.Config({DEVICE!r}))",
    "vm_module = ireert.VmModule.copy_buffer(ctx.instance, vmfb)",
    "ctx.add_vm_module(vm_module)",
    "entry = [f for f in vm_module.function_names if not f.startswith('__') and '$' not in f][0]",
]


def compile_source(text_name: str, input_type: str) -> str:
    """Statements that compile the MLIR text in ``text_name`` as this adapter does and assign ``vmfb``."""
    return "\n".join([
        "import iree.compiler as ireec",
        f"vmfb = ireec.compile_str({text_name}, target_backends=[{TARGET!r}], input_type={input_type!r},",
        f"                         extra_args={list(COMPILE_FLAGS)!r})",
    ])


def run_source(names: list[str]) -> str:
    """Statements that run ``vmfb`` on the arrays ``names`` as :func:`run_module` does and assign ``result``."""
    return "\n".join([*_RUN_SOURCE,
                      f"result = np.asarray(ctx.modules[vm_module.name][entry]({', '.join(names)}).to_host())"])


def import_source() -> str:
    """Statements that run iree-import-onnx on ``model`` (a ModelProto) and assign the MLIR text to ``mlir``."""
    return "\n".join([
        "import subprocess, sys, tempfile, pathlib",
        "tmp = pathlib.Path(tempfile.mkdtemp())",
        "(tmp / 'model.onnx').write_bytes(model.SerializeToString())",
        "subprocess.run([sys.executable, '-m', 'iree.compiler.tools.import_onnx', str(tmp / 'model.onnx'),",
        "                '-o', str(tmp / 'model.mlir')], check=True)  # iree-import-onnx model.onnx -o model.mlir",
        "mlir = (tmp / 'model.mlir').read_text()",
    ])


class IreeAdapter(Adapter):
    name = "iree"
    # iree.compiler and iree.runtime share the top-level package `iree` (two distributions): the module says that
    # one of them is there, the distribution that the compiler is.
    requires = ("iree",)
    distribution = "iree-base-compiler"
    extra = "iree"
    # The runtime that loads the compiled modules is released with the compiler, under the same version (3.7.1 of
    # the compiler has no runtime of its own: a sweep names matching releases). onnx: the import_onnx variant.
    releases = ReleaseRules("iree-base-compiler", "iree",
                            extra=("iree-base-runtime=={release}", "onnx==1.23.2"),
                            check="import iree.compiler, iree.runtime; iree.compiler.compile_str; "
                                  "from iree.compiler.tools.import_onnx.__main__ import main")
    VARIANTS = _VARIANTS
    mapping = "docs/mapping/iree.md"

    def __init__(self) -> None:
        # Compiled modules keyed by (variant, MLIR text or ONNX model bytes); a failed compile caches nothing.
        self.cache: LRU[Compiled] = LRU(CACHE_SIZE)

    def version(self) -> str:
        return version()

    def is_slow(self, variant: str) -> bool:
        # 0.3-1 s a compile (iree 3.13.0, two shared cores), cached by signature: the cases share few signatures
        # per probe, and every variant runs on the whole corpus in a few minutes. A constant twin compiles per index
        # value, a dynamic one is a twin: both run where slow variants run, as ONNX Runtime's.
        return variants.twin_of(variant) is not None

    def prepare(self, case: CaseData, variant: str) -> Call:
        self.check_variant(case.op, variant)
        names = list(case.inputs)  # the operator's order (TensorScatter: data, updates, indices), as ONNX takes it
        facts: dict[str, Any] = {}
        if variant in _ONNX_VARIANTS:
            model, node, held = onnx_graph.build_variant(case, variant)  # Unsupported where ONNX cannot say it
            names = [n for n in names if n not in held]
            model_bytes = model.SerializeToString()
            key: tuple[Any, ...] = (variant, model_bytes)

            def make() -> Compiled:
                return compiled_once(vmfb_key(variant, model_bytes), lambda: compile_module(import_onnx(model), "onnx"))

            api = f"iree-import-onnx(model: {node}) -> iree.compiler.compile_str(input_type='onnx')"
            source = [onnx_graph.model_source(model), import_source(), compile_source("mlir", "onnx")]
        else:
            text = iree_stablehlo.module(case)
            key = (variant, text)

            def make() -> Compiled:
                return compiled_once(vmfb_key(variant, text), lambda: compile_module(text, "stablehlo"))

            api = f"{_op_line(text, variant)} -> iree.compiler.compile_str(input_type='stablehlo')"
            source = [f"mlir = '''\n{text}\n'''", compile_source("mlir", "stablehlo")]
        api += f"  # target {TARGET!r}, device {DEVICE!r}"
        arrays = [case.inputs[n] for n in names]

        def run() -> np.ndarray:
            compiled = self.cache.get_or_make(key, make)
            facts["ops"] = list(compiled.dispatches)
            facts.update(delegation(compiled.dispatches, asked=TARGET))
            return run_module(compiled.vmfb, arrays, compiled.function)

        return Call(api, run, device="cpu", device_name=f"{TARGET} ({DEVICE})",
                    source="\n".join([*source, run_source(names)]), facts=facts)

    def ahead(self, work: Iterable[tuple[CaseData, str]]) -> None:
        # The StableHLO modules and the ONNX importer's, compiled many to a module (compile_ahead); a case either
        # cannot say is left to its run, which records why. The importer runs only for a module not on disk.
        modules = []
        for case, variant in work:
            try:
                if variant in _STABLEHLO_OP.values():
                    text = iree_stablehlo.module(case)
                    modules.append((vmfb_key(variant, text), "stablehlo", text))
                elif variant in _ONNX_VARIANTS:
                    model = onnx_graph.build_variant(case, variant)[0]
                    key = vmfb_key(variant, model.SerializeToString())
                    if not _present(key):
                        modules.append((key, "onnx", import_onnx(model)))
            except Exception:  # Unsupported, an invalid attribute, an import error: its run records it
                continue
        compile_ahead(modules)

    def release(self) -> None:
        self.cache.clear()
        _group_vmfb.cache_clear()


def _op_line(text: str, variant: str) -> str:
    """The dimension numbers of the module's one StableHLO op, for the record's ``api`` (the whole text is in the
    repro)."""
    m = re.search(r"#stablehlo\.(?:gather|scatter)<([^>]*)>", text)
    sizes = re.search(r"slice_sizes = (array<i64:[^>]*>)", text)
    extra = f", slice_sizes={sizes.group(1)}" if sizes else ""
    reduction = re.search(r"%r = (stablehlo\.\w+)", text)
    region = f", update: {reduction.group(1) if reduction else 'replace'}" if variant.endswith("scatter") else ""
    return f"{variant}({m.group(1) if m else ''}{extra}{region})"


ADAPTER = IreeAdapter()
