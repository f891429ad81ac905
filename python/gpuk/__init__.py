"""gpuk from Python: tuned, verified CUDA kernels on PyTorch, CuPy, JAX and NumPy arrays.

    import gpuk, torch
    x = torch.randn(1 << 20, device="cuda")
    value, index = gpuk.reduce.argmax(x)            # the fastest known variant for this GPU and size
    y = gpuk.sort.keys(x, order="descending")       # a new tensor; out= writes into yours
    i = gpuk.search.find(x, float(x[7]))            # the first index holding the value, or -1
    op = gpuk.Engine().prepare("reduce", "argmax", "float32", x.numel())
    op.variant, op.chosen                           # what runs, and why
    report = gpuk.run("configs/argmax.yaml")        # `gpuk run --json`, as a dict
    k = gpuk.Kernel("configs/kernel_stencil2d.yaml") # a declared kernel (docs/declared.md) ...
    k(out, grid)                                    # ... on arrays, nx and ny from grid's shape

The families (``gpuk.reduce``, ``gpuk.search``, ``gpuk.sort``, and any other plugin) are built
from the loaded plugins: one function per operation. See docs/python.md.
"""
from __future__ import annotations

from . import _gpuk
from ._arrays import DTYPES, DeviceArray
from ._cli import FaultError, WrongAnswerError, check, compare, executable, run, to_numpy, tune
from ._engine import Engine, GpukWarning, Operation, Prepared, default_engine, set_default_engine
from ._families import Family, family_namespaces
from ._kernel import Kernel
from ._gpuk import CompileError, ConfigError, DeviceError, Error, NoDeviceError

__version__ = _gpuk.version()

__all__ = ["DTYPES", "CompileError", "ConfigError", "DeviceArray", "DeviceError", "Engine", "Error", "Family",
           "FaultError", "GpukWarning", "Kernel", "NoDeviceError", "Operation", "Prepared", "WrongAnswerError", "check",
           "compare", "default_engine", "device_info", "executable", "families", "kernels", "run",
           "set_default_engine", "to_numpy", "tune"]


def families() -> list:
    """The loaded family plugins (name, description, operations, dtypes, options, default kernel)."""
    return default_engine().families()


def kernels() -> list:
    """The kernel files gpuk sees (built-in, $GPUK_KERNELS): name, family, path, summary,
    operations, dtypes, params (name, default, allowed values), constraints."""
    return default_engine().kernels()


def device_info() -> dict:
    """The default engine's GPU (name, arch, SMs, memory, driver); NoDeviceError without one."""
    return default_engine().device_info()


# gpuk.reduce, gpuk.search, gpuk.sort, ...: one namespace per loaded family plugin.
for _name, _family in family_namespaces(default_engine()).items():
    globals()[_name] = _family
    __all__.append(_name)
del _name, _family
