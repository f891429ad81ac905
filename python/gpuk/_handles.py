"""Operation and Prepared, the handles an Engine makes (gpuk::Operation, gpuk::PreparedSizes),
and the decoding of the small answers they read back."""
from __future__ import annotations

import collections
import re
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import _gpuk
from ._arrays import DTYPES, count_arg, scalar_args, stream_handle
from ._gpuk import ConfigError

if TYPE_CHECKING:
    from ._engine import Engine


_FIELD = re.compile(r"\s*(\w+)\s+(\w+)(?:\s+at byte\s+(\d+))?\s*")
_RESULT_TYPES: Dict[Tuple[str, ...], type] = {}


def _result_type(names: Tuple[str, ...]) -> type:
    if names not in _RESULT_TYPES:
        _RESULT_TYPES[names] = collections.namedtuple("Result", names)
    return _RESULT_TYPES[names]


def decode(layout: str, raw: bytes) -> Any:
    """A host result from its bytes: a dtype name ("int64") is one value; a layout
    ("{float32 value; int64 index at byte 8}") is a named tuple of its fields."""
    if layout in DTYPES:
        return np.frombuffer(raw, layout, 1)[0].item()
    if not (layout.startswith("{") and layout.endswith("}")):
        raise ConfigError(f"a result of layout '{layout}' that gpuk's Python package cannot read")
    names, values, offset = [], [], 0
    for field in layout[1:-1].split(";"):
        m = _FIELD.fullmatch(field)
        if not m or m.group(1) not in DTYPES:
            raise ConfigError(f"a result of layout '{layout}' that gpuk's Python package cannot read")
        dtype, name, at = m.group(1), m.group(2), m.group(3)
        offset = int(at) if at else offset
        values.append(np.frombuffer(raw, dtype, 1, offset)[0].item())
        names.append(name)
        offset += np.dtype(dtype).itemsize
    return _result_type(tuple(names))(*values)


class _Slot:
    __slots__ = ("name", "output", "type", "bytes", "host_result", "dtype")

    def __init__(self, d: Mapping[str, Any]):
        self.name, self.output, self.type = d["name"], d["output"], d["type"]
        self.bytes, self.host_result = d["bytes"], d["host_result"]
        self.dtype = self.type if self.type in DTYPES else None  # None: a result layout


class _Shape:
    """The arrays and the value a call of an operation takes (Engine.describe, no GPU): what the
    general path checks a call's arguments against before it prepares anything."""

    __slots__ = ("scalar", "_slots", "_inputs", "_outputs")

    def __init__(self, arrays: List[dict], scalar: Optional[dict]):
        self.scalar = scalar
        self._slots = [_Slot(a) for a in arrays]
        self._inputs = [s for s in self._slots if not s.output]
        self._outputs = [s for s in self._slots if s.output]


class _Handle:
    """What an Operation and a Prepared both keep: the engine, the native handle, what was asked
    for, and the arrays and scalar a call takes."""

    def __init__(self, engine: "Engine", native: Any, family: str, operation: str, dtype: str,
                 options: Mapping[str, str]):
        self._engine = engine
        self._native = native
        self.family = family
        self.operation = operation
        self.dtype = dtype
        self.options = dict(options)
        self.arrays: Optional[List[dict]] = native.arrays
        self.scalar: Optional[dict] = native.scalar
        self._read(native)

    def _read(self, native: Any) -> None:
        """What the kind of handle adds from its native one."""


class Operation(_Handle):
    """A prepared variant (gpuk::Operation): chosen, compiled, loaded, checked, with its scratch.

    ``variant`` and ``chosen`` say what runs and why (the report's ``chosen`` line); ``arrays``
    lists what a call takes. Call it on arrays, ``op(x, out=..., stream=...)``, or on device
    pointers, ``op.launch([ptr_in, ptr_out], n, stream)`` (the fast path). It serves the sizes of
    one power-of-two bucket [min_n, max_n], and one stream from one thread at a time.
    """

    def _read(self, native: "_gpuk.Operation") -> None:
        self.variant: str = native.variant
        self.chosen: str = native.chosen
        self.warnings: List[str] = list(native.warnings)
        self.min_n: int = native.min_n
        self.max_n: int = native.max_n
        self.scratch_bytes: int = native.scratch_bytes
        self._slots = [_Slot(a) for a in self.arrays]
        self._inputs = [s for s in self._slots if not s.output]
        self._outputs = [s for s in self._slots if s.output]
        self._reads = any(s.host_result for s in self._outputs)
        # The answer read back when no out= is given (reduce, search): its layout.
        self._answer = next((s.type for s in self._outputs if s.host_result), None)
        # The fast paths' bound methods, looked up once.
        self._launch = native.launch
        self._call_arrays = native.call_arrays
        self._device = self._engine.device

    def __repr__(self) -> str:
        return (f"gpuk.Operation({self.family} {self.operation} {self.dtype}, n in [{self.min_n}, {self.max_n}]: "
                f"{self.variant})")

    def launch(self, arrays: Sequence[int], n: int, stream: Any = 0, value: Any = None) -> None:
        """Enqueues the variant on device pointers (ints, in ``arrays`` order) for n elements, on
        `stream`; returns at once. The cheapest call: no array protocol, no checks but core's."""
        try:
            if self.scalar is None:
                self._launch(arrays, n, stream if stream.__class__ is int else stream_handle(stream))
            else:
                self._launch(arrays, n, stream_handle(stream), *scalar_args(self.scalar, value, "value"))
        except TypeError:  # the binding's own words list its C++ types; say what the call takes
            _pointers(arrays)
            count_arg(n, "n")
            raise

    def __call__(self, *arrays: Any, value: Any = None, out: Any = None, stream: Any = None) -> Any:
        """Runs on arrays: see gpuk.Engine.call. The first array's size must be in [min_n, max_n]."""
        if value is None:
            # Device arrays: read, checked and launched in one call into C++ (_gpuk's call_arrays);
            # anything else comes back NotImplemented, for the general path below.
            s = stream if stream.__class__ is int and stream >= 0 else stream_handle(stream)
            raw = self._call_arrays(arrays, out, s, self._device)
            if raw is None:
                return out[0] if out.__class__ is tuple and len(out) == 1 else out
            if raw is not NotImplemented:
                return decode(self._answer, raw)
        return self._engine._call(self.family, self.operation, arrays, value, out, stream, self.options, op=self)


class Prepared(_Handle):
    """A prepared handle (gpuk::PreparedSizes, what the C++ API's ``prepare_*`` handles are): one
    Operation per power-of-two size bucket of [1, max_n], every one chosen, compiled, loaded and
    given its scratch when it is made, so that no call compiles or allocates. Calls take device
    pointers (ints, in ``arrays`` order), as ``Operation.launch`` does; n = 0 launches nothing.
    It serves one stream at a time (any stream), from one thread at a time.

    ``scratch="caller"`` allocates no scratch: give it ``scratch_bytes`` of device memory with
    ``use_scratch(ptr, nbytes, stream)`` before the first call. A segmented reduction's handle
    (``segments=`` the most segments) takes each call's segment count as ``value=``.
    """

    def _read(self, native: "_gpuk.PreparedSizes") -> None:
        self.max_n: int = native.max_n
        self.step: int = native.step
        self.variants: List[str] = list(native.variants)

    @property
    def scratch_bytes(self) -> int:
        """The scratch of every bucket together: what it holds, or what use_scratch() takes."""
        return self._native.scratch_bytes

    @property
    def held_bytes(self) -> int:
        """The device memory it owns (0 with scratch="caller", until a host-returning call)."""
        return self._native.held_bytes

    def __repr__(self) -> str:
        return (f"gpuk.Prepared({self.family} {self.operation} {self.dtype}, n up to {self.max_n}, "
                f"{len(self.variants)} size buckets)")

    def use_scratch(self, ptr: int, nbytes: int, stream: Any = 0) -> None:
        """The caller's device memory (at least scratch_bytes, 256-byte aligned, alive and used by
        nothing else while the handle may run), initialised on `stream`."""
        self._native.use_scratch(int(ptr), int(nbytes), stream_handle(stream))

    def _scalar(self, value: Any) -> tuple:
        if self.scalar is None:
            if value is not None:
                raise TypeError(f"{self.family} {self.operation} takes no value")
            return ()
        if value is None:
            raise TypeError(f"{self.family} {self.operation} takes value= (the {self.scalar['name']}, "
                            f"{self.scalar['dtype']})")
        return scalar_args(self.scalar, value, f"{self.family} {self.operation}: {self.scalar['name']}")

    def launch(self, arrays: Sequence[int], n: int, stream: Any = 0, value: Any = None) -> None:
        """Enqueues n's bucket on device pointers for n elements, on `stream`; returns at once."""
        self._native.launch(_pointers(arrays), count_arg(n, "n"), stream_handle(stream), *self._scalar(value))

    def launch_and_read(self, arrays: Sequence[int], n: int, stream: Any = 0, value: Any = None) -> Any:
        """launch(), then the small answer (reduce, search; a list of one per channel) on the host,
        after waiting for the stream; its array's pointer may be 0 (the handle's own buffer).
        n = 0: None."""
        raw = self._native.launch_and_read(_pointers(arrays), count_arg(n, "n"), stream_handle(stream),
                                           *self._scalar(value))
        if not raw:
            return None
        layout = next(a["type"] for a in self.arrays if a["host_result"])
        head, x, count = layout.rpartition(" x ")
        if x and count.isdigit():  # one answer per channel: "{float32 value; int64 index at byte 8} x 17"
            each = len(raw) // int(count)
            return [decode(head, raw[i * each:(i + 1) * each]) for i in range(int(count))]
        return decode(layout, raw)


def _pointers(arrays: Sequence[Any]) -> List[int]:
    """Device pointers as integers (0 where the handle's own buffer is meant)."""
    return [count_arg(a, f"arrays[{i}]") for i, a in enumerate(arrays)]
