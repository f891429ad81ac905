"""Kernel Tuner's launch geometry (problem_size, grid_div_x/y/z, block_size_names, smem_args) and
the definitions it writes above the kernel (`defines`), as a declaration's sizes, launch and source
prefix. Kernel Tuner's rules (util.get_problem_size, get_grid_dimensions,
get_thread_block_dimensions, prepare_kernel_string): a block dimension is its parameter's value
(256, 1, 1 without one); a grid dimension is ceil(problem size / the product of its divisors, each
truncated by int()); with `defines=None` the kernel sees every parameter, block_size_x/y/z,
grid_size_x/y/z and kernel_tuner=1. A value that is no exact expression is computed per point in
Python and carried as a derived parameter (grid_size_x, ...)."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

import numpy as np

from .._gpuk import ConfigError
from .expressions import python_value, translate
from .space import Space
from .util import default_block_size_names

DIMS = "xyz"
DEFAULT_BLOCK = (256, 1, 1)
SMEM_PARAM = "kt_smem_size"


def block_names(block_size_names: Optional[List[str]], params: List[str]) -> List[str]:
    """Three names: the caller's, then the defaults; a parameter spelt BLOCK_SIZE_X counts."""
    if block_size_names is not None:
        if not isinstance(block_size_names, list) or len(block_size_names) > 3 or \
                not all(isinstance(n, str) for n in block_size_names):
            raise ConfigError("block_size_names should be a list of at most 3 strings")
        return list(block_size_names) + default_block_size_names[len(block_size_names):]
    out = []
    for d in default_block_size_names:
        alt = [p for p in params if p.lower() == d]
        out.append(d if d in params or not alt else alt[0])
    return out


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ConfigError(f"{what}: {v!r} is not an integer")
    return int(v)


def _divisor_value(d: Any, default: str, p: Dict) -> int:
    # Kernel Tuner's get_dimension_divisor.
    if d is None:
        return p.get(default, 1)
    if isinstance(d, (int, np.integer)):
        return int(d)
    if callable(d):
        return d(p)
    if isinstance(d, str):
        return int(python_value(d)(p))
    n = 1
    for x in d:
        n *= _divisor_value(x, "", p)
    return n


def _size_value(s: Any, p: Dict) -> int:
    return int(python_value(s)(p)) if isinstance(s, str) else int(s)


class Launch:
    """The declaration's sizes, launch grid/block/shared_bytes and the source prefix."""

    def __init__(self, space: Space, problem_size: Any, grid_div: List[Any], block_size_names: Optional[List[str]],
                 smem_args: Optional[Dict], defines: Optional[Dict]):
        self.names = block_names(block_size_names, space.names)
        self.sizes: Dict[str, int] = {}
        self.grid: List[Any] = []
        self.block: List[Any] = [n if n in space.names else DEFAULT_BLOCK[i] for i, n in enumerate(self.names)]
        self.shared: Any = 0
        self.defines: Dict[str, str] = {}
        self._c_grid: List[Optional[str]] = []
        names = space.names
        grid_div = list(grid_div)
        for i, g in enumerate(grid_div):
            if isinstance(g, (str, int, np.integer)) and not isinstance(g, bool):
                grid_div[i] = [g]  # one divisor, as Kernel Tuner takes it
            elif g is not None and not callable(g) and not isinstance(g, (list, tuple)):
                raise ConfigError(f"grid_div_{DIMS[i]} must be a list (names, expressions, integers) or a callable")
        if callable(problem_size):
            # The whole problem size per point: every grid dimension too.
            for i in range(3):
                space.derive(f"grid_size_{DIMS[i]}", self._python_dimension(problem_size, grid_div, i))
                self.grid.append(f"grid_size_{DIMS[i]}")
                self._c_grid.append(None)
        else:
            ps = list(problem_size) if isinstance(problem_size, (tuple, list)) else [problem_size]
            if not 1 <= len(ps) <= 3:
                raise ConfigError(f"problem_size={problem_size!r}: 1 to 3 dimensions")
            ps += [1] * (3 - len(ps))
            for i in range(3):
                if not isinstance(ps[i], str):
                    self.sizes[f"problem_size_{DIMS[i]}"] = _int(ps[i], f"problem_size[{i}]")
            for i in range(3):
                self._dimension(space, ps, grid_div, i)
        self._smem(space, smem_args)
        self._defines(space, defines)

    def _python_dimension(self, problem_size: Any, grid_div: List[Any], i: int):
        names = self.names

        def value(p: Dict) -> int:
            size = problem_size(p) if callable(problem_size) else problem_size
            size = list(size) if isinstance(size, (tuple, list)) else [size]
            size += [1] * (3 - len(size))
            return int(math.ceil(float(_size_value(size[i], p)) / float(_divisor_value(grid_div[i], names[i], p))))

        return value

    def _dimension(self, space: Space, ps: List[Any], grid_div: List[Any], i: int) -> None:
        dim = f"grid_size_{DIMS[i]}"
        names = space.names
        if isinstance(ps[i], str):
            size = translate(ps[i], names, truncated=True)
        else:
            size = (f"problem_size_{DIMS[i]}", str(int(ps[i])))
        g = grid_div[i]
        divisors = None
        if g is None:
            divisors = [(self.names[i], self.names[i])] if self.names[i] in names else []
        elif not callable(g):
            divisors = []
            for d in g:
                if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
                    divisors.append((str(int(d)), str(int(d))))
                elif isinstance(d, str):
                    divisors.append(translate(d, names, truncated=True))
                else:
                    divisors.append(None)  # a callable in the list
        if size is None or divisors is None or any(d is None for d in divisors):
            space.derive(dim, self._python_dimension(tuple(ps), grid_div, i))
            self.grid.append(dim)
            self._c_grid.append(None)
            return
        if not divisors:
            self.grid.append(size[0])
            self._c_grid.append(size[1])
            return
        d, cd = " * ".join(x[0] for x in divisors), " * ".join(x[1] for x in divisors)
        self.grid.append(f"ceil_div({size[0]}, {d})")
        self._c_grid.append(f"((({size[1]}) + ({cd}) - 1) / ({cd}))")

    def _smem(self, space: Space, smem_args: Optional[Dict]) -> None:
        if not smem_args or "size" not in smem_args:
            return
        size = smem_args["size"]
        if callable(size):
            space.derive(SMEM_PARAM, lambda p, f=size: f(p))
            self.shared = SMEM_PARAM
        elif isinstance(size, str):
            t = translate(size, space.names, truncated=True)
            if t is None:
                space.derive(SMEM_PARAM, lambda p, v=python_value(size): int(v(p)))
                self.shared = SMEM_PARAM
            else:
                self.shared = t[0]
        else:
            self.shared = _int(size, "smem_args['size']")

    def _defines(self, space: Space, defines: Optional[Dict]) -> None:
        if defines is None:
            for i, n in enumerate(self.names):
                if n not in space.names:
                    self.defines[n] = str(DEFAULT_BLOCK[i])
            for i, c in enumerate(self._c_grid):
                if c is not None:
                    self.defines[f"grid_size_{DIMS[i]}"] = c
            self.defines["kernel_tuner"] = "1"
            return
        if not isinstance(defines, dict):
            raise ConfigError("defines must be a dict {name: value (a string, a number or a callable)} or None")
        for k, v in defines.items():
            if not isinstance(k, str) or not k.isidentifier():
                raise ConfigError(f"defines: name is not a valid identifier: {k!r}")
            if k in space.names:
                raise ConfigError(f"defines: {k} is a tunable parameter, which gpuk defines with its value")
            if callable(v):
                space.derive(k, lambda p, f=v, k=k: _integer_define(k, f(p)))
            else:
                # A string's parameter names are macros (-D) themselves: the same value after preprocessing.
                self.defines[k] = str(v)


def _integer_define(name: str, value: Any) -> int:
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise ConfigError(f"defines[{name!r}] returned {value!r}: gpuk passes a callable definition per point as an "
                      f"integer parameter; give a string or a number")
