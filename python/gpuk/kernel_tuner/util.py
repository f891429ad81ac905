"""Kernel Tuner's util functions that tuning scripts call (`get_best_config`, `get_config_string`,
`process_metrics`) and the marks of a failed configuration, with Kernel Tuner's names and meaning.

A failed configuration carries ``"__error__"`` and no ``"time"`` (nor metrics), as in Kernel Tuner
1.5 (so `min(results, key=lambda r: r["time"])` fails there as it does with Kernel Tuner, where
`get_best_config` does not): an instance of a subclass of `ErrorConfig`, a ``str`` whose text is
empty and whose ``repr`` is its class name, as in Kernel Tuner. gpuk adds the reason
(``mark.reason``: the compile log's first line, the mismatch, the fault) and two subclasses of
`RuntimeFailedConfig` for what Kernel Tuner has no mark for, since it stops at a wrong answer and
has no time limit: `WrongAnswerConfig` and `TimeoutConfig`. In a cache file they are written as
``RuntimeFailedConfig``, a name Kernel Tuner reads.
"""
from __future__ import annotations

import sys
from typing import Any, Dict, Iterable, List, Optional

from .expressions import replace_param_occurrences

__all__ = ["ErrorConfig", "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig", "WrongAnswerConfig",
           "TimeoutConfig", "default_block_size_names", "get_best_config", "get_config_string",
           "process_metrics", "replace_param_occurrences", "objective_default_map", "get_objective_defaults"]

default_block_size_names = ["block_size_x", "block_size_y", "block_size_z"]


class ErrorConfig(str):
    """A failed configuration's mark (Kernel Tuner's class); ``reason`` says why."""

    cache_name = "ErrorConfig"

    def __new__(cls, reason: str = ""):
        mark = super().__new__(cls, "")
        mark.reason = reason
        return mark

    def __str__(self) -> str:
        return self.__class__.__name__

    def __repr__(self) -> str:
        return self.__class__.__name__


class InvalidConfig(ErrorConfig):
    cache_name = "InvalidConfig"


class CompilationFailedConfig(ErrorConfig):
    cache_name = "CompilationFailedConfig"


class RuntimeFailedConfig(ErrorConfig):
    cache_name = "RuntimeFailedConfig"


class WrongAnswerConfig(RuntimeFailedConfig):
    """The outputs did not match the answer (Kernel Tuner raises and stops the tune there)."""


class TimeoutConfig(RuntimeFailedConfig):
    """The variant ran past gpuk's time limit and was abandoned."""


ERROR_MARKS = {c.__name__: c for c in (ErrorConfig, InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig,
                                       WrongAnswerConfig, TimeoutConfig)}

# Kernel Tuner's (util.py): the direction of the objectives it knows.
objective_default_map = {
    "time": False, "energy": False, "fitness": True, "cost": False, "loss": False, "GFLOP/s": True,
    "TFLOP/s": True, "GB/s": True, "TB/s": True, "GFLOPS/W": True, "TFLOPS/W": True, "GFLOP/J": True,
    "TFLOP/J": True,
}


def get_objective_defaults(objective: Optional[str], objective_higher_is_better: Optional[bool]):
    """`time` by default; the direction of a known objective, else it must be given."""
    objective = objective or "time"
    if objective_higher_is_better is None:
        if objective not in objective_default_map:
            raise ValueError(f"Please specify objective_higher_is_better for objective {objective}")
        objective_higher_is_better = objective_default_map[objective]
    return objective, objective_higher_is_better


def get_best_config(results: List[Dict], objective: str, objective_higher_is_better: bool = False) -> Dict:
    """The best result by `objective`; failed results (``__error__``, or a mark in the objective)
    are never chosen unless every result failed, as in Kernel Tuner."""
    ignore = -sys.float_info.max if objective_higher_is_better else sys.float_info.max

    def key(r: Dict) -> float:
        v = r.get(objective)
        if "__error__" in r or isinstance(v, ErrorConfig) or not isinstance(v, (int, float)) or isinstance(v, bool):
            return ignore
        return float(v)

    return (max if objective_higher_is_better else min)(results, key=key)


def get_config_string(params: Dict, keys: Optional[Iterable[str]] = None, units: Optional[Dict] = None) -> str:
    """``name=value, ...`` with floats to 3 decimals, as Kernel Tuner prints a configuration."""
    keys = list(keys) if keys else list(params.keys())
    items = []
    for k, v in params.items():
        if k not in keys:
            continue
        text = "{:.3f}".format(round(v, 3)) if isinstance(v, float) else str(v)
        unit = units.get(k, "") if isinstance(units, dict) and not isinstance(v, ErrorConfig) else ""
        items.append(f"{k}={text}{unit}")
    return ", ".join(items)


def process_metrics(params: Dict[str, Any], metrics: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Each metric added to `params` in order: a string evaluated as Kernel Tuner does (the
    parameters, ``time`` in ms and the metrics before it replaced by their values), or a
    callable of the dict."""
    if metrics is None:
        return params
    if not isinstance(metrics, dict):
        raise ValueError("metrics should be a dictionary to preserve order and support composability")
    for name, how in metrics.items():
        if isinstance(how, str):
            params[name] = eval(replace_param_occurrences(how, params), {})
        elif callable(how):
            params[name] = how(params)
        else:
            raise ValueError("metric dicts values should be strings or callable")
    return params
