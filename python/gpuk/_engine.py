"""Engine: gpuk::Engine, its operations called on Python arrays (the handles: _handles.py)."""
from __future__ import annotations

import atexit
import os
import threading
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

import numpy as np

from . import _gpuk
from ._arrays import (Arg, check_on_device, count_arg, dtype_name, empty_like, paths_arg, resolve,
                      scalar_args, stream_handle)
from ._gpuk import ConfigError
from ._handles import Operation, Prepared, _Shape, _Slot, decode  # noqa: F401 (gpuk's modules import them from here)


class GpukWarning(UserWarning):
    """What gpuk warns about (a stale tuning entry passed over, a plugin that did not load)."""


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _options_text(options: Mapping[str, Any]) -> Dict[str, str]:
    """The options as a config gives them; an option given as None is left at its default."""
    return {k: _option_text(v) for k, v in options.items() if v is not None}


def _params(params: Optional[Mapping[str, Any]]) -> Dict[str, int]:
    """A kernel's parameters: names and integers (BLOCK=256), as a mapping."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ConfigError(f"params= takes a mapping of parameter names to integers, not {type(params).__name__}")
    return {str(k): count_arg(v, f"params[{k!r}]", minimum=-(1 << 63)) for k, v in params.items()}


TUNING_POLICIES = ("user_database", "shipped_only", "none")


def _tuning_policy(tuning: Any) -> Tuple[str, Optional[str]]:
    """gpuk::TuningPolicy from ``tuning=``: one of TUNING_POLICIES, or a tuning file's path (a
    pathlib.Path or other os.PathLike; a str is a policy's name)."""
    if isinstance(tuning, str):
        if tuning not in TUNING_POLICIES:
            raise ConfigError(f"tuning={tuning!r}: one of {', '.join(TUNING_POLICIES)}, or a tuning file as a "
                              f"pathlib.Path (a string names a policy)")
        return tuning, None
    if isinstance(tuning, os.PathLike):
        return "file", os.fspath(tuning)
    raise ConfigError(f"tuning= takes one of {', '.join(TUNING_POLICIES)} or a pathlib.Path, not "
                      f"{type(tuning).__name__}")


class Engine:
    """gpuk::Engine: the CLI's directories, environment and tuning database, one GPU.

    ``Engine(device=0)`` loads the family plugins and reads the kernel files; the GPU is opened
    on the first call that needs it. ``prepare()`` chooses the variant as ``gpuk run`` does and
    returns an Operation; ``call()`` (and the family functions, ``gpuk.reduce.argmax(x)``)
    prepare once per family, operation, dtype, options, size bucket and stream, and reuse it.

    ``tuning=`` pins what chooses the variant (gpuk::TuningPolicy, docs/api.md "Pinning the
    variant"): ``"user_database"`` (default: the user's tuning database, then the file shipped
    for the GPU, the family's choice, the defaults), ``"shipped_only"`` (what a fresh install
    chooses, whatever the user tuned), ``"none"`` (no tuning file), or a ``pathlib.Path`` of a
    tuning file used where the user's database would be (missing or damaged: ConfigError here).
    """

    def __init__(self, device: int = 0, *, kernels: Iterable[os.PathLike] = (), plugins: Iterable[os.PathLike] = (),
                 cache_dir: Optional[os.PathLike] = None, no_cache: bool = False,
                 tuning_db: Optional[os.PathLike] = None, tuning: Any = "user_database"):
        if isinstance(device, bool) or not isinstance(device, (int, np.integer)) or device < 0:
            raise ConfigError(f"device={device!r}: a GPU ordinal (0, 1, ...)")
        self.device = int(device)
        policy, tuning_file = _tuning_policy(tuning)
        self.tuning = tuning
        self._native = _gpuk.Engine(self.device, paths_arg(kernels, "kernels"), paths_arg(plugins, "plugins"),
                                    None if cache_dir is None else os.fspath(cache_dir), no_cache,
                                    None if tuning_db is None else os.fspath(tuning_db), policy, tuning_file)
        self._emit_warnings()
        self._operations: Dict[tuple, Operation] = {}
        # The family functions' one call into C++: per (family, operation, options), the
        # Operations below by dtype, size bucket, stream and thread (_gpuk.Dispatch).
        self._dispatch: Dict[tuple, Any] = {}
        self._shapes: Dict[tuple, _Shape] = {}
        self._lock = threading.Lock()
        self._families: Optional[List[dict]] = None

    def _emit_warnings(self) -> None:
        for message in self._native.take_warnings():
            warnings.warn(message, GpukWarning, stacklevel=4)

    def families(self) -> List[dict]:
        """The loaded family plugins: name, description, plugin path, operations, dtypes, options
        (name, kind, default, choices, help), default kernel."""
        if self._families is None:
            self._families = self._native.families()
        return [dict(f) for f in self._families]

    def family(self, name: str) -> dict:
        for f in self.families():
            if f["name"] == name:
                return f
        names = ", ".join(f["name"] for f in self.families()) or "none loaded"
        raise ConfigError(f"unknown family '{name}' (the families: {names})")

    def kernels(self) -> List[dict]:
        """The kernel files: name, family, path, summary, operations, dtypes, params (name,
        default, values) and constraints."""
        return self._native.kernel_files()

    def problems(self) -> List[str]:
        """Plugins that did not load and kernel files whose metadata is broken."""
        return list(self._native.plugin_errors()) + list(self._native.kernel_errors())

    def device_info(self) -> dict:
        """The GPU: name, arch, SMs, memory, driver. Opens it; NoDeviceError without one."""
        return self._native.device_info()

    def prepare(self, family: str, operation: str, dtype: Any = "float32", n: int = 1, *,
                options: Optional[Mapping[str, Any]] = None, kernel: Optional[str] = None,
                params: Optional[Mapping[str, int]] = None, sizes: Optional[Mapping[str, int]] = None,
                **option_kwargs: Any) -> Operation:
        """Chooses, compiles (or takes from the cache), loads and checks a variant for n's size
        bucket. Options as keywords (``abs=True``, ``order="descending"``) or ``options=``;
        ``kernel=`` and ``params=`` run exactly that variant. ``sizes=`` prepares a declared
        kernel (family "kernel", operation its name) for exactly those named sizes
        (gpuk::OperationSpec::sizes; n is left out): see gpuk.Kernel."""
        opts = _options_text({**(options or {}), **option_kwargs})
        n = count_arg(n, "n")
        named_sizes = {str(k): count_arg(v, f"sizes[{k!r}]", minimum=1) for k, v in (sizes or {}).items()}
        try:
            native = self._native.prepare(family, operation, dtype_name(dtype), n, opts, kernel, _params(params),
                                          named_sizes)
        finally:
            self._emit_warnings()
        return Operation(self, native, family, operation, dtype_name(dtype), opts)

    def prepare_sizes(self, family: str, operation: str, dtype: Any = "float32", max_n: int = 1, *,
                      scratch: str = "owned", step: int = 1, options: Optional[Mapping[str, Any]] = None,
                      kernel: Optional[str] = None, params: Optional[Mapping[str, int]] = None,
                      **option_kwargs: Any) -> Prepared:
        """A prepared handle for every n up to max_n (gpuk::Engine::prepare_sizes): every size
        bucket chosen, compiled, loaded and given its scratch now (``scratch="caller"``: none,
        see Prepared.use_scratch). ``step=``: every n is a multiple of it (per-channel data:
        the channels). Options as for prepare()."""
        if scratch not in ("owned", "caller"):
            raise ConfigError(f"scratch={scratch!r}: 'owned' or 'caller'")
        for what, v in (("max_n", max_n), ("step", step)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ConfigError(f"{what}={v!r}: a count (0, 1, ...)")
        opts = _options_text({**(options or {}), **option_kwargs})
        try:
            native = self._native.prepare_sizes(family, operation, dtype_name(dtype), int(max_n), opts, kernel,
                                                _params(params), scratch == "owned", int(step))
        finally:
            self._emit_warnings()
        return Prepared(self, native, family, operation, dtype_name(dtype), opts)

    def _shape(self, family: str, operation: str, dtype: str, n: int, options: Mapping[str, str]) -> _Shape:
        """What a call takes, from the plugin (checked as prepare() checks it, without the GPU)."""
        key = (family, operation, dtype, tuple(sorted(options.items())), _gpuk.bucket_first(n))
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shapes[key] = _Shape(*self._native.describe(family, operation, dtype, n, dict(options)))
        return shape

    def _operation(self, family: str, operation: str, dtype: str, n: int, options: Mapping[str, str],
                   stream: int) -> Operation:
        key = (family, operation, dtype, tuple(sorted(options.items())), _gpuk.bucket_first(n) if n else 0, stream,
               threading.get_ident())
        op = self._operations.get(key)
        if op is None:
            with self._lock:
                op = self._operations.get(key)
                if op is None:
                    op = self.prepare(family, operation, dtype, n, options=options)
                    self._operations[key] = op
                    dispatch_key = (family, operation, key[3])
                    dispatch = self._dispatch.get(dispatch_key)
                    if dispatch is None:
                        dispatch = self._dispatch[dispatch_key] = _gpuk.Dispatch(self.device)
                    dispatch.add(dtype, stream, key[6], op)
        return op

    def call(self, family: str, operation: str, *arrays: Any, value: Any = None, out: Any = None,
             stream: Any = None, **options: Any) -> Any:
        """Runs a family's operation on arrays (device arrays zero-copy, host arrays uploaded).

        Positional arrays are the operation's inputs in order (``arrays`` of a prepared
        Operation); ``value`` its scalar (search: the value sought). A small answer (reduce,
        search) comes back as a Python value, after waiting for the stream, unless ``out=``
        names a device array to write it to (then nothing waits). Array results are written to
        ``out=`` (one array, or a tuple in order) or to new arrays of the input's kind: the same
        framework on the GPU (PyTorch, CuPy; else a gpuk.DeviceArray), NumPy for host input.
        """
        opts = _options_text(options)
        return self._call(family, operation, arrays, value, out, stream, opts)

    def _call(self, family, operation, arrays, value, out, stream, options, op: Optional[Operation] = None):
        s = stream_handle(stream)
        device = self.device
        name = f"{family} {operation}"
        if not arrays:
            raise TypeError(f"{name} takes an input array")
        first = resolve(arrays[0], f"{name}: argument 1", device=device, stream=s)
        n = first.size
        # Every argument is checked against what the call takes before the GPU is opened (the
        # plugin says what that is); the Operation is prepared after.
        shape: Any = op
        if op is None:  # n = 0 prepares as n = 1 (its checks, its slots) and launches nothing
            shape = self._shape(family, operation, first.dtype, max(n, 1), options)
        elif first.dtype != op.dtype:
            raise ConfigError(f"{name}: the array is {first.dtype}; this Operation was prepared for {op.dtype}")
        if shape.scalar is not None and value is None and len(arrays) == len(shape._inputs) + 1:
            arrays, value = arrays[:-1], arrays[-1]  # find(x, 42): the value after the arrays
        if len(arrays) != len(shape._inputs):
            raise TypeError(f"{name} takes {len(shape._inputs)} input array(s) "
                            f"({', '.join(sl.name for sl in shape._inputs)}), not {len(arrays)}")
        ins: List[Arg] = [first]
        for i, (x, slot) in enumerate(zip(arrays[1:], shape._inputs[1:]), start=2):
            a = resolve(x, f"{name}: {slot.name}", device=device, stream=s)
            ins.append(a)
        for a, slot in zip(ins, shape._inputs):
            _check_slot(a, slot, n, name)

        scalar_call: tuple = ()
        if shape.scalar is not None:
            if value is None:
                raise TypeError(f"{name} takes value= (the {shape.scalar['name']}, {shape.scalar['dtype']})")
            scalar_call = scalar_args(shape.scalar, value, f"{name}: {shape.scalar['name']}")
        elif value is not None:
            raise TypeError(f"{name} takes no value")

        fixed = (family, operation) in _FIXED_OUTPUTS
        given = out if isinstance(out, tuple) else (() if out is None else (out,))
        if given and len(given) != len(shape._outputs):
            raise TypeError(f"{name}: out= takes {len(shape._outputs)} array(s) "
                            f"({', '.join(sl.name for sl in shape._outputs)}), not {len(given)}")
        host_mode = any(a.host is not None for a in ins)
        outs: List[Optional[Arg]] = []
        results: List[Any] = []
        read = False
        for i, slot in enumerate(shape._outputs if given else ()):
            a = resolve(given[i], f"{name}: out ({slot.name})", device=device, stream=s, writable=True)
            _check_slot(a, slot, n, name, fixed)
            outs.append(a)
            results.append(given[i])
        # Every argument checked: now the GPU.
        if op is None:
            op = self._operation(family, operation, first.dtype, max(n, 1), options, s)
        for slot in shape._outputs if not given else ():
            if slot.host_result:
                outs.append(None)  # the Operation's own buffer; launch_and_read copies it back
                results.append(None)
                read = True
            elif host_mode:
                out_shape = (_fixed_elements(slot),) if fixed else first.shape
                h = np.empty(out_shape, slot.dtype)
                outs.append(Arg(0, slot.dtype, out_shape, host=h, source=h))
                results.append(h)
            else:
                result, a = empty_like(first.source, slot.dtype, (_fixed_elements(slot),) if fixed else first.shape,
                                       device, s)
                outs.append(a)
                results.append(result)

        if n == 0:  # nothing to do, as in C++: nothing is launched, out= is not written
            if read:
                answer = _empty_answer(family, operation, next(sl.type for sl in op._outputs if sl.host_result))
                results = [answer if r is None else r for r in results]
            return results[0] if len(results) == 1 else tuple(results)
        # Host arrays: uploaded into device memory for the call, results downloaded after it.
        downloads = []
        for a in ins + [o for o in outs if o is not None]:
            if a.host is not None:
                memory = _gpuk.DeviceMemory(device, max(1, a.nbytes))
                a.keep, a.ptr = memory, memory.ptr
                if a in ins:
                    memory.upload_from(a.host.ctypes.data, a.nbytes, s)
                else:
                    downloads.append(a)
            else:
                check_on_device(a, name, device, s)
        # In the Operation's own order of arrays (sort_pairs: keys_in, keys_out, values_in, values_out).
        by_slot = dict(zip(map(id, shape._inputs), ins))
        by_slot.update(zip(map(id, shape._outputs), outs))
        pointers = [0 if by_slot[id(sl)] is None else by_slot[id(sl)].ptr for sl in shape._slots]
        if read:
            raw = op._native.launch_and_read(pointers, n, s, *scalar_call)
            answer = decode(next(sl.type for sl in op._outputs if sl.host_result), raw)
            results = [answer if r is None else r for r in results]
        else:
            op._native.launch(pointers, n, s, *scalar_call)
        for a in downloads:
            a.keep.download_to(a.host.ctypes.data, a.nbytes, s)
        if host_mode or downloads:
            _gpuk.synchronize(device, s)  # the uploads' memory and the host results are done with
        return results[0] if len(results) == 1 else tuple(results)


# The answer of an empty input, as the C++ typed calls give it: an index of -1 (argmax, argmin,
# max, min; search's find, any and find_if), zero values, a zero sum and count.
_EMPTY_MINUS_ONE = {("search", "find"), ("search", "any"), ("search", "find_if")}


def _empty_answer(family: str, operation: str, layout: str) -> Any:
    answer = decode(layout, bytes(64))
    indices = [f for f in getattr(answer, "_fields", ()) if f == "index" or f.endswith("_index")]
    if indices:  # argmax's index, argminmax's min_index and max_index
        return answer._replace(**{f: -1 for f in indices})
    return -1 if (family, operation) in _EMPTY_MINUS_ONE else answer


# Operations whose outputs have the size the plugin's slot gives for any n (top-k: rows * k), not n
# elements: their outputs are checked and made at that size.
_FIXED_OUTPUTS = {("sort", "topk")}


def _fixed_elements(slot: _Slot) -> int:
    return slot.bytes // np.dtype(slot.dtype).itemsize


def _check_slot(a: Arg, slot: _Slot, n: int, name: str, fixed: bool = False) -> None:
    if slot.dtype is not None:
        if a.dtype != slot.dtype:
            raise ConfigError(f"{name}: {slot.name} must be {slot.dtype}, not {a.dtype}")
        if fixed:
            if a.size != _fixed_elements(slot):
                raise ConfigError(f"{name}: {slot.name} has {a.size} elements; it takes {_fixed_elements(slot)}")
        elif a.size != n:
            raise ConfigError(f"{name}: {slot.name} has {a.size} elements, the input {n}")
    elif a.nbytes < slot.bytes:
        raise ConfigError(f"{name}: {slot.name} ({slot.type}) needs {slot.bytes} bytes; the array has {a.nbytes}")


_default: Optional[Engine] = None
_default_lock = threading.Lock()


def default_engine() -> Engine:
    """The Engine the module-level functions use: device 0 (or $GPUK_DEVICE), the CLI's
    directories and defaults. Replace it with set_default_engine()."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Engine(int(os.environ.get("GPUK_DEVICE", "0")))
    return _default


def set_default_engine(engine: Engine) -> None:
    global _default
    _default = engine


@atexit.register
def _drop_default_engine() -> None:
    # Its Operations (device scratch, modules) go while the interpreter and the driver are alive.
    global _default
    _default = None
