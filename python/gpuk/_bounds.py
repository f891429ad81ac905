"""``gpuk.search.lower_bound(haystack, needles)`` and ``upper_bound``: many needles in a sorted
array, one int64 index each, with the C++ API's semantics (gpuk/search.hpp; docs/kernels/search.md,
"Bounds"): the first index in [0, n] whose key does not go before the needle, keys ordered as the
sort family orders them (-0.0 before +0.0, every NaN equal and last).

Every argument is checked before the GPU is opened. The answer comes back as an int64 array of the
needles' shape: NumPy for host input, else of the input's framework (PyTorch, CuPy; else
gpuk.DeviceArray); ``out=`` takes an int64 array of the needles' size.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import numpy as np

from . import _gpuk
from ._arrays import Arg, check_on_device, empty_like, resolve, stream_handle
from ._gpuk import ConfigError
from ._engine import Engine, _options_text, default_engine


def _bounds(operation: str, haystack: Any, needles: Any, sorted: bool, out: Any, stream: Any,
            engine: Optional[Engine], options: Dict[str, Any]) -> Any:
    name = f"search.{operation}"
    for key in ("needles", "needle_count"):
        if key in options:
            raise TypeError(f"{name} takes no {key}= option: the needles array gives them (sorted=True says they are sorted)")
    if not isinstance(sorted, bool):
        raise ConfigError(f"{name}: sorted={sorted!r}: True or False")
    e = engine or default_engine()
    s = stream_handle(stream)
    ha = resolve(haystack, f"{name}: haystack", device=e.device, stream=s)
    qa = resolve(needles, f"{name}: needles", device=e.device, stream=s)
    if qa.dtype != ha.dtype:
        raise ConfigError(f"{name}: the needles are {qa.dtype}, the haystack {ha.dtype}; give both one dtype")
    n, m = ha.size, qa.size
    opts = _options_text(options)
    opts["needle_count"] = str(max(m, 1))
    if sorted:
        opts["needles"] = "sorted"
    e._shape("search", operation, ha.dtype, max(n, 1), opts)  # the options and dtype, before the GPU
    host_mode = ha.host is not None or qa.host is not None
    if out is not None:
        o = resolve(out, f"{name}: out", device=e.device, stream=s, writable=True)
        if o.dtype != "int64" or o.size != m:
            raise ConfigError(f"{name}: out must be int64 with {m} elements (one per needle), not {o.dtype} x {o.size}")
        result, oa = out, o
    elif host_mode:
        h = np.empty(qa.shape, np.int64)
        result, oa = h, Arg(0, "int64", qa.shape, host=h, source=h)
    else:
        result, oa = empty_like(qa.source, "int64", qa.shape, e.device, s)
    if m == 0:
        return result  # nothing to answer: nothing is launched
    if n == 0:  # every needle's bound in no keys is 0
        if oa.host is not None:
            oa.host[...] = 0
            return result
        if out is None:
            result[...] = 0
            return result
        raise ConfigError(f"{name}: no keys: every answer is 0; fill out= with zeros instead")
    op = e._operation("search", operation, ha.dtype, n, opts, s)
    if [sl.name for sl in op._slots] != ["haystack", "needles", "indices"]:
        raise ConfigError(f"{name}: the plugin's operation takes {', '.join(sl.name for sl in op._slots)}; this "
                          f"package passes haystack, needles, indices: versions differ")
    keep, downloads = [], []
    for a in (ha, qa, oa):
        if a.host is not None:
            memory = _gpuk.DeviceMemory(e.device, max(1, a.nbytes))
            a.keep, a.ptr = memory, memory.ptr
            keep.append(memory)
            if a is oa:
                downloads.append(a)
            else:
                memory.upload_from(a.host.ctypes.data, a.nbytes, s)
        else:
            check_on_device(a, name, e.device, s)
    op._native.launch([ha.ptr, qa.ptr, oa.ptr], n, s, op.scalar["dtype"], m)
    for a in downloads:
        a.keep.download_to(a.host.ctypes.data, a.nbytes, s)
    if keep:
        _gpuk.synchronize(e.device, s)
    return result


def make_bound(operation: str) -> Callable[..., Any]:
    def function(haystack: Any, needles: Any, *, sorted: bool = False, out: Any = None, stream: Any = None,
                 engine: Optional[Engine] = None, **options: Any) -> Any:
        return _bounds(operation, haystack, needles, sorted, out, stream, engine, options)

    side = "not before" if operation == "lower_bound" else "after"
    function.__name__ = operation
    function.__qualname__ = f"search.{operation}"
    function.__doc__ = (
        f"gpuk search {operation}(haystack, needles, sorted=False): for each needle, the first index in\n"
        f"[0, haystack.size] whose key goes {side} it, as std::{operation}; an int64 array of the needles'\n"
        "shape. The haystack must be sorted as gpuk.sort.keys sorts (NaN last, -0.0 before +0.0; not\n"
        "checked); sorted=True says the needles are sorted too (a faster kernel; any order is still\n"
        "answered right). NumPy for host input, else the input's framework; out= an int64 array.")
    return function


def bound_functions() -> Dict[str, Callable[..., Any]]:
    return {op: make_bound(op) for op in ("lower_bound", "upper_bound")}
