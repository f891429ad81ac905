"""gpuk.Kernel: a declared kernel (the `kernel` family, docs/declared.md) called on arrays.

    k = gpuk.Kernel("configs/kernel_stencil2d.yaml")     # a run config: its kernel, sizes, params
    k = gpuk.Kernel("stencil2d")                         # a declared kernel gpuk sees, by name
    k = gpuk.Kernel("my_kernels/scale2d.cu")             # a kernel file and the declaration beside it
    out = k(out, grid)                                   # nx, ny from grid's shape (ny, nx)

The arrays are the declaration's, in its order (``k.arrays``): device arrays zero-copy
(__cuda_array_interface__, DLPack), NumPy arrays uploaded and their outputs copied back. Named
sizes come from the arrays' shapes where the declared lengths say them, else from keywords. The
call prepares an Operation per sizes, stream and thread through the C++ Engine
(OperationSpec::sizes) and launches it with Operation::launch; a later call on arrays of the same
shapes is one call into C++ (_gpuk.ShapeDispatch).
"""
from __future__ import annotations

import json
import operator
import os
import re
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _gpuk
from ._arrays import Arg, check_on_device, count_arg, resolve, stream_handle
from ._cli import WrongAnswerError
from ._engine import Engine, Operation, _params, default_engine
from ._gpuk import ConfigError

FAMILY = "kernel"
VARIANTS = ("auto", "default")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _factors(length: str, sizes: Sequence[str]) -> Optional[List[str]]:
    """The sizes whose product a declared length is (`nx * ny` -> [nx, ny]), each once; None for
    any other expression."""
    text = length.strip()
    while text.startswith("(") and text.endswith(")") and text.count("(") == 1:
        text = text[1:-1].strip()
    parts = [p.strip() for p in text.split("*")]
    if len(set(parts)) != len(parts) or not all(_IDENT.fullmatch(p) and p in sizes for p in parts):
        return None
    return parts


def axes_of(factors: List[str]) -> List[str]:
    """The sizes along a C-ordered array's axes, outermost first: names ending in x, y, z (nx, ny,
    nz) run z, y, x (x the last axis, the fastest, as CUDA's threads run); any other names in the
    product's order (``m * k``: shape (m, k))."""
    ends = [f[-1] for f in factors]
    if len(factors) > 1 and set(ends) <= set("xyz") and len(set(ends)) == len(factors):
        return sorted(factors, key=lambda f: "zyx".index(f[-1]))
    return list(factors)


def infer_sizes(declaration: Mapping[str, Any], shapes: Sequence[Tuple[int, ...]]) -> Dict[str, Tuple[int, str]]:
    """The named sizes the arrays' shapes say, each with the array that said it: a length that is
    one size is the array's element count (any shape); a product of as many sizes as the array
    has axes gives one size per axis (axes_of). Raises ConfigError when two arrays disagree."""
    found: Dict[str, Tuple[int, str]] = {}
    for a, shape in zip(declaration["arrays"], shapes):
        factors = _factors(a["length"], declaration["sizes"])
        if factors is None:
            continue
        if len(factors) == 1:
            said = {factors[0]: int(np.prod(shape, dtype=np.int64)) if shape else 1}
        elif len(factors) == len(shape):
            said = dict(zip(axes_of(factors), (int(e) for e in shape)))
        else:
            continue
        for name, value in said.items():
            if name in found and found[name][0] != value:
                raise ConfigError(f"kernel {declaration['name']}: {a['name']}'s shape {tuple(shape)} says {name} = "
                                  f"{value}, {found[name][1]}'s says {found[name][0]} (lengths: "
                                  f"{_lengths(declaration)}); pass {name}= to say which")
            found[name] = (value, a["name"])
    return found


def _lengths(declaration: Mapping[str, Any]) -> str:
    return ", ".join(f"{a['name']} {a['length']}" for a in declaration["arrays"])


def _declare_text(declare: Any) -> str:
    if isinstance(declare, str):
        return declare
    if isinstance(declare, Mapping):
        return json.dumps(declare)  # JSON is YAML
    raise ConfigError(f"declare= takes a mapping of a declaration's keys or its YAML text, not {type(declare).__name__}")


def _is_path(source: str) -> bool:
    return source.endswith((".yaml", ".yml", ".cu", ".cuh")) or os.sep in source or "/" in source


class Kernel:
    """A declared kernel (docs/declared.md) called on arrays: ``k(*arrays, stream=None, **sizes)``.

    ``source``: a run config of the `kernel` family (``.yaml``: its kernel, sizes, ``params:`` or
    ``variant:``, ``declare:``), a kernel file (``.cu``, declared by its metadata block or the
    YAML file beside it; read through an Engine over its folder unless ``engine=`` sees it), or
    the name of a declared kernel the engine sees. ``params=`` runs exactly that variant;
    ``variant="auto"`` (the default without params) the tuning database's pick for the sizes
    (as ``gpuk run`` with ``variant: auto``), ``"default"`` the declaration's defaults.
    ``declare=`` (a mapping, or YAML text) replaces keys of the kernel's declaration, as a
    config's ``declare:``. Nothing here needs a GPU: the first call prepares.
    """

    def __init__(self, source: Union[str, os.PathLike], *, params: Optional[Mapping[str, int]] = None,
                 variant: Optional[str] = None, declare: Any = None, engine: Optional[Engine] = None):
        if variant is not None and variant not in VARIANTS:
            raise ConfigError(f"variant={variant!r}: 'auto' (the tuning database's pick) or 'default' (the "
                              f"declaration's defaults); name a variant with params=")
        if variant is not None and params is not None:
            raise ConfigError("give params= (a named variant) or variant=, not both")
        source = os.fspath(source)
        if not isinstance(source, str):
            raise ConfigError(f"gpuk.Kernel takes a config, a kernel file or a kernel's name, not {source!r}")
        self._config_sizes: Dict[str, int] = {}
        pick, chosen = "lookup", {}
        if source.endswith((".yaml", ".yml")):
            self._engine = engine or default_engine()
            config = self._engine._native.declared_config(source)
            name, declaration = config["kernel"], config["declaration"]
            self._config_sizes = dict(config["sizes"])
            pick, chosen = config["pick"], dict(config["params"])
        elif _is_path(source):
            path = os.path.abspath(source)
            if not os.path.isfile(path):
                raise ConfigError(f"{source}: no such kernel file")
            name = os.path.splitext(os.path.basename(path))[0]
            self._engine = engine or Engine(default_engine().device, kernels=[os.path.dirname(path)])
            declaration = None
        else:
            self._engine = engine or default_engine()
            name, declaration = source, None
        if declare is not None:
            declaration = self._engine._native.declare_kernel(name, _declare_text(declare))
        elif declaration is None:
            try:
                declaration = self._engine._native.declared_kernel(name)
            except ConfigError as e:
                if "plain CUDA" not in str(e) and "no declaration" not in str(e):
                    raise
                raise ConfigError(f"{e}; from Python: gpuk.Kernel({source!r}, declare={{...}})") from None
        if _is_path(source) and not source.endswith((".yaml", ".yml")):
            if os.path.realpath(declaration["path"]) != os.path.realpath(path):
                raise ConfigError(f"{source}: the engine finds kernel {name} at {declaration['path']}; give "
                                  f"gpuk.Kernel an Engine(kernels=[{os.path.dirname(path)!r}]) that sees this file")
        if params is not None:
            pick, chosen = "named", _params(params)
        elif variant == "auto":
            pick, chosen = "lookup", {}
        elif variant == "default":
            pick, chosen = "defaults", {}
        self.name: str = name
        self.declaration: dict = declaration
        self.sizes: List[str] = list(declaration["sizes"])
        self.arrays: List[dict] = list(declaration["arrays"])
        self.params: Dict[str, int] = chosen
        self.pick: str = pick
        self._device = self._engine.device
        outputs = [i for i, a in enumerate(self.arrays) if a["role"] != "in"]
        self._result: Callable[[tuple], Any] = operator.itemgetter(*outputs) if outputs else (lambda arrays: None)
        self._operations: Dict[tuple, Operation] = {}
        self._slots: Dict[tuple, List[dict]] = {}
        self._dispatch = _gpuk.ShapeDispatch(self._device)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        how = {"lookup": "variant auto", "defaults": "the declaration's defaults"}.get(
            self.pick, " ".join(f"{k}={v}" for k, v in self.params.items()))
        arrays = ", ".join(f"{a['name']} {a['dtype']} {a['role']}" for a in self.arrays)
        return f"gpuk.Kernel({self.name}: {arrays}; {how})"

    def __call__(self, *arrays: Any, stream: Any = None, **sizes: Any) -> Any:
        """Runs the kernel on `arrays` (the declaration's arrays, in order) on `stream`; returns
        the output arrays (role out or inout: one, or a tuple in order), the caller's own objects.
        Device arrays: enqueued, nothing waits. Host (NumPy) arrays: uploaded, run, the outputs
        copied back into them, and the call waits."""
        s = stream if stream.__class__ is int and stream >= 0 else stream_handle(stream)
        if self._dispatch.call(arrays, sizes, s) is None:
            return self._result(arrays)
        return self._call(arrays, s, sizes)

    def sizes_for(self, *arrays: Any, **sizes: Any) -> Dict[str, int]:
        """The named sizes a call on these arrays runs for: keywords, else the arrays' shapes, else
        the config's sizes. Checks the arrays against the declaration (count, dtype, length);
        needs no GPU."""
        args = self._resolve(arrays, 0)
        return self._sizes(args, sizes)[0]

    def prepare(self, stream: Any = None, **sizes: Any) -> Operation:
        """The Operation for these sizes (every one given) on `stream` from this thread: its
        ``launch([ptr, ...], op.max_n, stream)`` takes device pointers in the declaration's order."""
        s = stream_handle(stream)
        missing = [n for n in self.sizes if n not in sizes and n not in self._config_sizes]
        if missing:
            raise ConfigError(f"kernel {self.name} needs the sizes {', '.join(missing)} (its sizes: "
                              f"{', '.join(self.sizes)})")
        return self._operation(self._checked_sizes({**self._config_sizes, **sizes}), s)

    def verify(self, *arrays: Any, reference: Any, atol: float = 1e-6, rtol: float = 1e-5, stream: Any = None,
               **sizes: Any) -> Any:
        """Runs the kernel on copies of the arrays' data (outputs poisoned with 0xA5 bytes, as
        ``gpuk run`` does) and compares each output with `reference`: a function of the input
        arrays (role in and inout, as NumPy copies, in order) returning the expected outputs, or
        the expected outputs themselves: one array (one output), a sequence in the outputs'
        order, or a mapping by name (None, or a name left out, leaves an output uncompared).
        Integers exactly; floats within ``atol + rtol * |expected|``, NaN where NaN. Raises
        gpuk.WrongAnswerError naming the output, how many differ, the first bad index and the
        largest errors; returns the outputs (NumPy). The caller's arrays are not written."""
        s = stream_handle(stream)
        args = self._resolve(arrays, s)
        host = []
        for a, arg in zip(self.arrays, args):
            copy = np.empty(arg.shape, arg.dtype)
            if a["role"] == "out":
                copy.view(np.uint8)[...] = 0xA5
            elif arg.host is not None:
                copy[...] = arg.host
            else:
                check_on_device(arg, f"{self.name}: {a['name']}", self._device, s)
                _gpuk.copy_to_host(self._device, arg.ptr, copy.ctypes.data, copy.nbytes, s)
            host.append(copy)
        inputs = [h.copy() for a, h in zip(self.arrays, host) if a["role"] != "out"]
        self(*host, stream=s, **sizes)
        outputs = [(a, h) for a, h in zip(self.arrays, host) if a["role"] != "in"]
        expected = self._expected(reference, inputs, outputs)
        problems = [p for p in (_compare(a["name"], got, expected.get(a["name"]), atol, rtol) for a, got in outputs) if p]
        if problems:
            raise WrongAnswerError(f"kernel {self.name}: mismatch: " + "; ".join(problems))
        got = [h for _, h in outputs]
        return got[0] if len(got) == 1 else tuple(got)

    # The general path: every check before the GPU, then prepare (once per sizes, stream and
    # thread), launch, and register the arrays' shapes for the one-call path.
    def _call(self, arrays: tuple, s: int, sizes: Mapping[str, Any]) -> Any:
        args = self._resolve(arrays, s)
        chosen, slots = self._sizes(args, sizes)
        op = self._operation(chosen, s)
        device = self._device
        keep = []
        pointers = []
        for a, arg in zip(self.arrays, args):
            if arg.host is None:
                check_on_device(arg, f"{self.name}: {a['name']}", device, s)
                pointers.append(arg.ptr)
                continue
            memory = _gpuk.DeviceMemory(device, max(1, arg.host.nbytes))
            if a["role"] != "out":
                memory.upload_from(arg.host.ctypes.data, arg.host.nbytes, s)
            keep.append((a, arg, memory))
            pointers.append(memory.ptr)
        if not keep:
            self._dispatch.add(arrays, dict(sizes), s, op)
        op._native.launch(pointers, op.max_n, s)
        if keep:
            for a, arg, memory in keep:
                if a["role"] != "in":
                    memory.download_to(arg.host.ctypes.data, arg.host.nbytes, s)
            _gpuk.synchronize(device, s)
        return self._result(arrays)

    def _resolve(self, arrays: tuple, s: int) -> List[Arg]:
        if len(arrays) != len(self.arrays):
            raise TypeError(f"kernel {self.name} takes {len(self.arrays)} arrays, in the declaration's order "
                            f"({', '.join(a['name'] for a in self.arrays)}); got {len(arrays)}")
        args = []
        for a, x in zip(self.arrays, arrays):
            what = f"kernel {self.name}: {a['name']}"
            arg = resolve(x, what, device=self._device, stream=s, writable=a["role"] != "in")
            if arg.dtype != a["dtype"]:
                raise ConfigError(f"{what} is {arg.dtype}; the kernel declares {a['dtype']}")
            args.append(arg)
        return args

    def _checked_sizes(self, sizes: Mapping[str, Any]) -> Dict[str, int]:
        for name in sizes:
            if name not in self.sizes:
                raise ConfigError(f"kernel {self.name} has no size {name!r}; its sizes: {', '.join(self.sizes)}")
        return {name: count_arg(sizes[name], name, minimum=1) for name in self.sizes}

    def _sizes(self, args: List[Arg], given: Mapping[str, Any]) -> Tuple[Dict[str, int], List[dict]]:
        """The sizes of a call (keywords, else the arrays' shapes, else the config's) and the
        arrays they make, each array checked against its length."""
        for name in given:
            if name not in self.sizes:
                raise ConfigError(f"kernel {self.name} has no size {name!r}; its sizes: {', '.join(self.sizes)}")
        inferred = infer_sizes(self.declaration, [arg.shape for arg in args])
        sizes: Dict[str, Any] = {}
        source: Dict[str, str] = {}  # where each size came from, for the messages
        for name in self.sizes:
            if name in given:
                sizes[name], source[name] = given[name], "given"
            elif name in inferred:
                sizes[name], source[name] = inferred[name][0], f"{inferred[name][1]}'s shape"
            elif name in self._config_sizes:
                sizes[name], source[name] = self._config_sizes[name], "the config's"
        missing = [n for n in self.sizes if n not in sizes]
        if missing:
            shapes = ", ".join(f"{a['name']} {tuple(arg.shape)} for {a['length']}" for a, arg in zip(self.arrays, args))
            raise ConfigError(f"kernel {self.name}: the arrays' shapes do not say {', '.join(missing)} ({shapes}); "
                              f"pass {', '.join(f'{n}=' for n in missing)} (its sizes: {', '.join(self.sizes)})")
        sizes = self._checked_sizes(sizes)
        key = tuple(sizes.values())
        slots = self._slots.get(key)
        if slots is None:
            slots = self._slots[key] = self._engine._native.declared_arrays(self.name, sizes)
        for a, arg, slot in zip(self.arrays, args, slots):
            if arg.nbytes != slot["bytes"]:
                said = ", ".join(f"{k}={v} ({source[k]})" for k, v in sizes.items())
                raise ConfigError(f"kernel {self.name}: {a['name']} has {arg.size} elements (shape {tuple(arg.shape)}); "
                                  f"for {said} it takes {slot['bytes'] // np.dtype(a['dtype']).itemsize} "
                                  f"({a['length']})")
        return sizes, slots

    def _operation(self, sizes: Dict[str, int], s: int) -> Operation:
        key = (tuple(sizes.values()), s, threading.get_ident())
        op = self._operations.get(key)
        if op is None:
            with self._lock:
                op = self._operations.get(key)
                if op is None:
                    engine = self._engine
                    named = self.pick != "lookup"
                    try:
                        native = engine._native.prepare(FAMILY, self.name, "float32", 0, {}, self.name if named else None,
                                                        self.params if self.pick == "named" else {}, sizes)
                    finally:
                        engine._emit_warnings()
                    op = self._operations[key] = Operation(engine, native, FAMILY, self.name,
                                                           self.arrays[0]["dtype"] if self.arrays else "float32", {})
        return op

    def _expected(self, reference: Any, inputs: List[np.ndarray], outputs: List[Tuple[dict, np.ndarray]]) -> Dict[str, Any]:
        names = [a["name"] for a, _ in outputs]
        value = reference(*inputs) if callable(reference) else reference
        if isinstance(value, Mapping):
            unknown = [k for k in value if k not in names]
            if unknown:
                raise ConfigError(f"kernel {self.name}: the reference names {', '.join(map(str, unknown))}, not an output "
                                  f"(its outputs: {', '.join(names)})")
            return dict(value)
        if len(names) == 1 and not isinstance(value, (tuple, list)):
            return {names[0]: value}
        if isinstance(value, (tuple, list)) and len(value) == len(names):
            return dict(zip(names, value))
        raise ConfigError(f"kernel {self.name}: the reference gives {type(value).__name__}; it gives the outputs "
                          f"({', '.join(names)}): one array for one output, a sequence in their order, or a mapping")


def _compare(name: str, got: np.ndarray, expected: Any, atol: float, rtol: float) -> Optional[str]:
    """One output against its expected values: None when it matches, else what is wrong (the
    declared family's words: how many differ, the first bad index, the largest errors)."""
    if expected is None:
        return None
    want = np.asarray(expected)
    g = got.reshape(-1)
    if want.size != g.size:
        return f"{name}: the reference has {want.size} elements, the output {g.size}"
    w = want.reshape(-1)
    if g.dtype.kind in "iu" and w.dtype.kind == "f":
        # Expected floats as they are: 2.7 never matches 2, as a cast to the output's dtype made it.
        wf = w.astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~(np.isfinite(wf) & (wf == np.trunc(wf))) | (g.astype(np.float64) != wf)
        rule = "exact"
    elif g.dtype.kind in "iu":
        bad = g != w.astype(g.dtype)
        rule = "exact"
    else:
        w = w.astype(np.float64)
        gf = g.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            # NaN only where NaN, infinities exactly, the rest within the tolerance.
            close = np.isfinite(w) & (np.abs(gf - w) <= atol + rtol * np.abs(w))
            same = (np.isnan(gf) & np.isnan(w)) | (np.isinf(w) & (gf == w))
        bad = ~(close | same)
        rule = f"atol {atol:g} + rtol {rtol:g} * |expected|"
    count = int(np.count_nonzero(bad))
    if count == 0:
        return None
    first = int(np.argmax(bad))
    gf, wf = g.astype(np.float64), w.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        err = np.abs(gf[bad] - wf[bad])
        rel = err / np.abs(wf[bad])
    max_abs = float(np.nanmax(err)) if err.size and not np.all(np.isnan(err)) else float("nan")
    max_rel = float(np.nanmax(rel)) if rel.size and not np.all(np.isnan(rel)) else float("nan")
    return (f"{name}: {count} of {g.size} differ ({rule}); first at index {first} (got {g[first]}, expected "
            f"{w[first]}); max abs error {max_abs:.3g}, max rel error {max_rel:.3g}")
