"""Kernel Tuner's `tune_params` and `restrictions` as gpuk's space: integer value lists, constraints
in gpuk's language where a string translates exactly, and otherwise the allowed points evaluated
in Python (Kernel Tuner's own `eval`), with any values computed per point (a grid dimension of a
callable, a callable definition) carried as derived parameters of the points."""
from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Dict, List

import numpy as np

from .._gpuk import ConfigError
from .expressions import python_value, translate

FORBIDDEN = ("grid_size_x", "grid_size_y", "grid_size_z", "time")
MAX_POINTS = 5_000_000  # a space enumerated in Python, for callables and cache files


def _integer(name: str, v: Any) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ConfigError(f"tune_params[{name!r}]: {v!r} is not an integer; gpuk's parameters are integers "
                          f"(-D {name}=VALUE), so floats, strings and booleans are not taken")
    return int(v)


class Space:
    """The parameters (in the caller's order), the constraints, the Python checks and the
    derived values; `points()` enumerates the allowed points where Python must decide."""

    def __init__(self, tune_params: Dict[str, List[Any]]):
        if not isinstance(tune_params, dict) or not tune_params:
            raise ConfigError("tune_params must be a non-empty dict {name: [values]}")
        self.names: List[str] = []
        self.values: Dict[str, List[int]] = {}
        self.originals: Dict[str, Dict[int, Any]] = {}  # int value -> the caller's object
        for name, values in tune_params.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ConfigError(f"tune_params: {name!r} is not an identifier")
            if name in FORBIDDEN:
                raise ConfigError(f"Tune parameter {name} has a forbidden name! (Kernel Tuner reserves "
                                  f"{', '.join(FORBIDDEN)})")
            if name.startswith("nvml_") or name in ("cuda_sm_percentage",):
                raise ConfigError(f"tune_params: {name} is an observer's or a device setting's parameter, not gpuk's")
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise ConfigError(f"tune_params[{name!r}] must be a list of values")
            ints = [_integer(name, v) for v in values]
            if not ints:
                raise ConfigError(f"tune_params[{name!r}] lists no value")
            self.names.append(name)
            self.values[name] = list(dict.fromkeys(ints))
            self.originals[name] = {int(v): v for v in values}
        self.constraints: List[str] = []          # gpuk's language
        self.constraint_sources: List[str] = []   # the same, as the caller wrote them
        self.checks: List[Callable[[Dict], bool]] = []
        self.derived: Dict[str, Callable[[Dict], int]] = {}

    def restrict(self, restrictions: Any) -> None:
        """Strings that translate exactly become constraints; the rest Python checks."""
        if restrictions is None:
            return
        if callable(restrictions) and not isinstance(restrictions, (list, tuple)):
            self.checks.append(lambda p, f=restrictions: bool(f(dict(p))))
            return
        if isinstance(restrictions, str):
            restrictions = [restrictions]
        if not isinstance(restrictions, (list, tuple)):
            raise ConfigError("restrictions must be a list of strings or a callable")
        for r in restrictions:
            if isinstance(r, str):
                t = translate(r, self.names, truncated=False)
                if t is not None:
                    self.constraints.append(t[0])
                    self.constraint_sources.append(r)
                else:
                    value = python_value(r)
                    self.checks.append(lambda p, v=value: bool(_safe(v, p)))
            elif callable(r):
                self.checks.append(lambda p, f=r: bool(f(**p)))
            else:
                raise ConfigError(f"restrictions: {r!r}: gpuk takes strings and callables (python-constraint "
                                  f"objects and (function, names) tuples are not taken)")

    def require(self, text: str) -> None:
        """A constraint written in the common subset of Python and gpuk's language (names,
        integers, * and <=)."""
        self.constraints.append(text)
        self.constraint_sources.append(text)

    def derive(self, name: str, how: Callable[[Dict], Any]) -> None:
        """`name` computed per point by `how` (an integer), carried in the points."""
        self.derived[name] = how

    def needs_points(self) -> bool:
        return bool(self.checks or self.derived)

    def size(self) -> int:
        return math.prod(len(v) for v in self.values.values())

    def points(self) -> List[Dict[str, int]]:
        """Every allowed point (the constraints too, evaluated in Python as the caller wrote them),
        each with its derived values."""
        if self.size() > MAX_POINTS:
            raise ConfigError(f"the space has {self.size()} points; gpuk enumerates at most {MAX_POINTS} in "
                              f"Python (for a callable restriction, a callable grid or a cache file): write the "
                              f"restrictions as strings or narrow tune_params")
        constraint_checks = [python_value(c) for c in self.constraint_sources]
        out = []
        for values in itertools.product(*(self.values[n] for n in self.names)):
            p = dict(zip(self.names, values))
            if not all(_safe(c, p) for c in constraint_checks) or not all(c(p) for c in self.checks):
                continue
            for name, how in self.derived.items():
                v = how(p)
                if isinstance(v, float) and v.is_integer():
                    v = int(v)
                p[name] = _integer(name, v)
            out.append(p)
        return out

    def original(self, name: str, value: int) -> Any:
        """The caller's own object for a parameter's value (a NumPy integer stays one)."""
        return self.originals.get(name, {}).get(value, value)


def _safe(value: Callable[[Dict], Any], point: Dict) -> Any:
    # Kernel Tuner keeps a configuration whose restriction divides by zero (util.check_restrictions).
    try:
        return value(point)
    except ZeroDivisionError:
        return True
