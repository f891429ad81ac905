"""Kernel Tuner's `arguments`, `answer`, `cmem_args` and `verify` as a declaration's args, the
tuner's arrays, answers and constants, and a verify function over gpuk's outputs."""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from .._arrays import resolve
from .._gpuk import ConfigError

_SCALARS = {"int32", "uint32", "int64", "uint64", "float32", "float64"}


@dataclass
class Arguments:
    args: List[dict] = field(default_factory=list)        # the declaration's args, in order
    arrays: Dict[str, Any] = field(default_factory=dict)  # name -> the caller's array (host or device)
    answers: Dict[str, np.ndarray] = field(default_factory=dict)
    compare: Dict[str, dict] = field(default_factory=dict)
    shapes: Dict[str, tuple] = field(default_factory=dict)
    outputs: List[str] = field(default_factory=list)      # role inout, in order
    names: List[str] = field(default_factory=list)        # every argument's, in order


def _host(x: Any) -> np.ndarray:
    """A NumPy copy of an answer given as NumPy, CuPy, PyTorch or JAX."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "get") and callable(x.get) and type(x).__module__.startswith("cupy"):
        return x.get()
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def declare(arguments: List[Any], names: List[str], const: List[bool], answer: Optional[List[Any]],
            atol: float, verify: Optional[Callable], kernel_name: str, device: int = 0) -> Arguments:
    """The declaration's args from Kernel Tuner's list. Roles: an array with an answer is an
    output (inout: it starts from the caller's data before every run, as Kernel Tuner restores
    it); with `verify` and no answer every array is one; with neither, every array not declared
    `const T*` is, and each variant is compared with the first one's outputs."""
    if not isinstance(arguments, (list, tuple)):
        raise ConfigError("arguments must be a list (NumPy arrays and NumPy scalars, in the kernel's order)")
    if answer is not None and len(answer) != len(arguments):
        raise ConfigError(f"answer has {len(answer)} entries; it needs one per argument ({len(arguments)}), None "
                          f"where an argument is not checked")
    out = Arguments(names=list(names))
    for i, (x, name) in enumerate(zip(arguments, names)):
        what = f"argument {i} ({name})"
        if isinstance(x, np.generic) and not isinstance(x, np.ndarray):
            dtype = x.dtype.name
            if dtype not in _SCALARS:
                raise ConfigError(f"{what}: a {dtype} scalar; gpuk's scalars are {', '.join(sorted(_SCALARS))}")
            if answer is not None and answer[i] is not None:
                raise ConfigError(f"{what}: a scalar has no output to check; its answer must be None")
            value = float(x) if dtype.startswith("float") else int(x)
            out.args.append({"name": name, "scalar": dtype, "value": value})
            continue
        if isinstance(x, (bool, int, float)):
            raise ConfigError(f"{what}: a Python {type(x).__name__} has no width; give a NumPy scalar "
                              f"(numpy.int32({x!r}), numpy.float32(...)) as Kernel Tuner asks")
        if type(x).__name__ == "Tunable":
            raise ConfigError(f"{what}: Tunable arguments (mixed-precision tuning) are not gpuk's")
        arg = resolve(x, f"{kernel_name}: {what}", device=device, stream=0)
        dtype = np.dtype(arg.dtype).name
        length = arg.size
        if length == 0:
            raise ConfigError(f"{what}: an empty array; a kernel's array needs at least one element")
        checked = answer is not None and answer[i] is not None
        if answer is not None:
            output = checked
        elif verify is not None:
            output = True
        else:
            output = not const[i]
        out.args.append({"name": name, "array": dtype, "length": length, "role": "inout" if output else "in"})
        # The tuner takes host memory (it uploads it to every GPU it measures on): a device array
        # is copied by its own framework.
        out.arrays[name] = np.ascontiguousarray(_host(x)).reshape(-1)
        out.shapes[name] = tuple(arg.shape)
        if output:
            out.outputs.append(name)
        if checked and verify is None:
            expected = _host(answer[i])
            if expected.size != length:
                raise ConfigError(f"answer {i} ({name}) has {expected.size} elements, the argument {length}")
            if not np.can_cast(np.dtype(dtype), expected.dtype):
                raise ConfigError(f"answer {i} ({name}) is {expected.dtype}, which the argument's {dtype} cannot "
                                  f"be compared in")
            out.answers[name] = np.ascontiguousarray(expected.reshape(-1)).astype(dtype, copy=False)
        if output and verify is None and np.dtype(dtype).kind == "f":
            # numpy.allclose's rule; integers are compared exactly (gpuk takes no tolerance for them)
            out.compare[name] = {"atol": float(atol), "rtol": 1e-5}
    return out


def constants(cmem_args: Optional[Dict[str, Any]]) -> tuple:
    """The declaration's constants ([{name, array: dtype, length}]) and their data."""
    if not cmem_args:
        return [], {}
    if not isinstance(cmem_args, dict):
        raise ConfigError("cmem_args must be a dict {symbol: NumPy array}")
    declared, data = [], {}
    for name, value in cmem_args.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ConfigError(f"cmem_args: {name!r} is not a symbol's name")
        host = _host(value) if not isinstance(value, np.generic) else np.asarray(value).reshape(1)
        dtype = host.dtype.name
        if dtype not in _SCALARS:
            raise ConfigError(f"cmem_args {name}: {dtype}; gpuk's dtypes are {', '.join(sorted(_SCALARS))}")
        declared.append({"name": name, "array": dtype, "length": int(host.size)})
        data[name] = np.ascontiguousarray(host.reshape(-1))
    return declared, data


def verify_function(verify: Callable, answer: Optional[List[Any]], atol: float, a: Arguments) -> Callable:
    """gpuk's tuner calls verify(expected, got) with the outputs by name (NumPy arrays; `expected`
    the answers or the first variant's, which Kernel Tuner's function does not take) and reads a
    bool; Kernel Tuner's function takes (answer, result_host, atol=) with one entry per argument,
    None where an argument is not an output."""
    try:
        takes_atol = "atol" in inspect.signature(verify).parameters
    except (TypeError, ValueError):
        takes_atol = False

    def call(*maps: Dict[str, np.ndarray]) -> bool:
        outputs = maps[-1]
        result = [np.asarray(outputs[n]).reshape(a.shapes[n]) if n in outputs and n in a.outputs else None
                  for n in a.names]
        ok = verify(answer, result, atol=atol) if takes_atol else verify(answer, result)
        return bool(ok)

    return call
