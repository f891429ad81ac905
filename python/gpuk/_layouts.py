"""Segmented and per-channel reductions: ``gpuk.reduce.segmented_argmax(x, offsets)`` and
``gpuk.reduce.per_channel_argmax(image)``, over the reduce family's ``segments`` and ``channels``
options (docs/kernels/reduce.md, "Segments and channels"), with the C++ API's semantics
(gpuk/reduce.hpp): one answer per segment or channel, argmax/argmin's index relative to the
segment's begin (or the pixel), an empty segment CUB's initial value and index -1.

Every argument is checked before the GPU is opened. The answers come back as arrays: NumPy for
host input, else of the input's framework (PyTorch, CuPy; else gpuk.DeviceArray), the values and
indices as views into the device's 16-byte records; ``out=`` takes the records themselves.
"""
from __future__ import annotations

import collections
import math
import re
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from . import _gpuk
from ._arrays import Arg, DeviceArray, check_on_device, empty_like, resolve, stream_handle
from ._gpuk import ConfigError
from ._engine import Engine, _options_text, default_engine

OPERATIONS = ("argmax", "argmin", "max", "min", "sum")
MAX_CHANNELS = 1024
RECORD_BYTES = 16  # {value; int64 index at byte 8}

SegmentedBest = collections.namedtuple("SegmentedBest", ["values", "indices"])
SegmentedBest.__doc__ = "Per segment or channel: the best values and their indices (arrays)."


def _value_dtype(dtype: str, abs_: bool, operation: str) -> str:
    """The dtype of an answer's value: |x| of a signed integer is its unsigned type; a sum
    accumulates in 64 bits (float64, int64, uint64)."""
    d = np.dtype(dtype)
    if abs_ and d.kind == "i":
        d = np.dtype(f"uint{d.itemsize * 8}")
    if operation == "sum":
        return {"f": "float64", "i": "int64", "u": "uint64"}[d.kind]
    return d.name


def _slot_value_dtype(slot_type: str) -> str:
    """The value's dtype in a results slot's type: "{float32 value; int64 index at byte 8} x 5", "float64 x 5"."""
    head = slot_type.rsplit(" x ", 1)[0].strip()
    m = re.match(r"\{\s*(\w+)\s+value", head)
    return m.group(1) if m else head


def _integer(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{what}={value!r}: an integer")
    return int(value)


def _element_count(x: Any) -> Optional[int]:
    """How many elements an array or sequence holds, read from its shape (nothing copied)."""
    shape = getattr(x, "shape", None)
    try:
        if shape is not None:
            return math.prod(int(d) for d in shape)
        return len(x) if hasattr(x, "__len__") else None
    except (TypeError, ValueError):
        return None


def _host_offsets(x: Any, what: str) -> Arg:
    h = np.asarray(x)
    if h.size == 0:
        h = h.astype(np.int64)
    if h.dtype.kind not in "iu" or h.dtype == np.bool_:
        raise ConfigError(f"{what}: offsets are integers (int64), not {h.dtype.name}")
    if h.dtype != np.int64:
        if h.dtype.kind == "u" and int(h.max()) > np.iinfo(np.int64).max:
            raise ConfigError(f"{what}: an offset past int64's range")
        h = h.astype(np.int64)
    h = np.ascontiguousarray(h.reshape(-1))
    return Arg(0, "int64", h.shape, host=h, source=h)


def _offsets_arg(x: Any, what: str, device: int, stream: int) -> Arg:
    """An int64 offsets array: host integer arrays are converted (exactly); device ones must be int64."""
    if isinstance(x, np.ndarray) or not (hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__")):
        return _host_offsets(x, what)
    try:
        a = resolve(x, what, device=device, stream=stream)
    except ConfigError as e:
        if "not one of gpuk's dtypes" in str(e):
            raise ConfigError(f"{what}: offsets on the GPU must be int64 ({e})") from None
        raise
    if a.host is not None:  # a DLPack array on the CPU
        return _host_offsets(a.host, what)
    if a.dtype != "int64":
        raise ConfigError(f"{what}: offsets on the GPU must be int64, not {a.dtype} (the C++ API's std::int64_t; "
                          f"convert them, e.g. offsets.to(torch.int64) or offsets.astype(cupy.int64))")
    return a


def _check_host_offsets(a: Arg, what: str, n: int) -> None:
    # The C++ API's precondition (every offset within [0, n]) checked where the offsets are on the host.
    if a.host is None or a.size == 0:
        return
    h = a.host.reshape(-1)
    bad = np.flatnonzero((h < 0) | (h > n))
    if bad.size:
        i = int(bad[0])
        raise ConfigError(f"{what}[{i}] = {int(h[i])} is outside [0, {n}] (the input has {n} elements)")


def _record_views(buffer: Any, value_dtype: str, count: int, host: bool) -> SegmentedBest:
    """The values and indices of `count` 16-byte records ({value; int64 index at byte 8})."""
    if host:  # a NumPy byte buffer: contiguous copies
        records = np.frombuffer(buffer, np.dtype({"names": ["value", "index"], "formats": [value_dtype, "int64"],
                                                   "offsets": [0, 8], "itemsize": RECORD_BYTES}), count)
        return SegmentedBest(np.ascontiguousarray(records["value"]), np.ascontiguousarray(records["index"]))
    if isinstance(buffer, DeviceArray):
        m, s = buffer._memory, buffer._stream
        return SegmentedBest(DeviceArray(m, value_dtype, (count,), s, strides=(RECORD_BYTES,)),
                             DeviceArray(m, "int64", (count,), s, strides=(RECORD_BYTES,), offset=8))
    module = type(buffer).__module__.split(".")[0]
    if module == "torch":
        import torch
        return SegmentedBest(buffer.view(getattr(torch, value_dtype))[:, 0], buffer[:, 1])
    return SegmentedBest(buffer.view(value_dtype)[:, 0], buffer[:, 1])  # CuPy


def _run(engine: Engine, operation: str, name: str, xa: Arg, inputs: List[Arg], count: int, launch_n: int,
         options: dict, out: Any, s: int) -> Any:
    """Prepares (cached per segment or channel count, as the C++ calls), launches, shapes the answer."""
    device = engine.device
    op = engine._operation("reduce", operation, xa.dtype, launch_n, options, s)
    if [sl.name for sl in op._slots][-1:] != ["results"] or len(op._slots) != len(inputs) + 1:
        raise ConfigError(f"{name}: the plugin's operation takes {', '.join(sl.name for sl in op._slots)}; this "
                          f"package passes {len(inputs) + 1} arrays (input, offsets, results): versions differ")
    result_slot = op._outputs[0]
    value_dtype = _slot_value_dtype(result_slot.type)
    each = 8 if operation == "sum" else RECORD_BYTES
    host_mode = xa.host is not None
    keep = []
    if out is not None:
        o = resolve(out, f"{name}: out", device=device, stream=s, writable=True)
        if o.nbytes < count * each:
            raise ConfigError(f"{name}: out needs {count * each} bytes ({count} x {result_slot.type.split(' x ')[0]}); "
                              f"the array has {o.nbytes}")
        result, results_arg = out, o
    elif host_mode:
        raw = np.empty(count * each, np.uint8)
        result, results_arg = raw, Arg(0, "int64", (count * each // 8,), host=raw, source=raw)
    elif operation == "sum":
        result, results_arg = empty_like(xa.source, value_dtype, (count,), device, s)
    else:
        result, results_arg = empty_like(xa.source, "int64", (count, 2), device, s)
    downloads = []
    for a in inputs + [results_arg]:
        if a.host is not None:
            memory = _gpuk.DeviceMemory(device, max(1, a.nbytes))
            a.keep, a.ptr = memory, memory.ptr
            keep.append(memory)
            if a is results_arg:
                downloads.append(a)
            else:
                memory.upload_from(a.host.ctypes.data, a.nbytes, s)
        else:
            check_on_device(a, name, device, s)
    pointers = [a.ptr for a in inputs] + [results_arg.ptr]
    if op.scalar is not None:  # a segmented Operation takes its segment count (at most the count it was prepared for)
        op._native.launch(pointers, launch_n, s, op.scalar["dtype"], count)
    else:
        op._native.launch(pointers, launch_n, s)
    for a in downloads:
        a.keep.download_to(a.host.ctypes.data, a.nbytes, s)
    if keep:
        _gpuk.synchronize(device, s)  # the uploads are done with; host results are here
    if out is not None:
        return out
    if operation == "sum":
        return np.frombuffer(result, value_dtype, count).copy() if host_mode else result
    views = _record_views(result, value_dtype, count, host_mode)
    return views if operation in ("argmax", "argmin") else views.values


def _segment_bounds(offsets: Any, begin: Any, end: Any, name: str, device: int, s: int,
                    n: int) -> Tuple[int, List[Arg], Optional[np.ndarray]]:
    """The segments' begin and end offsets as two int64 Args, their count, and the host offsets
    when given as one host array: from `offsets` (segments + 1 of them; begin = offsets[:-1],
    end = offsets[1:], uploaded once each where on the host) or from `begin=` and `end=` (one each
    per segment). Host offsets are checked against n (reduce's and sort's segmented calls)."""
    if offsets is not None:
        if begin is not None or end is not None:
            raise TypeError(f"{name} takes offsets, or begin= and end=, not both")
        oa = _offsets_arg(offsets, f"{name}: offsets", device, s)
        if oa.size == 0:
            raise ConfigError(f"{name}: offsets has no element; it holds segments + 1 offsets ([0] for none)")
        _check_host_offsets(oa, f"{name}: offsets", n)
        count = oa.size - 1
        if oa.host is not None:
            h = oa.host.reshape(-1)
            return count, [Arg(0, "int64", (count,), host=np.ascontiguousarray(h[:-1])),
                           Arg(0, "int64", (count,), host=np.ascontiguousarray(h[1:]))], h
        bounds = [Arg(oa.ptr, "int64", (count,), keep=oa.keep, source=oa.source),
                  Arg(oa.ptr + 8, "int64", (count,), keep=oa.keep, source=oa.source)]
        bounds[0].check_pointer = bounds[1].check_pointer = oa.check_pointer
        return count, bounds, None
    if begin is None or end is None:
        raise TypeError(f"{name} takes offsets (segments + 1 of them), or begin= and end= (one each per segment)")
    ba = _offsets_arg(begin, f"{name}: begin", device, s)
    ea = _offsets_arg(end, f"{name}: end", device, s)
    if ba.size != ea.size:
        raise ConfigError(f"{name}: begin has {ba.size} offsets, end {ea.size}; one each per segment")
    _check_host_offsets(ba, f"{name}: begin", n)
    _check_host_offsets(ea, f"{name}: end", n)
    return ba.size, [ba, ea], None


def _no_segments(engine: Engine, x: Arg, operation: str, options: dict, out: Any, s: int) -> Any:
    """No segments: nothing is launched (as in C++); the answer is empty arrays of the input's kind."""
    if out is not None:
        return out
    value_dtype = _value_dtype(x.dtype, options.get("abs") == "true", operation)
    if x.host is not None:
        values, indices = np.empty(0, value_dtype), np.empty(0, np.int64)
    else:
        values, _ = empty_like(x.source, value_dtype, (0,), engine.device, s)
        indices, _ = empty_like(x.source, "int64", (0,), engine.device, s)
    if operation in ("argmax", "argmin"):
        return SegmentedBest(values, indices)
    return values


def _layout_options(name: str, abs_: Any, options: dict) -> dict:
    for key in ("segments", "segment_min", "segment_max", "segment_seed", "channels"):
        if key in options:
            raise TypeError(f"{name} takes no {key}= option: " + (
                "the image's last axis or channels= gives the channels" if name.startswith("reduce.per_channel")
                else "the offsets give the segments" if key.startswith("segment") else "use per_channel_*"))
    if not isinstance(abs_, bool):
        raise ConfigError(f"{name}: abs={abs_!r}: True or False")
    opts = _options_text(options)
    if abs_:
        opts["abs"] = "true"
    return opts


def make_segmented(operation: str) -> Callable[..., Any]:
    name = f"reduce.segmented_{operation}"

    def function(x: Any, offsets: Any = None, *, begin: Any = None, end: Any = None, abs: bool = False,
                 out: Any = None, stream: Any = None, engine: Optional[Engine] = None, **options: Any) -> Any:
        e = engine or default_engine()
        s = stream_handle(stream)
        opts = _layout_options(name, abs, options)
        xa = resolve(x, f"{name}: x", device=e.device, stream=s)
        n = xa.size
        # The segment count checked (the plugin's limit, the options) before offsets are copied or
        # converted: 2^31 offsets are refused, not copied into a process that runs out of memory.
        given = _element_count(offsets) if offsets is not None else _element_count(begin)
        count_before = given - 1 if offsets is not None and given else given
        if count_before:
            e._shape("reduce", operation, xa.dtype, max(n, 1), {**opts, "segments": str(count_before)})
        count, bounds, _ = _segment_bounds(offsets, begin, end, name, e.device, s, n)
        inputs = [xa] + bounds
        if count == 0:
            return _no_segments(e, xa, operation, opts, out, s)
        opts["segments"] = str(count)
        # An input of no elements has only empty segments; they are still answered (n counts 1).
        return _run(e, operation, name, xa, inputs, count, max(n, 1), opts, out, s)

    function.__name__ = f"segmented_{operation}"
    function.__qualname__ = name
    function.__doc__ = (
        f"gpuk reduce segmented_{operation}: {operation} of each segment, as cub::DeviceSegmentedReduce.\n\n"
        f"segmented_{operation}(x, offsets) or segmented_{operation}(x, begin=b, end=e): segment s is\n"
        "x.flat[begin[s]:end[s]] (offsets: segments + 1 int64, begin = offsets[:-1], end = offsets[1:]);\n"
        "empty when end[s] <= begin[s]; offsets within [0, x.size] (checked for host offsets).\n"
        + ("Returns (values, indices), the index relative to begin[s]; " if operation in ("argmax", "argmin") else
           "Returns the sums (64-bit accumulators); " if operation == "sum" else "Returns the values; ")
        + "an empty segment gets CUB's initial value (lowest for max, highest for min, 0 for sum) and index -1.\n"
          "Arrays of the input's kind (NumPy for host input). out= takes the device records (16 bytes each,\n"
          "{value; int64 index at byte 8}; a sum 8) and is returned. abs=True reduces |x|. See docs/python.md.")
    return function


def make_per_channel(operation: str) -> Callable[..., Any]:
    name = f"reduce.per_channel_{operation}"

    def function(image: Any, *, channels: Optional[int] = None, abs: bool = False, out: Any = None,
                 stream: Any = None, engine: Optional[Engine] = None, **options: Any) -> Any:
        e = engine or default_engine()
        s = stream_handle(stream)
        opts = _layout_options(name, abs, options)
        xa = resolve(image, f"{name}: image", device=e.device, stream=s)
        if channels is None:
            if len(xa.shape) < 2:
                raise ConfigError(f"{name}: a {len(xa.shape)}-d array has no channel axis; pass an HWC image "
                                  f"(channels last) or channels=")
            channels = xa.shape[-1]
        channels = _integer(channels, f"{name}: channels")
        if not 1 <= channels <= MAX_CHANNELS:
            raise ConfigError(f"{name}: channels={channels}: from 1 to {MAX_CHANNELS}")
        if xa.size % channels:
            raise ConfigError(f"{name}: {xa.size} elements are not a multiple of channels={channels} "
                              f"(interleaved data holds channels elements per pixel)")
        pixels = xa.size // channels
        if pixels == 0:
            if out is not None:
                return out  # nothing to reduce: nothing is launched, out is not written (as in C++)
            raise ConfigError(f"{name}: the image has no pixels: no channel has an answer (with out=, nothing "
                              f"is written, as in C++)")
        opts["channels"] = str(channels)
        return _run(e, operation, name, xa, [xa], channels, xa.size, opts, out, s)

    function.__name__ = f"per_channel_{operation}"
    function.__qualname__ = name
    function.__doc__ = (
        f"gpuk reduce per_channel_{operation}: {operation} of each channel of interleaved (HWC) data, one launch.\n\n"
        f"per_channel_{operation}(image) takes the last axis as the channels; channels=C takes any C-contiguous\n"
        "array of pixels x C elements (C from 1 to 1024). "
        + ("Returns (values, indices), the index the pixel (flat over the other axes; np.unravel_index(i, "
           "image.shape[:-1]) gives its place). " if operation in ("argmax", "argmin") else
           "Returns one answer per channel. ")
        + "Arrays of the input's kind (NumPy for host input); out= takes the device records (16 bytes each, a sum 8).\n"
          "An image of no pixels is refused unless out= is given (then nothing is written, as in C++).")
    return function


def layout_functions(family: dict) -> dict:
    """The reduce family's segmented_* and per_channel_* functions, where its plugin takes the
    `segments` and `channels` options."""
    names = {o["name"] for o in family["options"]}
    out = {}
    for operation in OPERATIONS:
        if operation not in family["operations"]:
            continue
        if "segments" in names:
            out[f"segmented_{operation}"] = make_segmented(operation)
        if "channels" in names:
            out[f"per_channel_{operation}"] = make_per_channel(operation)
    return out
