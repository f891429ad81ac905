"""gpuk's tune report (one entry per configuration: params, time, times, metrics, status, reason,
verified, compile/verification/benchmark times) as Kernel Tuner's `(results, env)`: a dict per
configuration with the parameters, ``time`` (ms), ``times``, each metric, ``compile_time``,
``verification_time``, ``benchmark_time``, ``strategy_time``, ``framework_time`` (ms) and
``timestamp``; a failed one marked as Kernel Tuner 1.5 marks it (``__error__``, no ``time``; util.py), never
ranked."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Dict, List, Optional

from .space import Space
from .util import (CompilationFailedConfig, ErrorConfig, InvalidConfig, RuntimeFailedConfig, TimeoutConfig,
                   WrongAnswerConfig, process_metrics)

# Configurations the space leaves out (restrictions, the given points) are not results, as
# Kernel Tuner's search space never holds them.
_OUTSIDE = ("constraint", "not among the given points", "value not allowed")


# gpuk's variant statuses (gpuk/tuning.hpp, VariantStatus) and Kernel Tuner's marks.
STATUS_MARKS = {"ok": None, "compile error": CompilationFailedConfig, "wrong answer": WrongAnswerConfig,
                "timed out": TimeoutConfig, "does not fit": InvalidConfig, "pruned": InvalidConfig,
                "launch failed": RuntimeFailedConfig, "faulted": RuntimeFailedConfig}


def mark_of(status: str, reason: str) -> Optional[ErrorConfig]:
    """The Kernel Tuner mark of gpuk's status (None: measured); a status this table lacks is a
    RuntimeFailedConfig, never a measurement."""
    mark = STATUS_MARKS.get((status or "ok").lower().replace("_", " "), RuntimeFailedConfig)
    return mark(reason) if mark else None


def outside_space(entry: Dict[str, Any]) -> bool:
    return (entry.get("status") or "").lower().startswith("prune") and \
        any(w in (entry.get("reason") or "") for w in _OUTSIDE)


def convert(report: Dict[str, Any], space: Space, metrics: Optional[Dict], verbose: bool,
            wall_seconds: float) -> List[Dict[str, Any]]:
    """Kernel Tuner's results list, in the tuner's order; `framework_time` is the call's wall time
    left after compiling, verifying and benchmarking, spread over the results (as Kernel Tuner
    spreads its own)."""
    out: List[Dict[str, Any]] = []
    stamp = str(datetime.now(timezone.utc))
    for entry in report.get("results", []):
        if outside_space(entry):
            continue
        params = entry.get("params", {})
        r: Dict[str, Any] = {n: space.original(n, int(params[n])) for n in space.names if n in params}
        mark = mark_of(entry.get("status", "ok"), entry.get("reason", ""))
        if mark is None:
            r["time"] = float(entry["time"])
            r["times"] = [float(t) for t in entry.get("times", [])]
            for k, v in (entry.get("metrics") or {}).items():
                if k not in ("time", "times"):
                    r[k] = v
        else:
            # Kernel Tuner 1.5's form: the mark in "__error__" and no "time", no metrics
            r["__error__"] = mark
            if verbose:
                print(f"skipping config {'_'.join(str(r[n]) for n in space.names if n in r)} reason: "
                      f"{mark!r}: {mark.reason}")
        r["compile_time"] = float(entry.get("compile_time") or 0.0)
        r["verification_time"] = float(entry.get("verification_time") or 0.0)
        r["benchmark_time"] = float(entry.get("benchmark_time") or 0.0)
        if mark is None and metrics:
            process_metrics(r, metrics)
        r["timestamp"] = stamp
        out.append(r)
    if out:
        worked = sum(r["compile_time"] + r["verification_time"] + r["benchmark_time"] for r in out)
        framework = max(1000.0 * wall_seconds - worked, 0.0) / len(out)
        for r in out:
            r["strategy_time"] = 0.0
            r["framework_time"] = framework
    return out


def environment(report: Dict[str, Any], notes: List[str], iterations: int) -> Dict[str, Any]:
    """Kernel Tuner's env: the device, the iterations, and gpuk's own (the tuner's notes, its
    strategy, the compile summary and where the sweep's time went, in seconds)."""
    device = dict(report.get("device") or {})
    env: Dict[str, Any] = {
        "device_name": device.get("name", ""),
        "iterations": iterations,
        "compiler_options": None,
        "gpuk_device": device,
        "gpuk_notes": list(notes) + list(report.get("notes") or []),
        "gpuk_strategy": report.get("strategy"),
        "gpuk_compile": report.get("compile") or {},
        "gpuk_wall_seconds": report.get("wall_seconds"),
        "gpuk_seconds": dict(report.get("seconds") or {}),
    }
    return env


def total_timings(results: List[Dict[str, Any]], env: Dict[str, Any], overhead_ms: float) -> Dict[str, Any]:
    """Kernel Tuner's util.get_total_timings."""
    keys = ("framework_time", "strategy_time", "compile_time", "verification_time", "benchmark_time")
    totals = {k: sum(r.get(k, 0.0) for r in results) for k in keys}
    for k in keys:
        env["total_" + k] = totals[k]
    env["overhead_time"] = overhead_ms - sum(totals.values())
    return env
