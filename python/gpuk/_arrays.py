"""Arrays and streams handed to gpuk: what a call takes, turned into device pointers.

A device array comes in through ``__cuda_array_interface__`` (CuPy, Numba, PyTorch) or
``__dlpack__`` (PyTorch, CuPy, JAX), zero-copy; it must be C-contiguous, of one of gpuk's dtypes,
and on the engine's GPU. Anything else array-like (NumPy, lists, a DLPack array on the CPU) is a
host array: it is uploaded for the call, and what comes back is NumPy.
"""
from __future__ import annotations

import math
import sys
from typing import Any, Optional, Tuple

import numpy as np

from . import _gpuk
from ._gpuk import ConfigError

# gpuk's dtypes by NumPy's name, and the DLPack (code, bits) and __cuda_array_interface__ typestr
# of each.
DTYPES = ("int32", "uint32", "int64", "uint64", "float32", "float64")
_DLPACK_DTYPES = {(0, 32): "int32", (0, 64): "int64", (1, 32): "uint32", (1, 64): "uint64", (2, 32): "float32",
                  (2, 64): "float64"}
_DLPACK_KINDS = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_DEVICE_NAMES = {1: "the CPU", 2: "a CUDA GPU", 3: "CUDA page-locked host memory", 4: "an OpenCL device",
                    7: "a Vulkan device", 8: "a Metal device", 10: "a ROCm GPU", 13: "CUDA managed memory",
                    14: "a oneAPI device"}


def _unsupported_dtype(name: str) -> ConfigError:
    return ConfigError(f"dtype {name} is not one of gpuk's dtypes ({', '.join(DTYPES)})")


def dtype_name(dtype: Any) -> str:
    """gpuk's name of a NumPy-compatible dtype, or ConfigError."""
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name not in DTYPES:
        raise _unsupported_dtype(name)
    return name


def count_arg(value: Any, what: str, minimum: int = 0) -> int:
    """An integer argument (a Python or NumPy integer, not a bool, a float or a string: 1.5 is
    not silently 1), at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{what}={value!r}: an integer")
    if value < minimum:
        raise ConfigError(f"{what}={value!r}: at least {minimum}")
    return int(value)


def paths_arg(value: Any, what: str) -> list:
    """Directories or files given as one path (a str or os.PathLike) or an iterable of them (a str
    is one path, not its characters)."""
    import os
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise ConfigError(f"{what}= takes a path or a list of paths, not {type(value).__name__}") from None
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise ConfigError(f"{what}= takes paths (str or os.PathLike), not {type(item).__name__} ({item!r})")
    return [os.fspath(item) for item in items]


def stream_handle(stream: Any) -> int:
    """A CUstream handle from ``stream=``: None (the legacy default stream, 0), an int, an object
    with ``__cuda_stream__`` (CUDA Python, CuPy, PyTorch, Numba), a torch.cuda.Stream
    (``.cuda_stream``) or a CuPy stream (``.ptr``)."""
    if stream is None:
        return 0
    if isinstance(stream, (int, np.integer)) and not isinstance(stream, bool):
        if stream < 0:
            raise ConfigError(f"stream={stream}: a CUDA stream handle is not negative")
        return int(stream)
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        value = protocol() if callable(protocol) else protocol
        if isinstance(value, tuple) and len(value) == 2:
            return int(value[1])
        raise ConfigError(f"stream: __cuda_stream__ gave {value!r}, not (version, handle)")
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, (int, np.integer)):
            return int(value)
    raise ConfigError(f"stream= takes an int handle or an object with __cuda_stream__, not {type(stream).__name__}")


def _dlpack_stream(stream: int) -> int:
    # DLPack's convention for CUDA: 1 is the legacy default stream, 0 is not allowed.
    return 1 if stream == 0 else stream


def _c_contiguous(shape, strides, itemsize_unit: int) -> bool:
    """Whether strides (in units where one element is `itemsize_unit`) are C order."""
    expected = itemsize_unit
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True


class Arg:
    """One array of a call: a device pointer, its dtype and shape; `host` is the NumPy array
    to upload (an input) or to fill (an output) when it is a host array; `keep` holds what must
    live until the call is done (a DLPack view, the upload's device memory)."""

    __slots__ = ("ptr", "dtype", "shape", "size", "host", "keep", "source", "check_pointer", "producer")

    def __init__(self, ptr, dtype, shape, host=None, keep=None, source=None, check_pointer=False, producer=None):
        self.ptr = ptr
        self.dtype = dtype
        self.shape = tuple(int(s) for s in shape)
        self.size = math.prod(self.shape)
        self.host = host
        self.keep = keep
        self.source = source
        self.check_pointer = check_pointer
        self.producer = producer  # __cuda_array_interface__'s stream, ordered before the launch

    @property
    def nbytes(self) -> int:
        return self.size * np.dtype(self.dtype).itemsize


def _host_arg(x: Any, what: str, writable: bool) -> Arg:
    if writable:
        if not isinstance(x, np.ndarray):
            raise ConfigError(f"{what}: out= takes a device array or a NumPy array, not {type(x).__name__}")
        a = x
        if not a.flags.writeable:
            raise ConfigError(f"{what}: the NumPy array given as out= is read-only")
    else:
        a = np.asarray(x)
    if not a.flags.c_contiguous:
        raise ConfigError(f"{what}: the array is not C-contiguous (strides {a.strides}); pass "
                          f"numpy.ascontiguousarray(x), or a contiguous copy")
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
        # Its bytes would be read as little-endian values (the CLI and __cuda_array_interface__ refuse it too).
        raise ConfigError(f"{what}: the array is big-endian ('{a.dtype.str}'); gpuk reads little-endian "
                          f"values: pass x.astype(x.dtype.newbyteorder('<'))")
    return Arg(0, dtype_name(a.dtype), a.shape, host=a, source=x)


def _cai_arg(x: Any, cai: Any, what: str, writable: bool, stream: int, device: int) -> Arg:
    try:
        return _read_cai(x, cai, what, writable)
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, ConfigError):
            raise
        raise ConfigError(f"{what}: __cuda_array_interface__ is malformed ({type(e).__name__}: {e}): it needs "
                          f"'shape', 'typestr' and 'data' as (pointer, read-only)") from None


def _read_cai(x: Any, cai: Any, what: str, writable: bool) -> Arg:
    if not isinstance(cai, dict):
        raise TypeError(f"a {type(cai).__name__}, not a dict")
    typestr = cai.get("typestr", "?")
    try:
        dt = np.dtype(typestr)
    except TypeError:
        raise _unsupported_dtype(f"'{typestr}' (__cuda_array_interface__)") from None
    if dt.byteorder == ">" and dt.itemsize > 1:
        raise _unsupported_dtype(f"{dt.name} big-endian ('{typestr}')")
    dtype = dt.name
    if dtype not in DTYPES:
        raise _unsupported_dtype(dtype)
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is not None and not _c_contiguous(shape, strides, np.dtype(dtype).itemsize):
        raise ConfigError(f"{what}: the array is not C-contiguous (strides {tuple(strides)} bytes for shape "
                          f"{shape}); gpuk takes C-contiguous arrays: pass a contiguous copy")
    ptr, readonly = cai["data"]
    if writable and readonly:
        raise ConfigError(f"{what}: the array given as out= is read-only (__cuda_array_interface__)")
    producer = cai.get("stream")
    if producer is not None and math.prod(shape) > 0:
        if producer == 0:
            raise ConfigError(f"{what}: __cuda_array_interface__ gives stream 0, which the protocol does not allow")
    else:
        producer = None
    return Arg(int(ptr or 0), dtype, shape, source=x, check_pointer=True, producer=producer)


def _dlpack_arg(x: Any, what: str, writable: bool, stream: int, device: int) -> Arg:
    kind, ordinal = (int(v) for v in x.__dlpack_device__())
    if kind == _DL_CPU:
        return _host_arg(np.from_dlpack(x), what, writable)
    if kind not in (_DL_CUDA, _DL_CUDA_MANAGED):
        place = _DL_DEVICE_NAMES.get(kind, f"DLPack device type {kind}")
        raise ConfigError(f"{what}: the array is in {place}; gpuk takes arrays on a CUDA GPU, or host arrays to upload")
    if ordinal != device:
        raise ConfigError(f"{what}: the array is on GPU {ordinal}, the engine's is GPU {device} "
                          f"(gpuk.Engine(device={ordinal}), or move the array)")
    view = _gpuk.DLPackView(x.__dlpack__(stream=_dlpack_stream(stream)))
    code, bits, lanes = view.dtype
    dtype = _DLPACK_DTYPES.get((code, bits)) if lanes == 1 else None
    if dtype is None:
        name = f"{_DLPACK_KINDS.get(code, f'code{code}')}{bits}" + (f"x{lanes}" if lanes != 1 else "")
        raise _unsupported_dtype(name)
    shape = tuple(view.shape)
    strides = view.strides
    if strides and not _c_contiguous(shape, strides, 1):
        raise ConfigError(f"{what}: the array is not C-contiguous (strides {tuple(strides)} elements for shape "
                          f"{shape}); gpuk takes C-contiguous arrays: pass x.contiguous() or a copy")
    if view.device != (kind, device):
        raise ConfigError(f"{what}: __dlpack__ gave an array on DLPack device {view.device}, not GPU {device}")
    return Arg(view.ptr, dtype, shape, keep=view, source=x)


def resolve(x: Any, what: str, *, device: int, stream: int, writable: bool = False) -> Arg:
    """One array argument of a call, checked (dtype, C order, device) before anything runs."""
    if isinstance(x, np.ndarray):
        return _host_arg(x, what, writable)
    has_dlpack = hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")
    try:
        cai = getattr(x, "__cuda_array_interface__", None)
    except Exception as e:  # a producer that cannot describe this array so (a dtype, a CPU tensor)
        if not has_dlpack:
            raise ConfigError(f"{what}: __cuda_array_interface__ failed: {e}") from None
        cai = None
    if cai is not None:
        return _cai_arg(x, cai, what, writable, stream, device)
    if has_dlpack:
        return _dlpack_arg(x, what, writable, stream, device)
    if writable:
        raise ConfigError(f"{what}: out= takes a device array (__cuda_array_interface__ or __dlpack__) or a NumPy "
                          f"array, not {type(x).__name__}")
    return _host_arg(x, what, writable=False)


def check_on_device(arg: Arg, what: str, device: int, stream: Optional[int] = None) -> None:
    """A __cuda_array_interface__ pointer must be device memory of the engine's GPU (the driver
    knows; DLPack says so itself). Then the producer's writes come before gpuk's work on `stream`
    (an event, no host wait): the last step before a launch, once every argument is checked."""
    if not arg.check_pointer or arg.size == 0:
        return
    _check_pointer(arg, what, device)
    if arg.producer is not None and stream is not None:
        _gpuk.order_streams(device, arg.producer, stream)


def _check_pointer(arg: Arg, what: str, device: int) -> None:
    ordinal = _gpuk.device_of_pointer(arg.ptr)
    if ordinal < 0:
        raise ConfigError(f"{what}: the pointer of __cuda_array_interface__ is not CUDA device memory")
    if ordinal != device:
        raise ConfigError(f"{what}: the array is on GPU {ordinal}, the engine's is GPU {device} "
                          f"(gpuk.Engine(device={ordinal}), or move the array)")


class DeviceArray(_gpuk.DLPackArray):
    """Device memory that gpuk allocated for a result, when the inputs came from no framework it
    can allocate with (not PyTorch or CuPy): it speaks ``__cuda_array_interface__`` (CuPy, Numba,
    PyTorch's ``torch.as_tensor(a, device="cuda")`` take it zero-copy) and DLPack from C++
    (``__dlpack__``, ``__dlpack_device__``: ``torch.from_dlpack(a)``, ``cupy.from_dlpack(a)``; the
    array stays alive while the consumer's tensor is; work on the stream it was written on comes
    before the consumer's stream), and ``numpy()`` copies it back. A view into records (a segmented
    argmax's values or indices) has byte ``strides`` and an ``offset`` into the memory it shares,
    and no DLPack capsule (BufferError)."""

    def __init__(self, memory: "_gpuk.DeviceMemory", dtype: str, shape: Tuple[int, ...], stream: int = 0,
                 strides: Optional[Tuple[int, ...]] = None, offset: int = 0):
        dt = np.dtype(dtype)
        super().__init__(memory, memory.ptr + int(offset), {"i": 0, "u": 1, "f": 2}[dt.kind], dt.itemsize * 8,
                         [int(e) for e in shape], memory.device, stream, strides is not None)
        self._memory = memory
        self.dtype = dt
        self.shape = tuple(shape)
        self._stream = stream
        self.strides = None if strides is None else tuple(int(s) for s in strides)
        self._offset = int(offset)
        # Its memory, shape and stream never change: the interface is built once.
        self._interface = {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                           "strides": self.strides, "stream": self._stream if self._stream else 1}

    @property
    def ptr(self) -> int:
        return self._memory.ptr + self._offset

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def device(self) -> int:
        return self._memory.device

    @property
    def __cuda_array_interface__(self) -> dict:
        return self._interface

    def numpy(self) -> np.ndarray:
        """A host copy, C-contiguous (waits for the stream it was written on)."""
        if self.strides is None:
            out = np.empty(self.shape, self.dtype)
            self._memory.download_to(out.ctypes.data, out.nbytes, self._stream)
            _gpuk.synchronize(self._memory.device, self._stream)
            return out
        raw = np.empty(self._memory.bytes, np.uint8)
        self._memory.download_to(raw.ctypes.data, raw.nbytes, self._stream)
        _gpuk.synchronize(self._memory.device, self._stream)
        return np.ndarray(self.shape, self.dtype, raw, self._offset, self.strides).copy()

    def __repr__(self) -> str:
        return f"gpuk.DeviceArray(shape={self.shape}, dtype={self.dtype.name}, device={self.device})"


def empty_like(x: Any, dtype: str, shape: Tuple[int, ...], device: int, stream: int) -> Tuple[Any, Arg]:
    """A device array for a result, of the inputs' framework where gpuk knows how to allocate one
    (PyTorch, CuPy), else a gpuk.DeviceArray."""
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        torch = sys.modules["torch"]
        out = torch.empty(shape, dtype=getattr(torch, dtype), device=x.device)
        # Its pointer directly: PyTorch's own protocols do not cover every dtype (uint32).
        return out, Arg(out.data_ptr(), dtype, shape, source=out)
    elif module == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device):
            out = cupy.empty(shape, dtype=dtype)
    else:
        memory = _gpuk.DeviceMemory(device, max(1, math.prod(shape) * np.dtype(dtype).itemsize))
        out = DeviceArray(memory, dtype, shape, stream)
        return out, Arg(memory.ptr, dtype, shape, keep=memory, source=out)
    return out, resolve(out, "result", device=device, stream=stream, writable=True)


def scalar_bits(value: Any, dtype: str, what: str) -> int:
    """The bits of `value` in `dtype`, exact (an integer dtype takes integral values in its range;
    float32 takes what float32 represents: 0.1 is rounded, as the kernel compares in float32)."""
    np_dtype = np.dtype(dtype)
    if np_dtype.kind in "iu":
        if isinstance(value, (float, np.floating)):
            if not float(value).is_integer():
                raise ConfigError(f"{what}: {value!r} is not exact in {dtype}")
            value = int(value)
        try:
            v = int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{what}: {value!r} is not a number") from None
        info = np.iinfo(np_dtype)
        if not info.min <= v <= info.max:
            raise ConfigError(f"{what}: {v} is out of range for {dtype} ([{info.min}, {info.max}])")
        a = np.array(v, dtype=np_dtype)
    else:
        try:
            a = np.array(float(value), dtype=np_dtype)
        except (TypeError, ValueError):
            raise ConfigError(f"{what}: {value!r} is not a number") from None
    raw = a.tobytes()
    return int.from_bytes(raw, "little")


def scalar_args(slot: dict, value: Any, what: str) -> tuple:
    """The native launch's scalar arguments for an operation's scalar slot: (dtype, bits), or for
    a slot of two values (a range: count 2) (dtype, lo's bits, hi's bits) from a pair (lo, hi)."""
    dtype = slot["dtype"]
    if slot.get("count", 1) == 1:
        return (dtype, scalar_bits(value, dtype, what))
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise TypeError(f"{what}: takes two values (lo, hi), not {value!r}")
    return (dtype, scalar_bits(value[0], dtype, f"{what} (lo)"), scalar_bits(value[1], dtype, f"{what} (hi)"))
