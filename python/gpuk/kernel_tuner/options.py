"""The one table of Kernel Tuner's keywords: for each, its meaning, its type, and what gpuk does with
it. It validates a call (a value gpuk cannot honour is refused by name, never ignored), and it
writes the docstrings of tune_kernel and run_kernel and the table of docs/kernel-tuner.md.

`accepts(value)` returns None when gpuk honours the value, else the reason it is refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

from .._gpuk import ConfigError

STRATEGIES = {"brute_force": "exhaustive", "random_sample": "random", "simulated_annealing": "anneal",
              "bayes_opt": "bayes"}
GPUK_STRATEGIES = ["exhaustive", "random", "anneal", "bayes"]
# Per strategy, the strategy_options gpuk maps (max_fevals and time_limit for every one).
STRATEGY_OPTIONS = {"brute_force": set(), "random_sample": {"fraction"}, "simulated_annealing": set(),
                    "bayes_opt": set()}


@dataclass(frozen=True)
class Option:
    doc: str                      # Kernel Tuner's meaning, in a sentence
    type: str
    gpuk: str                     # what gpuk does with it
    accepts: Callable[[Any], Optional[str]] = lambda v: None
    run_kernel: bool = False      # run_kernel takes it too


def _none_only(why: str) -> Callable[[Any], Optional[str]]:
    return lambda v: None if v is None else why


def _lang(v: Any) -> Optional[str]:
    if v is None or (isinstance(v, str) and v.lower() in ("cuda", "nvcuda", "cupy")):
        return None
    return f"lang={v!r}: gpuk compiles CUDA with NVRTC only (lang='CUDA'; OpenCL, HIP, C and Fortran are not gpuk's)"


def _strategy(v: Any) -> Optional[str]:
    if v is None or v in STRATEGIES:
        return None
    if hasattr(v, "tune"):
        return "a user-defined strategy object: gpuk's tuner runs its own strategies " + ", ".join(GPUK_STRATEGIES)
    return (f"strategy={v!r}: gpuk has {', '.join(GPUK_STRATEGIES)}, which Kernel Tuner's "
            f"{', '.join(STRATEGIES)} map to")


def _smem(v: Any) -> Optional[str]:
    if v is None:
        return None
    if not isinstance(v, dict):
        return "smem_args must be a dict {'size': bytes (an int, an expression of the parameters or a callable)}"
    extra = [k for k in v if k != "size"]
    return f"smem_args {extra}: gpuk takes only 'size' (the dynamic shared memory in bytes)" if extra else None


def _devices(v: Any) -> Optional[str]:
    ok = lambda d: isinstance(d, int) and not isinstance(d, bool) and d >= 0
    if ok(v) or (isinstance(v, (list, tuple)) and v and all(ok(d) for d in v)):
        return None
    return f"device={v!r}: a GPU's index (or, for gpuk, a list of indices: several GPUs)"


def _objective(v: Any) -> Optional[str]:
    if v is None or isinstance(v, str):
        return None
    return f"objective={v!r}: one objective's name (several objectives are not gpuk's: it ranks by one)"


def _iterations(v: Any) -> Optional[str]:
    if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 1000000:
        return None
    return f"iterations={v!r}: an integer from 1 to 1000000"


TUNE_OPTIONS: Dict[str, Option] = {
    "kernel_name": Option("The name of the kernel in the code.", "string",
                          "the launch's entry, found by its plain name (extern \"C\" or not)", run_kernel=True),
    "kernel_source": Option(
        "The kernel code: a string of code, a file name, or a list of file names (the first holds the kernel).",
        "string, Path or list", "written as a kernel file (and the other files beside it) in a temporary kernels "
        "directory; a code-generating function is refused", run_kernel=True),
    "problem_size": Option(
        "The size of the domain the grid is computed from: int, tuple of up to 3, a parameter expression "
        "string per dimension, or a callable of the parameters.", "int, str, tuple or callable",
        "the declaration's sizes (problem_size_x/y/z) and its launch grid: ceil_div(size, product of the grid "
        "divisors) per dimension, an expression where it is exact, else computed per point in Python",
        run_kernel=True),
    "arguments": Option("The kernel's arguments in order: NumPy arrays and NumPy scalars (device arrays of "
                        "PyTorch, CuPy, JAX too).", "list",
                        "declared args: arrays (dtype, length; role inout where an answer is given, else in, "
                        "or inout when nothing is given to verify against) and scalars with their value",
                        run_kernel=True),
    "tune_params": Option("The parameters and their values (integers).", "dict(str: list)",
                          "the tune config's params (value lists) and the declaration's params (params_as: "
                          "defines)"),
    "grid_div_x": Option("What divides the problem size in x: names, expressions, callables; default "
                         "[block_size_x].", "list or callable", "the launch grid's x (see problem_size)",
                         run_kernel=True),
    "grid_div_y": Option("As grid_div_x, in y; default [block_size_y].", "list or callable",
                         "the launch grid's y", run_kernel=True),
    "grid_div_z": Option("As grid_div_x, in z; default [block_size_z].", "list or callable",
                         "the launch grid's z", run_kernel=True),
    "restrictions": Option("Restrictions on the space: a list of boolean expression strings, or a callable "
                           "of the parameters.", "list(str) or callable",
                           "strings: constraints in gpuk's language (and, or, not as &&, ||, == 0); a string that "
                           "cannot be translated exactly and a callable: evaluated in Python over the space, "
                           "whose allowed points are passed as the tune config's points"),
    "answer": Option("The expected outputs, one per argument, None where not checked.", "list",
                     "the answers of the outputs (role inout); every variant is verified on the GPU"),
    "atol": Option("The absolute tolerance of numpy.allclose (1e-6).", "float",
                   "each output's compare rule {atol, rtol: 1e-5} (numpy.allclose's rtol)"),
    "verify": Option("A function verify(answer, result, atol=None) -> bool.", "callable",
                     "called by gpuk's tuner for each variant with Kernel Tuner's lists"),
    "verbose": Option("Print the configurations skipped and why.", "bool", "prints each failed configuration "
                      "with gpuk's reason"),
    "lang": Option("The kernel language.", "str", "CUDA only (also 'nvcuda' and 'cupy', Kernel Tuner's CUDA "
                   "backends)", accepts=_lang, run_kernel=True),
    "device": Option("The GPU's index (0).", "int", "the GPU; a list of indices tunes on several GPUs",
                     accepts=_devices, run_kernel=True),
    "platform": Option("The OpenCL platform.", "int", "refused unless 0 (no OpenCL)",
                       accepts=lambda v: None if v == 0 else "platform: OpenCL platforms are not gpuk's",
                       run_kernel=True),
    "smem_args": Option("Dynamic shared memory: {'size': bytes, an expression or a callable}.", "dict",
                        "the launch's shared_bytes", accepts=_smem, run_kernel=True),
    "cmem_args": Option("Constant memory: {symbol: numpy array}.", "dict",
                        "the declaration's constants: written into each variant's module before its runs",
                        run_kernel=True),
    "texmem_args": Option("Texture memory arguments.", "dict", "refused: gpuk binds no textures",
                          accepts=_none_only("texmem_args: gpuk binds no textures"), run_kernel=True),
    "compiler": Option("The host compiler (lang='C').", "str", "refused: gpuk compiles with NVRTC",
                       accepts=_none_only("compiler: gpuk compiles device code with NVRTC; no host compiler"),
                       run_kernel=True),
    "compiler_options": Option("Options for the compiler.", "list(str)", "the declaration's compiler_options "
                               "(NVRTC's)", run_kernel=True),
    "defines": Option("Preprocessor definitions {name: value, str or callable}; None: every parameter, the "
                      "block and grid sizes and kernel_tuner=1.", "dict",
                      "None: as Kernel Tuner (parameters as -D, the rest written above the kernel); a dict: "
                      "its definitions above the kernel (a callable's value per point)", run_kernel=True),
    "log": Option("A logging level for a log file.", "int", "refused: gpuk writes no log file",
                  accepts=_none_only("log: gpuk writes no log file (verbose=True prints every failure)"),
                  run_kernel=True),
    "iterations": Option("How many times each configuration is timed (7).", "int", "repeats",
                         accepts=_iterations),
    "block_size_names": Option("The names of the block dimensions (default block_size_x/y/z).", "list(str)",
                               "the launch's block", run_kernel=True),
    "quiet": Option("Do not print the device and the configurations.", "bool", "the same",
                    run_kernel=True),
    "strategy": Option("The search strategy (brute_force).", "str",
                       "brute_force -> exhaustive, random_sample -> random, simulated_annealing -> anneal, "
                       "bayes_opt -> bayes; any other refused with gpuk's list", accepts=_strategy),
    "strategy_options": Option("The strategy's options.", "dict",
                               "max_fevals -> budget evaluations, time_limit -> budget seconds, "
                               "random_sample's fraction -> evaluations; others refused by name"),
    "cache": Option("A cache file (JSON): read to resume, every result appended.", "str or Path",
                    "read and written in Kernel Tuner's format; its points are not run again"),
    "metrics": Option("Derived results {name: expression string or callable}, in order.", "dict",
                      "computed in Python from each result (time in ms and the metrics before)"),
    "simulation_mode": Option("Replay a tune from a cache.", "bool", "refused: gpuk measures",
                              accepts=lambda v: None if not v else "simulation_mode: gpuk measures every "
                              "configuration; it replays no cache"),
    "parallel": Option("Tune with Ray workers.", "bool or int", "refused: device=[0, 1, ...] tunes on "
                       "several GPUs",
                       accepts=lambda v: None if not v else "parallel: gpuk compiles in parallel always; "
                       "give device=[0, 1, ...] to measure on several GPUs"),
    "observers": Option("Benchmark observers (NVML, NCU, power).", "list", "refused",
                        accepts=lambda v: None if not v else "observers: gpuk has no observers (its CLI "
                        "measures energy with `energy: true`)"),
    "objective": Option("The objective results are ranked by (time).", "str",
                        "the tune's objective {metric, higher_is_better}", accepts=_objective),
    "objective_higher_is_better": Option("Whether a higher objective is better.", "bool", "the same"),
    "objectives": Option("Several objectives {name: higher_is_better}.", "dict", "refused",
                         accepts=lambda v: None if not v else "objectives: gpuk ranks by one objective"),
    "seed": Option("The random seed.", "int", "the tune's seed"),
}

RUN_OPTIONS: Dict[str, Option] = {k: v for k, v in TUNE_OPTIONS.items() if v.run_kernel}
RUN_OPTIONS["params"] = Option("One value per tunable parameter.", "dict(str: int)",
                               "the one variant run (gpuk.Kernel with params=)")


def check(options: Dict[str, Option], given: Dict[str, Any], call: str) -> None:
    """Every keyword known, and every value one gpuk honours (ConfigError naming it otherwise)."""
    for name in given:
        if name not in options:
            raise ConfigError(f"{call}: unknown keyword {name!r}")
    for name, value in given.items():
        why = options[name].accepts(value)
        if why:
            raise ConfigError(f"{call}: {why}")


def docstring(options: Dict[str, Option]) -> str:
    """Kernel Tuner's `:param` docstring, each with what gpuk does."""
    return "".join(f"    :param {k}: {o.doc} gpuk: {o.gpuk}.\n    :type {k}: {o.type}\n\n" for k, o in options.items())


def markdown_table(options: Dict[str, Option]) -> str:
    """The docs' table: argument | Kernel Tuner | gpuk."""
    rows = ["| argument | Kernel Tuner | gpuk |", "| --- | --- | --- |"]
    cell = lambda text: text.replace("|", "\\|")
    rows += [f"| `{k}` | {cell(o.doc)} | {cell(o.gpuk)} |" for k, o in options.items()]
    return "\n".join(rows)
