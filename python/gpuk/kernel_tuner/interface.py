"""tune_kernel and run_kernel with Kernel Tuner's signatures, over gpuk's tuner: the call is checked
against the option table, translated into a tune config (translate.py), handed to gpuk's tuner in
one call (`_gpuk.tune_kernel`), and its report returned as Kernel Tuner's `(results, env)`."""
from __future__ import annotations

import os
import shutil
import time
from typing import Any, Dict, List, Optional

import numpy as np

from .. import _gpuk
from .._gpuk import ConfigError
from . import cache as cache_
from . import options
from .results import convert, environment, total_timings
from .translate import translate_call
from .util import WrongAnswerConfig, get_best_config, get_config_string


def _timeline(what: str) -> None:
    """gpuk's timeline mark (GPUK_TIMELINE, core/src/util/timeline.hpp), for this call's Python side."""
    if os.environ.get("GPUK_TIMELINE", "0") not in ("", "0"):
        os.write(2, f"gpuk timeline {time.clock_gettime(time.CLOCK_MONOTONIC):.6f} {os.getpid()} {what}\n".encode())


def _engine_tune(t, devices: Optional[List[int]], quiet: bool, journal: Optional[str]) -> Dict[str, Any]:
    """The one call into gpuk's tuner (its NVRTC waves, verification on the GPU, fault isolation)."""
    if _cuda_started_elsewhere():
        # CUDA does not survive a fork: with the driver started by another library (PyTorch, CuPy,
        # cuda-python), gpuk starts it too, and its tuner then measures in this process.
        _device_name(devices[0] if devices else 0)
    return _gpuk.tune_kernel(t.config, t.arrays, t.answers, t.constants, t.verify, journal, devices, quiet)


def _cuda_started_elsewhere() -> bool:
    """Whether the CUDA driver is loaded in this process (gpuk's tuner forks its GPU workers only
    from a process that has not started CUDA, and knows only of its own start)."""
    try:
        with open("/proc/self/maps") as maps:
            return "libcuda.so" in maps.read()
    except OSError:
        return False


def _device_name(device: int) -> str:
    from .._engine import Engine
    return Engine(device=device).device_info()["name"]


def _devices(device: Any) -> List[int]:
    return [int(d) for d in device] if isinstance(device, (list, tuple)) else [int(device)]


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None,
                verbose=False, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
                compiler=None, compiler_options=None, defines=None, log=None, iterations=7, block_size_names=None,
                quiet=False, strategy=None, strategy_options=None, cache=None, metrics=None, simulation_mode=None,
                parallel=None, observers=None, objective=None, objective_higher_is_better=None, objectives=None,
                seed=None):
    start = time.perf_counter()
    _timeline("python: tune_kernel called")
    given = dict(locals())
    del given["start"]
    options.check(options.TUNE_OPTIONS, given, "tune_kernel")
    devices = _devices(device)
    cache_file = cache_.CacheFile(cache, kernel_name, problem_size, tune_params, objective or "time") \
        if cache else None
    t = translate_call({**given, "_force_points": bool(cache_file and cache_file.entries)})
    _timeline("python: call translated")
    try:
        cached = _cached(t, cache_file)
        report: Dict[str, Any] = {"results": [], "device": {}, "notes": []}
        if t.config.get("points", True):  # empty: every point came from the cache
            # With a cache, gpuk's journal beside it: a tune cut short goes on from it when called
            # again (the cache file is written when the tuner returns); removed once it has.
            journal = cache_file.path[:-len(".json")] + ".gpuk-journal" if cache_file is not None else None
            report = _engine_tune(t, devices, quiet, journal)
            if journal is not None:
                shutil.rmtree(journal, ignore_errors=True)
        _timeline("python: tuner returned")
        results = convert(report, t.space, metrics, verbose, time.perf_counter() - start)
        env = environment(report, t.notes, iterations)
        env["gpuk_notes"] += _differ_from_first(report, results)
        if cache_file is not None:
            # the GPU the tuner ran on (when every point was cached, the driver's first GPU)
            cache_file.open(env["device_name"] or _device_name(devices[0]))
            env["device_name"] = cache_file.device_name
            for r in results:
                cache_file.store(cache_.key_of(r, t.space.names), r)
        results = cached + results
        env["compiler_options"] = compiler_options
        if "arch" in env["gpuk_device"]:
            env["compute_capability"] = str(env["gpuk_device"]["arch"]).replace("sm_", "")
        _best(results, env, t, list(tune_params), list(metrics or {}), quiet)
    finally:
        if cache_file is not None:
            cache_file.close()
        t.kernel_dir.close()
    _timeline("python: results made")
    return results, total_timings(results, env, 1000.0 * (time.perf_counter() - start))


def _differ_from_first(report: Dict[str, Any], results: List[Dict[str, Any]]) -> List[str]:
    """Where nothing was given to compare with, how many configurations the first one's outputs
    failed: said, as such a tune ranks only the ones that agree with it (Kernel Tuner, which checks
    nothing there, ranks them all)."""
    if not any(str(n).startswith("no answer given") for n in report.get("notes") or []):
        return []
    differ = sum(1 for r in results if isinstance(r.get("__error__"), WrongAnswerConfig))
    if not differ:
        return []
    return [f"{differ} of {len(results)} configurations' outputs differ from the first configuration's and are "
            "not ranked (WrongAnswerConfig); where an output rightly differs between configurations (per-block "
            "partial results, a tuned filter size), give answer= (None for such outputs) or verify="]


def _cached(t, cache_file) -> List[Dict[str, Any]]:
    """The cache's results for the space's points (zero compile, verification and benchmark
    time, as Kernel Tuner returns cached ones); the tuner gets the other points."""
    if cache_file is None or not cache_file.entries:
        return []
    cached, todo = [], []
    for p in t.points:
        entry = cache_file.entries.get(cache_.key_of({n: t.space.original(n, p[n]) for n in t.space.names},
                                                     t.space.names))
        if entry is None:
            todo.append(p)
        else:
            cached.append({**entry, "compile_time": 0, "verification_time": 0, "benchmark_time": 0})
    t.config["points"] = todo
    return cached


def _best(results, env, t, params: List[str], metrics: List[str], quiet: bool) -> None:
    """env["best_config"] (a configuration that ran and verified), and what Kernel Tuner prints."""
    if not quiet:
        if env["device_name"]:
            print("Using: " + env["device_name"])
        for r in results:
            print(get_config_string(r, params + ["time"] + metrics))
    best = get_best_config(results, t.objective, t.higher_is_better) if results else None
    if best is not None and "__error__" not in best:
        env["best_config"] = best
    if quiet:
        return
    if best is None:
        print("no results to report")
    elif "best_config" not in env:
        print("no configuration ran and verified")
    else:
        print(f"\nBEST PERFORMING CONFIGURATION FOR OBJECTIVE {t.objective}:")
        print(get_config_string(best, params + [t.objective] + metrics))
    for note in env["gpuk_notes"]:
        print("gpuk: " + note)
    seconds = env.get("gpuk_seconds") or {}
    if seconds:
        print("gpuk: where the time went (s): " + ", ".join(f"{k} {v:.2f}" for k, v in seconds.items() if v >= 0.005))


def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, grid_div_x=None, grid_div_y=None,
               grid_div_z=None, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
               compiler=None, compiler_options=None, defines=None, block_size_names=None, quiet=False, log=None):
    given = dict(locals())
    options.check(options.RUN_OPTIONS, given, "run_kernel")
    if isinstance(device, (list, tuple)):
        raise ConfigError("run_kernel: device is one GPU's index")
    if not isinstance(params, dict) or not params:
        raise ConfigError("run_kernel: params must be a dict {name: value}, one per tunable parameter")
    call = {k: v for k, v in given.items() if k != "params"}
    arrays_in = list(arguments)
    # Every array is an output: run_kernel returns them all, as Kernel Tuner does.
    call.update(tune_params={k: [v] for k, v in params.items()}, verify=lambda *a, **k: True, answer=None,
                atol=1e-6, _force_points=True)
    t = translate_call(call, tune=False)
    try:
        from .._engine import Engine
        from .._kernel import Kernel
        point = t.points[0]
        declaration = dict(t.config["declare"])
        if t.constants:
            declaration["constants"] = _constants_from_files(declaration["constants"], t.constants,
                                                             t.kernel_dir.path)
        engine = Engine(device=device, kernels=[t.kernel_dir.path])
        k = Kernel(t.kernel_dir.file, declare=declaration, params=point, engine=engine)
        results: List[Any] = []
        call_arrays = []
        for x in arrays_in:
            if isinstance(x, np.ndarray):
                call_arrays.append(np.array(x, copy=True, order="C").reshape(-1))
            elif not isinstance(x, np.generic):
                call_arrays.append(x)
        k(*call_arrays, **t.config["sizes"])
        it = iter(call_arrays)
        for x in arrays_in:
            if isinstance(x, np.generic):
                results.append(x)
                continue
            y = next(it)
            if isinstance(x, np.ndarray):
                results.append(y.reshape(x.shape))
            elif hasattr(x, "cpu"):
                results.append(x.cpu())
            else:
                from .._cli import to_numpy
                results.append(to_numpy(x, device))
        return results
    finally:
        t.kernel_dir.close()


def _constants_from_files(declared: List[Dict[str, Any]], data: Dict[str, np.ndarray], folder: str):
    """The declaration's constants with their data as .npy files in `folder` (gpuk.Kernel loads a
    declaration's constants from their data: each variant's module gets them when it loads)."""
    out = []
    for c in declared:
        path = os.path.join(folder, f"cmem_{c['name']}.npy")
        np.save(path, data[c["name"]])
        out.append({**c, "data": {"npy": path}})
    return out


tune_kernel.__doc__ = ("Tune a CUDA kernel with Kernel Tuner's arguments, on gpuk's tuner (docs/kernel-tuner.md).\n\n"
                       + options.docstring(options.TUNE_OPTIONS) +
                       "    :returns: (results, env): a dict per configuration and the environment, as Kernel Tuner's.\n")
run_kernel.__doc__ = ("Compile and run one configuration; returns every argument after the run (NumPy arrays, "
                      "scalars as given), as Kernel Tuner's run_kernel.\n\n" + options.docstring(options.RUN_OPTIONS))
