"""``gpuk.sort.segmented_sort(keys, offsets)`` and ``segmented_sort_pairs(keys, values, offsets)``:
each segment of the keys sorted on its own, stably, with the C++ API's semantics (gpuk/sort.hpp,
``segmented_keys`` / ``segmented_pairs``; docs/kernels/sort.md, "Segmented sort"), as
cub::DeviceSegmentedSort.

Every argument is checked before the GPU is opened; host offsets are checked in full (within
[0, n], non-decreasing, segments not overlapping), device offsets are not (they stay on the
device). The answer comes back as arrays of the input's kind: NumPy for host input (keys outside
every segment keep their input values), else of the input's framework (PyTorch, CuPy; else
gpuk.DeviceArray), where keys outside every segment are not written (as in C++ and CUB).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import numpy as np

from . import _gpuk
from ._arrays import Arg, check_on_device, empty_like, resolve, stream_handle
from ._gpuk import ConfigError
from ._engine import Engine, _options_text, default_engine
from ._layouts import _element_count, _segment_bounds

MAX_SEGMENTS = (1 << 31) - 1  # one block each (plugins/sort/host_segments.hpp)
SLOTS = {"segmented_sort": ["keys_in", "keys_out", "begin_offsets", "end_offsets"],
         "segmented_sort_pairs": ["keys_in", "keys_out", "values_in", "values_out", "begin_offsets", "end_offsets"]}


def _check_never_decreasing(offsets: np.ndarray, name: str) -> None:
    down = np.flatnonzero(offsets[1:] < offsets[:-1])
    if down.size:
        i = int(down[0]) + 1
        raise ConfigError(f"{name}: offsets[{i}] = {int(offsets[i])} is less than offsets[{i - 1}] = "
                          f"{int(offsets[i - 1])}: offsets never decrease (segment s is offsets[s]:offsets[s + 1])")


def _check_disjoint(begin: np.ndarray, end: np.ndarray, name: str) -> None:
    """Segments of one sort must not overlap (the kernel writes each one's keys from its own)."""
    live = np.flatnonzero(end > begin)
    if live.size < 2:
        return
    order = live[np.argsort(begin[live], kind="stable")]
    clash = np.flatnonzero(begin[order[1:]] < end[order[:-1]])
    if clash.size:
        a, b = int(order[clash[0]]), int(order[clash[0] + 1])
        raise ConfigError(f"{name}: segments {a} [{int(begin[a])}, {int(end[a])}) and {b} [{int(begin[b])}, "
                          f"{int(end[b])}) overlap; the segments of one sort must not")


def _segmented_sort(keys: Any, values: Any, offsets: Any, begin: Any, end: Any, out: Any, stream: Any,
                    engine: Optional[Engine], options: Dict[str, Any], name: str) -> Any:
    for key in ("segments", "segment_lengths"):
        if key in options:
            raise TypeError(f"{name} takes no {key}= option: the offsets give the segments")
    if "begin_bit" in options or "end_bit" in options:
        raise ConfigError(f"{name} sorts by the whole key: begin_bit and end_bit are options of gpuk.sort.keys")
    if isinstance(values, str):
        raise TypeError(f"{name}: values= takes the values array (their dtype comes from it), not {values!r}")
    e = engine or default_engine()
    s = stream_handle(stream)
    ka = resolve(keys, f"{name}: keys", device=e.device, stream=s)
    n = ka.size
    va = None
    opts = _options_text(options)
    if values is not None:
        va = resolve(values, f"{name}: values", device=e.device, stream=s)
        if va.size != n:
            raise ConfigError(f"{name}: values has {va.size} elements, the keys {n}")
        width = np.dtype(va.dtype).itemsize
        if width not in (4, 8):
            raise ConfigError(f"{name}: values of {va.dtype} are {width} bytes; a pair carries 4- or 8-byte values")
        opts["values"] = f"uint{8 * width}"  # carried as their bits, as C++ carries any 4- or 8-byte type
    operation = "segmented_sort" if va is None else "segmented_sort_pairs"
    # The segment count checked (the plugin's limits, the options, the dtype) before offsets are
    # copied or converted: 2^31 offsets are refused, not copied.
    given = _element_count(offsets) if offsets is not None else _element_count(begin)
    count_before = given - 1 if offsets is not None and given else given
    if count_before is not None and count_before > MAX_SEGMENTS:
        raise ConfigError(f"{name}: segments must be fewer than 2^31, not {count_before}")
    e._shape("sort", operation, ka.dtype, max(n, 1), {**opts, "segments": str(max(count_before or 1, 1))})

    covered = False
    count, bounds, h = _segment_bounds(offsets, begin, end, name, e.device, s, n)
    if h is not None:
        _check_never_decreasing(h, name)
        covered = int(h[0]) == 0 and int(h[-1]) == n
    elif offsets is None and bounds[0].host is not None and bounds[1].host is not None:
        _check_disjoint(bounds[0].host.reshape(-1), bounds[1].host.reshape(-1), name)

    inputs = [ka] + ([va] if va is not None else [])
    host_mode = any(a.host is not None for a in inputs)
    results, outs = _outputs(e, name, inputs, out, host_mode, s)
    if n == 0 or count == 0:
        return _answer(results)  # nothing to sort: nothing is launched (as in C++)
    op = e._operation("sort", operation, ka.dtype, n, {**opts, "segments": str(count)}, s)
    if [sl.name for sl in op._slots] != SLOTS[operation]:
        raise ConfigError(f"{name}: the plugin's operation takes {', '.join(sl.name for sl in op._slots)}; this "
                          f"package passes {', '.join(SLOTS[operation])}: versions differ")
    keep, downloads = [], []

    def on_device(a: Arg, upload: Optional[np.ndarray]) -> None:
        if a.host is None:
            check_on_device(a, name, e.device, s)
            return
        memory = _gpuk.DeviceMemory(e.device, max(1, a.nbytes))
        a.keep, a.ptr = memory, memory.ptr
        keep.append(memory)
        if upload is not None:
            memory.upload_from(upload.ctypes.data, a.nbytes, s)

    for a in inputs + bounds:
        on_device(a, a.host)
    for o in outs:
        # A host output comes back whole, so it goes in whole: keys outside every segment keep
        # what it held (a new one is a copy of the input).
        on_device(o, None if covered else o.host)
        if o.host is not None:
            downloads.append(o)
    if va is None:
        pointers = [ka.ptr, outs[0].ptr, bounds[0].ptr, bounds[1].ptr]
    else:
        pointers = [ka.ptr, outs[0].ptr, va.ptr, outs[1].ptr, bounds[0].ptr, bounds[1].ptr]
    op._native.launch(pointers, n, s, op.scalar["dtype"], count)
    for a in downloads:
        a.keep.download_to(a.host.ctypes.data, a.nbytes, s)
    if keep:
        _gpuk.synchronize(e.device, s)  # the uploads are done with; host results are here
    return _answer(results)


def _outputs(e: Engine, name: str, inputs: List[Arg], out: Any, host_mode: bool, s: int):
    """The outputs (keys, and values for pairs): out= checked against the inputs, else new arrays of
    the input's kind (host mode: copies of the inputs, NumPy)."""
    what = ["keys", "values"][:len(inputs)]
    if out is not None:
        given = out if isinstance(out, tuple) else (out,)
        if len(given) != len(inputs):
            raise TypeError(f"{name}: out= takes {len(inputs)} array(s) ({', '.join(what)}), not {len(given)}")
        outs = []
        for x, a, w in zip(given, inputs, what):
            o = resolve(x, f"{name}: out ({w})", device=e.device, stream=s, writable=True)
            if np.dtype(o.dtype).itemsize != np.dtype(a.dtype).itemsize or (w == "keys" and o.dtype != a.dtype):
                raise ConfigError(f"{name}: out ({w}) must be {a.dtype}, not {o.dtype}")
            if o.size != a.size:
                raise ConfigError(f"{name}: out ({w}) has {o.size} elements, the input {a.size}")
            outs.append(o)
        return list(given), outs
    results, outs = [], []
    for a in inputs:
        if host_mode:
            h = a.host.copy() if a.host is not None else np.empty(a.shape, a.dtype)
            results.append(h)
            outs.append(Arg(0, a.dtype, a.shape, host=h, source=h))
        else:
            r, o = empty_like(a.source, a.dtype, a.shape, e.device, s)
            results.append(r)
            outs.append(o)
    return results, outs


def _answer(results: List[Any]) -> Any:
    return results[0] if len(results) == 1 else tuple(results)


def segmented_sort(keys: Any, offsets: Any = None, *, begin: Any = None, end: Any = None, values: Any = None,
                   out: Any = None, stream: Any = None, engine: Optional[Engine] = None, **options: Any) -> Any:
    return _segmented_sort(keys, values, offsets, begin, end, out, stream, engine, options, "sort.segmented_sort")


def segmented_sort_pairs(keys: Any, values: Any, offsets: Any = None, *, begin: Any = None, end: Any = None,
                         out: Any = None, stream: Any = None, engine: Optional[Engine] = None, **options: Any) -> Any:
    if values is None:
        raise TypeError("sort.segmented_sort_pairs takes the values array after the keys")
    return _segmented_sort(keys, values, offsets, begin, end, out, stream, engine, options,
                           "sort.segmented_sort_pairs")


_DOC = (
    "as cub::DeviceSegmentedSort, stable.\n\n"
    "segmented_sort(keys, offsets) or segmented_sort(keys, begin=b, end=e): segment s is\n"
    "keys.flat[begin[s]:end[s]] (offsets: segments + 1 integers, begin = offsets[:-1], end = offsets[1:]),\n"
    "empty when end[s] <= begin[s], sorted on its own in the order (order=\"ascending\" | \"descending\";\n"
    "float_order=\"total\": -0.0 before +0.0, every NaN equal and last ascending, first descending;\n"
    "\"cub\": as CUB). values=: an array of the keys' size (any 4- or 8-byte dtype, carried as its bits)\n"
    "that follows its keys; then (keys, values) come back. Offsets: int64 on the GPU; host integer\n"
    "offsets are converted and checked (within [0, keys.size], never decreasing, segments not\n"
    "overlapping); GPU offsets are not checked: one outside [0, keys.size] reads and writes outside\n"
    "the arrays, as in CUB. Arrays of the input's kind: NumPy for host input (keys outside every\n"
    "segment keep their values), else the input's framework (keys outside every segment are not\n"
    "written: out= keeps them). out= takes the keys' array, or (keys, values). See docs/python.md.")
segmented_sort.__qualname__ = "sort.segmented_sort"
segmented_sort.__doc__ = "gpuk sort segmented_sort: each segment of the keys sorted on its own, " + _DOC
segmented_sort_pairs.__qualname__ = "sort.segmented_sort_pairs"
segmented_sort_pairs.__doc__ = ("gpuk sort segmented_sort_pairs(keys, values, offsets): segmented_sort(keys, offsets, "
                                "values=values); returns (keys, values). Each segment sorted on its own, " + _DOC)


def segmented_sort_functions() -> Dict[str, Callable[..., Any]]:
    return {"segmented_sort": segmented_sort, "segmented_sort_pairs": segmented_sort_pairs}
