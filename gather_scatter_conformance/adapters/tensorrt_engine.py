"""Building and running TensorRT engines for the tensorrt adapter; and whether this machine can run them at all.

Engines are built once per (layer or ONNX model, input shapes and dtypes) and kept in an LRU, as onnxruntime's
sessions are: building costs hundreds of milliseconds, a run microseconds. A run is TensorRT 10+'s name-based API:
``context.set_tensor_address(name, device_ptr)`` for every I/O tensor, then ``context.execute_async_v3(stream)``.

Device memory comes from cuda-python (``cuda.bindings.runtime``: cudaMalloc, cudaMemcpyAsync, cudaStreamCreate), which
is what TensorRT's Python documentation points to ("Although not required by the TensorRT Python API, cuda-python is
used in several samples") and what its samples' ``common_runtime.py`` does around ``execute_async_v3``. torch CUDA
tensors would do as well, but need a CUDA build of torch (gigabytes), while this project pins the CPU wheel.

Nothing here imports TensorRT or cuda-python at module level; :func:`gpu_problem` asks the CUDA driver through ctypes.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.cache import LRU
from gather_scatter_conformance.adapters.tensorrt_types import NUMPY_OF, dtype_name, trt_dtype

CACHE_SIZE = 64  # engines kept; each holds device memory, and generated cases would grow the cache without bound
_DRIVERS = {"linux": ("libcuda.so.1", "libcuda.so"), "win32": ("nvcuda.dll",)}
NO_GPU = "TensorRT needs an NVIDIA GPU"


@functools.cache
def gpu_problem() -> str | None:
    """Why TensorRT cannot run here (one line), or None when the CUDA driver reports at least one device.

    Asks the driver itself (cuInit, cuDeviceGetCount through ctypes), not TensorRT: cheap, imports no framework, and
    true for whichever interpreter runs the cases.
    """
    names = _DRIVERS.get(sys.platform)
    if names is None:
        return f"{NO_GPU} on Linux or Windows (this is {sys.platform})"
    driver = None
    for name in names:
        try:
            driver = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if driver is None:
        return f"{NO_GPU}: no CUDA device found (no CUDA driver: {names[0]} is not installed)"
    status = driver.cuInit(0)
    if status != 0:
        return f"{NO_GPU}: no CUDA device found (cuInit returned CUresult {status})"
    count = ctypes.c_int(0)
    status = driver.cuDeviceGetCount(ctypes.byref(count))
    if status != 0 or count.value < 1:
        return f"{NO_GPU}: no CUDA device found (cuDeviceGetCount: {count.value}, CUresult {status})"
    return None


def _numpy_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _collecting_logger(trt: Any) -> Any:
    """A trt.ILogger that keeps error messages: TensorRT reports a failed build or run only as None/False."""

    class CollectingLogger(trt.ILogger):
        def __init__(self) -> None:
            trt.ILogger.__init__(self)
            self.errors: list[str] = []

        def log(self, severity: Any, msg: str) -> None:
            if severity in (trt.ILogger.Severity.INTERNAL_ERROR, trt.ILogger.Severity.ERROR):
                self.errors.append(msg.strip())

        def take(self) -> str:
            """The errors logged since the last take, joined; empties the list."""
            text, self.errors = " | ".join(self.errors), []
            return text or "no error was logged"

    return CollectingLogger()


@dataclass
class Built:
    """A built engine and the one execution context the harness runs it through."""

    engine: Any
    context: Any


class Runner:
    """One per process: the TensorRT builder and runtime, a CUDA stream, and the LRU of built engines."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        import tensorrt as trt
        from cuda.bindings import runtime as cudart

        self.trt, self.cudart = trt, cudart
        self.logger = _collecting_logger(trt)
        self.builder = trt.Builder(self.logger)
        self.runtime = trt.Runtime(self.logger)
        # A stream of our own: execute_async_v3's docs warn that the default stream costs extra synchronisation.
        self.stream = self._call("cudaStreamCreate", cudart.cudaStreamCreate())
        self.engines: LRU[Built] = LRU(size)

    def _call(self, what: str, result: tuple[Any, ...]) -> Any:
        """Check a cuda-python result tuple (error first) and return its value; raise with CUDA's own message."""
        status, *values = result
        if status != self.cudart.cudaError_t.cudaSuccess:
            _, text = self.cudart.cudaGetErrorString(status)
            raise RuntimeError(f"{what}: {status.name}: {text.decode()}")
        return values[0] if values else None

    def built(self, key: Any, populate: Callable[[Any, Any, Any], Any]) -> Built:
        """The engine for ``key``, building it from ``populate(network, trt, logger)`` on a miss (failures raise and
        cache nothing)."""
        return self.engines.get_or_make(key, lambda: self._build(populate))

    def _build(self, populate: Callable[[Any, Any, Any], Any]) -> Built:
        self.logger.take()
        # TensorRT 11 networks are always strongly typed (the STRONGLY_TYPED flag is deprecated and ignored):
        # the case's dtypes, not a precision flag, decide the layer's types.
        network = self.builder.create_network(0)
        keep = populate(network, self.trt, self.logger)
        config = self.builder.create_builder_config()
        blob = self.builder.build_serialized_network(network, config)
        del keep
        if blob is None:
            raise RuntimeError(f"builder.build_serialized_network failed: {self.logger.take()}")
        engine = self.runtime.deserialize_cuda_engine(blob)
        if engine is None:
            raise RuntimeError(f"runtime.deserialize_cuda_engine failed: {self.logger.take()}")
        return Built(engine, engine.create_execution_context())

    def run(self, key: Any, populate: Callable[[Any, Any, Any], Any], inputs: dict[str, np.ndarray]) -> np.ndarray:
        """Build (or reuse) the engine for ``key`` and run it once on ``inputs``; return the 'output' tensor."""
        return self.execute(self.built(key, populate), inputs)

    def execute(self, built: Built, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """Copy ``inputs`` to the device, ``execute_async_v3`` on this runner's stream, copy 'output' back."""
        cudart = self.cudart
        engine, context = built.engine, built.context
        to_device = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
        to_host = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost
        buffers: list[int] = []
        hosts = []  # kept referenced until the stream is synchronised: the copies are asynchronous
        try:
            for name, arr in inputs.items():
                want = engine.get_tensor_dtype(name).name
                if want != trt_dtype(arr):
                    raise RuntimeError(f"the engine takes input {name!r} as {want}, not {dtype_name(arr)}")
                host = np.array(arr, order="C")  # not ascontiguousarray: that turns a 0-d array into shape (1,)
                hosts.append(host)
                device = self._alloc(host.nbytes, buffers)
                self._call("cudaMemcpyAsync", cudart.cudaMemcpyAsync(device, host.ctypes.data, host.nbytes,
                                                                     to_device, self.stream))
                context.set_tensor_address(name, device)
            out_type = engine.get_tensor_dtype("output").name
            if out_type not in NUMPY_OF:
                raise RuntimeError(f"the engine's output is {out_type}, which this harness cannot read back")
            out = np.empty(tuple(context.get_tensor_shape("output")), dtype=_numpy_dtype(NUMPY_OF[out_type]))
            device_out = self._alloc(out.nbytes, buffers)
            context.set_tensor_address("output", device_out)
            if not context.execute_async_v3(int(self.stream)):
                raise RuntimeError(f"context.execute_async_v3 failed: {self.logger.take()}")
            self._call("cudaMemcpyAsync", cudart.cudaMemcpyAsync(out.ctypes.data, device_out, out.nbytes, to_host,
                                                                 self.stream))
            self._call("cudaStreamSynchronize", cudart.cudaStreamSynchronize(self.stream))
            return out
        finally:
            for device in buffers:
                cudart.cudaFree(device)

    def _alloc(self, nbytes: int, buffers: list[int]) -> int:
        # TensorRT wants a valid address even for an empty tensor, so allocate at least one byte.
        device = int(self._call("cudaMalloc", self.cudart.cudaMalloc(max(nbytes, 1))))
        buffers.append(device)
        return device
