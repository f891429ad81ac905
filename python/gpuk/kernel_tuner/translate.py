"""A Kernel Tuner call made into gpuk's tune config (docs/declared.md: a declaration, value lists,
constraints or points, strategy, budget, repeats, compare, objective) and the data the tuner takes
beside it. A pure function of the call's values: nothing here touches a GPU."""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from .._gpuk import ConfigError
from . import arguments as arguments_
from .launch import Launch
from .options import STRATEGIES, STRATEGY_OPTIONS
from .source import KernelDir, argument_names, prefix, read_sources, unroll_guard
from .space import Space
from .util import get_objective_defaults


MAX_THREADS = 1024


@dataclass
class Translation:
    config: Dict[str, Any]
    arrays: Dict[str, Any]
    answers: Dict[str, Any]
    constants: Dict[str, Any]
    verify: Optional[Callable]
    kernel_dir: KernelDir
    space: Space
    args: arguments_.Arguments
    objective: str
    higher_is_better: bool
    points: Optional[List[Dict[str, int]]] = None
    notes: List[str] = field(default_factory=list)


def metric_expression(name: str, metrics: Dict[str, Any], names: List[str]) -> Optional[str]:
    """A string metric in gpuk's metric language (`seconds`, the parameters and sizes, + - * /),
    `time` (ms) as seconds * 1000 and earlier metrics inlined; None where it cannot be."""
    done: Dict[str, str] = {}
    for k, how in metrics.items():
        if not isinstance(how, str):
            if k == name:
                return None
            continue
        try:
            tree = ast.parse(how, mode="eval").body
            done[k] = _metric(tree, names, done)
        except (SyntaxError, ValueError, ZeroDivisionError, OverflowError):
            if k == name:
                return None
        if k == name:
            return done.get(k)
    return None


def _metric(node: ast.AST, names: List[str], done: Dict[str, str]) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return repr(float(node.value))
    if isinstance(node, ast.Name):
        if node.id == "time":
            return "(seconds * 1000.0)"
        if node.id in done:
            return f"({done[node.id]})"
        if node.id in names:
            return node.id
        raise ValueError(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        # constants only (2*4096**3): folded here, since gpuk's metrics have no power
        return repr(float(eval(compile(ast.Expression(node), "<metric>", "eval"), {"__builtins__": {}})))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}[type(node.op)]
        return f"({_metric(node.left, names, done)} {op} {_metric(node.right, names, done)})"
    raise ValueError(type(node).__name__)


def _budget(strategy: str, options: Optional[Dict]) -> tuple:
    """gpuk's budget from strategy_options; whether the points must be counted (fraction)."""
    if options is None:
        return {}, None
    if not isinstance(options, dict):
        raise ConfigError("strategy_options must be a dict")
    allowed = {"max_fevals", "time_limit"} | STRATEGY_OPTIONS[strategy]
    unknown = [k for k in options if k not in allowed]
    if unknown:
        raise ConfigError(f"strategy_options {', '.join(map(repr, unknown))} of {strategy}: gpuk's "
                          f"{STRATEGIES[strategy]} takes {', '.join(sorted(allowed))} (its own schedule is not "
                          f"Kernel Tuner's)")
    budget: Dict[str, Any] = {}
    if "max_fevals" in options:
        v = options["max_fevals"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ConfigError(f"strategy_options max_fevals={v!r}: a positive integer")
        budget["evaluations"] = v
    if "time_limit" in options:
        v = options["time_limit"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ConfigError(f"strategy_options time_limit={v!r}: seconds above 0")
        budget["seconds"] = float(v)
    fraction = options.get("fraction")
    if fraction is not None and not (isinstance(fraction, (int, float)) and 0 <= fraction <= 1):
        raise ConfigError(f"strategy_options fraction={fraction!r}: between 0 and 1")
    return budget, fraction


def _objective(o: Dict[str, Any], strategy: str, names: List[str]) -> tuple:
    """(objective, higher_is_better, the declaration's metrics, a note): a string metric gpuk's
    language holds is declared and ranks the search; a callable one only with brute_force."""
    objective, higher = get_objective_defaults(o.get("objective"), o.get("objective_higher_is_better"))
    metrics = o.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise ConfigError("metrics should be a dictionary to preserve order and support composability")
    if objective == "time":
        return objective, bool(higher), {}, None
    if objective not in metrics:
        raise ConfigError(f"objective={objective!r}: gpuk ranks by time or by one of the metrics "
                          f"({', '.join(metrics) or 'none given'})")
    expression = metric_expression(objective, metrics, names)
    if expression is not None:
        return objective, bool(higher), {objective: expression}, None
    if strategy != "brute_force":
        raise ConfigError(f"objective={objective!r} is a callable or a metric gpuk's language cannot hold, so "
                          f"gpuk's {STRATEGIES[strategy]} search could not be guided by it; write it as a "
                          f"string of time, the parameters and numbers, or use brute_force")
    return objective, bool(higher), {}, (f"{objective} is computed in Python: the tuner measured every "
                                         f"configuration and ranked them by time; the best by {objective} is "
                                         f"chosen from the results")


def translate_call(o: Dict[str, Any], *, tune: bool = True) -> Translation:
    """`o`: every keyword of tune_kernel (run_kernel: with params as one-value lists). Everything
    is checked before the temporary kernel file is written."""
    files = read_sources(o["kernel_source"])
    code = files[0][1]
    name = o["kernel_name"]
    if not isinstance(name, str) or not name.isidentifier():
        raise ConfigError(f"kernel_name={name!r}: the plain name of a __global__ function (template "
                          f"instantiations such as 'k<float>' are not taken; use #define'd parameters)")
    if o.get("lang") is None and "__global__" not in code:
        raise ConfigError(f"{files[0][0]}: no __global__ function; gpuk tunes CUDA kernels only")
    space = Space(o["tune_params"])
    space.restrict(o.get("restrictions"))
    launch = Launch(space, o["problem_size"], [o.get("grid_div_x"), o.get("grid_div_y"), o.get("grid_div_z")],
                    o.get("block_size_names"), o.get("smem_args"), o.get("defines"))
    # Kernel Tuner's space holds no configuration whose block has more threads than the device
    # allows (1024 on every CUDA GPU since compute capability 2.0).
    threads = [b for b in launch.block if isinstance(b, str)]
    if threads:
        space.require(" * ".join(threads + [str(math.prod(b for b in launch.block if not isinstance(b, str)))])
                      + f" <= {MAX_THREADS}")
    n_args = len(o["arguments"]) if isinstance(o["arguments"], (list, tuple)) else 0
    names, const = argument_names(code, name, n_args)
    device = o.get("device", 0)
    first_device = device[0] if isinstance(device, (list, tuple)) else device
    args = arguments_.declare(o["arguments"], names, const, o.get("answer"), o.get("atol", 1e-6), o.get("verify"),
                              name, device=first_device)
    declared_constants, constants = arguments_.constants(o.get("cmem_args"))
    compiler_options = list(o.get("compiler_options") or [])
    if isinstance(o.get("compiler_options"), str) or not all(isinstance(x, str) for x in compiler_options):
        raise ConfigError("compiler_options must be a list of strings")

    strategy = o.get("strategy") or "brute_force"
    budget, fraction = _budget(strategy, o.get("strategy_options")) if tune else ({}, None)
    objective, higher, declared_metrics, note = _objective(o, strategy, space.names + list(launch.sizes))
    notes = [note] if note else []  # the tuner says itself what it verified against

    points = None
    if space.needs_points() or fraction is not None or o.get("_force_points"):
        points = space.points()
        if not points:
            raise ConfigError("no configuration of tune_params passes the restrictions")
        if fraction is not None and "evaluations" not in budget:
            budget["evaluations"] = max(1, int(math.ceil(len(points) * fraction)))

    params = dict(space.values)
    for d in space.derived:
        params[d] = sorted({p[d] for p in points})
    launch_entry: Dict[str, Any] = {"entry": name, "grid": launch.grid, "block": launch.block}
    if launch.shared != 0:
        launch_entry["shared_bytes"] = launch.shared
    sizes = launch.sizes or {"n": max([a.get("length", 1) for a in args.args if "array" in a] or [1])}
    declaration: Dict[str, Any] = {
        "family": "kernel",
        "summary": f"{name}, tuned from a Kernel Tuner call",
        "sizes": list(sizes),
        "params_as": "defines",
        "params": {n: {"default": v[0], "values": v} for n, v in params.items()},
        "args": args.args,
        "launch": [launch_entry],
    }
    if declared_constants:
        declaration["constants"] = declared_constants
    if compiler_options:
        declaration["compiler_options"] = compiler_options
    # Kernel Tuner's definitions above the kernel as the declaration's -D options (every variant
    # has them): the source stays the user's, so that a kernel with large headers can have them
    # precompiled (docs/tuning.md); a value of several lines, or a size's name, stays in the source.
    fixed = {k: v for k, v in launch.defines.items() if "\n" not in v and k not in launch.sizes}
    if fixed:
        declaration["defines"] = fixed
    if declared_metrics:
        declaration["metrics"] = declared_metrics
    kernel_dir = KernelDir(name, [(files[0][0], unroll_guard(code, space.names))] + files[1:],
                           prefix({k: v for k, v in launch.defines.items() if k not in fixed}))
    config: Dict[str, Any] = {
        "family": "kernel",
        "kernel": kernel_dir.kernel,
        "kernel_dirs": [kernel_dir.path],
        "sizes": sizes,
        "declare": declaration,
        "params": params,
        "strategy": STRATEGIES[strategy],
        "warmup": 1,
        "repeats": int(o.get("iterations", 7)),
        "compare": args.compare,
    }
    # Time, lower first, is the tuner's default; a metric only Python computes is ranked by time
    # there and by the metric here.
    if declared_metrics or (objective == "time" and higher):
        config["objective"] = {"metric": objective, "higher_is_better": higher}
    if points is not None:
        config["points"] = points
    elif space.constraints:
        config["constraints"] = list(space.constraints)
    if budget:
        config["budget"] = budget
    if o.get("seed") is not None:
        config["seed"] = int(o["seed"])
    verify = arguments_.verify_function(o["verify"], o.get("answer"), o.get("atol", 1e-6), args) \
        if o.get("verify") is not None else None
    return Translation(config, args.arrays, args.answers, constants, verify, kernel_dir, space, args, objective,
                       higher, points, notes)
