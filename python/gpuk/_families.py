"""The families' operations as functions: ``gpuk.reduce.argmax(x)``, ``gpuk.sort.keys(x)``, ...

Every loaded family plugin becomes a namespace with one function per operation the plugin lists
(``gpuk.<family>.<operation>``); nothing here names an operation except the few friendlier
names below and how an answer is shaped.
"""
from __future__ import annotations

import math
import types
from typing import Any, Callable, Dict, Optional

import numpy as np

from ._arrays import dtype_name, resolve, stream_handle
from ._gpuk import ConfigError
from ._engine import Engine, _options_text, decode, default_engine

# Friendlier names for some operations (NumPy's words), and what of a composite answer a
# function returns: reduce max/min leave the index unspecified, argsort is NumPy's argsort (the
# indices), the sorted keys are gpuk.sort.keys.
ALIASES: Dict[str, Dict[str, str]] = {"sort": {"keys": "sort", "pairs": "sort_pairs"}}
_ANSWER_FIELD: Dict[tuple, str] = {("reduce", "max"): "value", ("reduce", "min"): "value"}
_ANSWER_INDEX: Dict[tuple, int] = {("sort", "argsort"): -1}
# Options that change what a call takes (reduce's segments and channels): their own functions.
_LAYOUT_OPTIONS: Dict[str, Dict[str, str]] = {
    "reduce": {"segments": "segmented_", "segment_min": "segmented_", "segment_max": "segmented_",
               "segment_seed": "segmented_", "channels": "per_channel_"}}


def _dtype_of(x: Any) -> Optional[str]:
    """The dtype name of an array of any framework (NumPy, CuPy, PyTorch, JAX), without touching it."""
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return None
    try:
        return dtype_name(dtype)
    except Exception:
        return str(dtype).rsplit(".", 1)[-1]  # torch.uint32 -> uint32; the call checks it


def _is_empty(x: Any) -> bool:
    shape = getattr(x, "shape", None)
    if shape is None:
        try:
            shape = np.shape(x)
        except Exception:
            return False
    try:
        return math.prod(int(d) for d in shape) == 0
    except TypeError:
        return False


def _options_from_arrays(family: str, operation: str, arrays: tuple, options: Dict[str, Any]) -> None:
    # sort_pairs carries values of a dtype named by the `values` option: the values array says it.
    if family == "sort" and operation == "sort_pairs" and len(arrays) > 1 and "values" not in options:
        dtype = _dtype_of(arrays[1])
        if dtype is not None:
            options["values"] = dtype


def _options_doc(options: Any) -> str:
    """The family's options as a docstring lists them (name, default, choices, help)."""
    lines = []
    for o in options or ():
        choices = f" ({' | '.join(o['choices'])})" if o.get("choices") else ""
        default = f", default {o['default']}" if o.get("default") else ""
        lines.append(f"  {o['name']}: {o['kind']}{choices}{default}. {o.get('help', '')}".rstrip())
    return ("\n\nOptions (keywords; None leaves one at its default):\n" + "\n".join(lines)) if lines else ""


def make_function(family: str, operation: str, description: str, options: Any = ()) -> Callable[..., Any]:
    field = _ANSWER_FIELD.get((family, operation))
    index = _ANSWER_INDEX.get((family, operation))

    dispatch_key = (family, operation, ())
    layout_options = _LAYOUT_OPTIONS.get(family, {})

    def function(*arrays: Any, value: Any = None, out: Any = None, stream: Any = None,
                 engine: Optional[Engine] = None, **options: Any) -> Any:
        if value is None and index is None and not (options and layout_options.keys() & options.keys()):
            # Device arrays: one call into C++ finds the Operation prepared for these options,
            # dtype, size bucket, stream and thread, reads the arrays and launches
            # (_gpuk.Dispatch); NotImplemented (not prepared yet, host arrays, anything to
            # explain) leaves it to the general path below.
            key = (family, operation, tuple(sorted(_options_text(options).items()))) if options else dispatch_key
            dispatch = (engine or default_engine())._dispatch.get(key)
            if dispatch is not None:
                s = stream if stream.__class__ is int and stream >= 0 else stream_handle(stream)
                r = dispatch.call(arrays, out, s)
                if r is None:
                    return out[0] if out.__class__ is tuple and len(out) == 1 else out
                if r is not NotImplemented:
                    answer = decode(r[1]._answer, r[0])
                    return answer if field is None else getattr(answer, field)
        for option, prefix in _LAYOUT_OPTIONS.get(family, {}).items():
            if option in options:
                raise TypeError(f"gpuk.{family}.{operation} takes no {option}= (it reduces one array): use "
                                f"gpuk.{family}.{prefix}{operation}")
        e = engine or default_engine()
        if operation == "sort_pairs":
            _options_from_arrays(family, operation, arrays, options)
        if index is not None and out is not None and not isinstance(out, tuple):
            out = _with_scratch_outputs(e, family, operation, arrays, out, stream, options)
        if field is not None and out is None and arrays and _is_empty(arrays[0]):
            # C++ answers {0, index -1}; a bare value would hide that nothing was reduced.
            raise ConfigError(f"{family} {operation} of an empty array has no value (arg{operation} gives index -1; "
                              f"with out= nothing is written)")
        result = e.call(family, operation, *arrays, value=value, out=out, stream=stream, **options)
        if field is not None and out is None:
            return getattr(result, field)
        if index is not None:
            return result[index]
        return result

    function.__name__ = operation
    function.__qualname__ = f"{family}.{operation}"
    function.__doc__ = (f"gpuk {family} {operation}: {description}\n\n"
                        f"gpuk.{family}.{operation}(x, ..., value=None, out=None, stream=None, engine=None, **options)"
                        " runs on device arrays (zero-copy) or host arrays (uploaded; NumPy back); see"
                        " gpuk.Engine.call and docs/python.md." + _options_doc(options))
    return function


def _with_scratch_outputs(engine: Engine, family, operation, arrays, out, stream, options):
    # argsort(x, out=indices): the sorted keys go to a scratch array of the input's kind.
    from ._arrays import empty_like
    s = stream_handle(stream)
    first = resolve(arrays[0], "argument 1", device=engine.device, stream=s)
    if first.host is not None:
        import numpy as np
        keys = np.empty(first.shape, first.dtype)
    else:
        keys, _ = empty_like(first.source, first.dtype, first.shape, engine.device, s)
    return (keys, out)


def make_topk(description: str) -> Callable[..., Any]:
    """gpuk.sort.topk: the k largest (or smallest) of each row and their indices, as torch.topk."""

    def topk(x: Any, k: int, largest: bool = True, sorted: bool = True, *, out: Any = None, stream: Any = None,
             engine: Optional[Engine] = None, **options: Any) -> Any:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ConfigError(f"sort topk: k={k!r}: a count of at least 1")
        e = engine or default_engine()
        s = stream_handle(stream)
        first = resolve(x, "sort topk: argument 1", device=e.device, stream=s)
        shape = tuple(first.shape) or (1,)
        rows = math.prod(shape[:-1])
        if first.size == 0 or rows == 0:
            raise ConfigError(f"sort topk of an empty array (shape {tuple(first.shape)}) has no k keys")
        if k > shape[-1]:
            raise ConfigError(f"sort topk: k ({k}) must be at most the row's length, {shape[-1]}")
        opts = {"order": "descending" if largest else "ascending", "k": int(k), "rows": rows,
                "sorted": bool(sorted), **options}
        if out is None:
            out_shape = shape[:-1] + (int(k),)
            if first.host is not None:
                out = (np.empty(out_shape, first.dtype), np.empty(out_shape, np.int64))
            else:
                from ._arrays import empty_like
                out = (empty_like(first.source, first.dtype, out_shape, e.device, s)[0],
                       empty_like(first.source, "int64", out_shape, e.device, s)[0])
        return e.call("sort", "topk", x, out=out, stream=stream, **opts)

    topk.__qualname__ = "sort.topk"
    topk.__doc__ = (f"gpuk sort topk: {description}\n\n"
                    "gpuk.sort.topk(x, k, largest=True, sorted=True, out=None, stream=None, engine=None)"
                    " returns (values, indices) of shape x.shape[:-1] + (k,): of each row (the last axis), the"
                    " first k keys of its stable sort (largest: descending) and their int64 indices in the row;"
                    " ties by the lower index, NaN above +inf; sorted=False: in input order (any k up to the"
                    " row's length; sorted takes k <= 4096). docs/python.md, \"Top-k\".")
    return topk


# search.find_if(x, "<", v): the comparison as C++ writes it, or as the `compare` option names it.
COMPARE_SYMBOLS: Dict[str, str] = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def _find_if(function: Callable[..., Any]) -> Callable[..., Any]:
    def find_if(x: Any, compare: Any = None, value: Any = None, **kwargs: Any) -> Any:
        if compare is None:
            raise TypeError("gpuk.search.find_if needs a comparison: find_if(x, \"<\", value) "
                            "(==, !=, <, <=, >, >= or eq, ne, lt, le, gt, ge)")
        return function(x, value=value, compare=COMPARE_SYMBOLS.get(compare, compare), **kwargs)

    find_if.__name__ = "find_if"
    find_if.__qualname__ = "search.find_if"
    find_if.__doc__ = ("gpuk search find_if(x, compare, value): the lowest index i with x[i] <compare> value, or -1. "
                       "compare: ==, !=, <, <=, >, >= (or eq, ne, lt, le, gt, ge), as C++ compares: a comparison "
                       "with NaN is false, != is true.\n\n" + (function.__doc__ or ""))
    return find_if


class Family(types.SimpleNamespace):
    """One family plugin's operations as functions (``gpuk.reduce``)."""

    def __repr__(self) -> str:
        return f"<gpuk family {self.name}: {', '.join(self.operations)}>"


def family_namespaces(engine: Engine) -> Dict[str, Family]:
    out = {}
    for f in engine.families():
        functions = {op: make_function(f["name"], op, f["description"], f["options"]) for op in f["operations"]}
        for alias, op in ALIASES.get(f["name"], {}).items():
            if op in functions:
                functions[alias] = functions[op]
        if f["name"] == "sort" and "topk" in functions:
            functions["topk"] = make_topk(f["description"])
        if f["name"] == "sort" and "segmented_sort" in functions:
            from ._segmented_sort import segmented_sort_functions
            functions.update(segmented_sort_functions())
        if f["name"] == "search" and "find_if" in functions:
            functions["find_if"] = _find_if(functions["find_if"])
        if f["name"] == "search" and "lower_bound" in functions:
            from ._bounds import bound_functions
            functions.update(bound_functions())
        if f["name"] == "reduce":
            from ._layouts import layout_functions
            functions.update(layout_functions(f))
        out[f["name"]] = Family(name=f["name"], description=f["description"], operations=list(f["operations"]),
                                dtypes=list(f["dtypes"]), options=f["options"], **functions)
    return out
