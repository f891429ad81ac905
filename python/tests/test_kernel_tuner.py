"""gpuk.kernel_tuner without a GPU: Kernel Tuner's arguments made into gpuk's tune config, gpuk's
report made into Kernel Tuner's (results, env), the cache file, the T4 output, and every refusal.
gpuk's tuner is replaced by a fake (`_gpuk.tune_kernel` monkeypatched) that checks the config it
is given and answers as the tuner does. The GPU side is test_kernel_tuner_gpu.py."""
import itertools
import json

import numpy as np
import pytest

import gpuk
from gpuk import _gpuk
from gpuk import kernel_tuner
from gpuk.kernel_tuner import interface, options
from gpuk.kernel_tuner.translate import translate_call
from gpuk.kernel_tuner.util import (CompilationFailedConfig, ErrorConfig, InvalidConfig, RuntimeFailedConfig,
                                    WrongAnswerConfig)

VECTOR_ADD = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def vector_args(n=1000):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    return [np.zeros_like(a), a, b, np.int32(n)], a + b


def points_of(config):
    if "points" in config:
        return [dict(p) for p in config["points"]]
    names = list(config["params"])
    return [dict(zip(names, v)) for v in itertools.product(*config["params"].values())]


def satisfied(constraint, point):
    """A constraint in gpuk's language, evaluated as the tuner does (C's integer division)."""
    text = constraint.replace("&&", " and ").replace("||", " or ").replace("/", "//")
    return bool(eval(text, {"__builtins__": {}, "min": min, "max": max}, dict(point)))


class FakeTuner:
    """Records the call; answers every point measured at 1 ms per 64 threads of x, except what
    `fail` says (params tuple -> (status, reason))."""

    def __init__(self, fail=None):
        self.fail = fail or {}
        self.notes = []
        self.calls = []

    def __call__(self, config, arrays, answers, constants, verify, journal, devices, quiet):
        self.calls.append(dict(config=config, arrays=arrays, answers=answers, constants=constants, verify=verify,
                               journal=journal, devices=devices, quiet=quiet))
        results = []
        for p in points_of(config):
            status, reason = self.fail.get(tuple(p.values()), ("ok", ""))
            broken = [c for c in config.get("constraints", []) if not satisfied(c, p)]
            if broken:
                status, reason = "pruned", f"breaks the constraint '{broken[0]}'"
            ok = status == "ok"
            t = 0.01 * (1 + abs(p.get("block_size_x", 64) - 256) / 64)
            results.append({"params": p, "time": t if ok else None, "times": [t] * config["repeats"] if ok else [],
                            "metrics": {}, "status": status, "reason": reason, "verified": True if ok else None,
                            "compile_time": 30.0, "verification_time": 1.0 if ok else 0.0,
                            "benchmark_time": 2.0 if ok else 0.0})
        return {"results": results, "best": None, "device": {"name": "Fake GPU", "arch": "sm_90"},
                "notes": ["fake"] + self.notes, "strategy": config["strategy"], "wall_seconds": 0.1, "compile": {}}


@pytest.fixture
def fake(monkeypatch):
    tuner = FakeTuner()
    monkeypatch.setattr(_gpuk, "tune_kernel", tuner, raising=False)
    monkeypatch.setattr(interface, "_device_name", lambda device: "Fake GPU")
    return tuner


def test_kernel_tuner_is_importable_in_place_of_kernel_tuner():
    from gpuk.kernel_tuner import run_kernel, tune_kernel
    assert tune_kernel is kernel_tuner.tune_kernel and run_kernel is kernel_tuner.run_kernel
    assert callable(kernel_tuner.util.get_best_config) and callable(kernel_tuner.util.get_config_string)
    assert callable(kernel_tuner.file_utils.store_output_file)
    assert callable(kernel_tuner.file_utils.store_metadata_file)
    assert ":param grid_div_x:" in tune_kernel.__doc__ and ":param params:" in run_kernel.__doc__


def test_vector_add_becomes_a_declared_kernel_with_kernel_tuners_launch_and_defines():
    args, expected = vector_args()
    t = translate_call(dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=1000, arguments=args,
                            tune_params={"block_size_x": [128, 192, 256]}, answer=[expected, None, None, None],
                            iterations=9))
    try:
        c = t.config
        d = c["declare"]
        assert c["kernel"] == "kt_vector_add" and c["sizes"] == {"problem_size_x": 1000, "problem_size_y": 1,
                                                             "problem_size_z": 1}
        assert d["params_as"] == "defines" and d["params"]["block_size_x"]["values"] == [128, 192, 256]
        assert d["launch"] == [{"entry": "vector_add", "grid": ["ceil_div(problem_size_x, block_size_x)",
                                                                "problem_size_y", "problem_size_z"],
                                "block": ["block_size_x", 1, 1]}]
        assert [(a["name"], a.get("role", a.get("scalar"))) for a in d["args"]] == [
            ("c", "inout"), ("a", "in"), ("b", "in"), ("n", "int32")]
        assert d["args"][3]["value"] == 1000
        assert c["compare"] == {"c": {"atol": 1e-6, "rtol": 1e-5}} and c["repeats"] == 9
        assert c["strategy"] == "exhaustive" and "objective" not in c  # time, lower first: the tuner's default
        assert c["constraints"] == ["block_size_x * 1 <= 1024"]
        np.testing.assert_array_equal(t.answers["c"], expected)
        assert set(t.arrays) == {"c", "a", "b"}
        code = open(t.kernel_dir.file).read()
        # what Kernel Tuner defines above the kernel, parameters aside (gpuk passes those as -D):
        # the declaration's -D options, the source as it was given
        assert d["defines"] == {"block_size_y": "1", "block_size_z": "1",
                                "grid_size_x": "(((1000) + (block_size_x) - 1) / (block_size_x))",
                                "grid_size_y": "1", "grid_size_z": "1", "kernel_tuner": "1"}
        assert code == VECTOR_ADD
    finally:
        t.kernel_dir.close()


def test_results_come_back_in_kernel_tuners_form_with_failures_marked_and_never_ranked(fake):
    fake.fail = {(128,): ("compile error", "ptxas error: too much shared data"),
                 (192,): ("wrong answer", "c: 3 of 1000 differ"),
                 (320,): ("faulted", "an illegal memory access"),
                 (384,): ("pruned", "breaks the constraint 'block_size_x * 1 <= 1024'")}
    args, expected = vector_args()
    metrics = {"GB/s": lambda p: 12e3 / p["time"] / 1e6, "x": "1000 / time", "x2": "x * x"}
    results, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args,
                                            {"block_size_x": [128, 192, 256, 320, 384]},
                                            answer=[expected, None, None, None], metrics=metrics, quiet=True)
    assert [r["block_size_x"] for r in results] == [128, 192, 256, 320]  # 384 is outside the space
    bad = {r["block_size_x"]: r["__error__"] for r in results if "__error__" in r}
    assert type(bad[128]) is CompilationFailedConfig and "shared data" in bad[128].reason
    assert isinstance(bad[192], WrongAnswerConfig) and isinstance(bad[192], RuntimeFailedConfig)
    assert type(bad[320]) is RuntimeFailedConfig
    # Kernel Tuner 1.5's form: the mark in "__error__", no "time" (kernel_tuner/core.py compile_and_benchmark)
    assert all("time" not in results[i] and "times" not in results[i] for i in (0, 1, 3))
    assert repr(bad[128]) == "CompilationFailedConfig" and isinstance(bad[128], ErrorConfig)
    good = results[2]
    assert good["time"] == pytest.approx(0.01) and good["times"] == [pytest.approx(0.01)] * 7
    assert good["x"] == pytest.approx(1000 / 0.01) and good["x2"] == pytest.approx((1000 / 0.01) ** 2)
    assert good["GB/s"] == pytest.approx(12e3 / 0.01 / 1e6)
    assert "x" not in results[0]  # no metrics on a failure, as Kernel Tuner
    for r in results:
        assert {"compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time",
                "timestamp"} <= set(r)
    assert env["best_config"] is good and env["device_name"] == "Fake GPU" and env["iterations"] == 7
    assert env["total_compile_time"] == pytest.approx(120.0)
    json.dumps(results)  # scripts dump them (Kernel Tuner's matmul example)
    assert kernel_tuner.util.get_best_config(results, "time") is good


def test_without_an_answer_the_configurations_that_differ_from_the_first_are_counted_and_said(fake, capsys):
    # gpuk compares each configuration with the first one's outputs where nothing else is given;
    # those that differ are not ranked, which Kernel Tuner (checking nothing) does not do: said.
    fake.notes = ["no answer given: verified against the first variant's outputs (block_size_x=128)"]
    fake.fail = {(192,): ("wrong answer", "c: 3 of 1000 differ"), (320,): ("wrong answer", "c: 1 of 1000 differs")}
    args, _ = vector_args()
    results, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args,
                                            {"block_size_x": [128, 192, 256, 320]})
    said = [n for n in env["gpuk_notes"] if "differ from the first configuration's" in n]
    assert len(said) == 1 and said[0].startswith("2 of 4 configurations' outputs differ") and "answer=" in said[0]
    assert "gpuk: 2 of 4 configurations' outputs differ" in capsys.readouterr().out
    # With an answer, a wrong answer is just that: no such note.
    fake.notes = []
    results, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args,
                                            {"block_size_x": [128, 192, 256, 320]},
                                            answer=[vector_args()[1], None, None, None], quiet=True)
    assert not [n for n in env["gpuk_notes"] if "differ from the first" in n]


def test_every_failure_leaves_no_best_config(fake):
    fake.fail = {(128,): ("compile error", "x"), (256,): ("timed out", "ran past 10 s")}
    args, _ = vector_args()
    results, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, {"block_size_x": [128, 256]},
                                            quiet=True)
    assert "best_config" not in env and all("__error__" in r for r in results)
    assert repr(results[1]["__error__"]) == "TimeoutConfig"


def test_the_tuner_gets_the_arrays_the_answers_the_devices_and_quiet(fake):
    args, expected = vector_args()
    kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, {"block_size_x": [256]},
                             answer=[expected, None, None, None], device=[0, 1], quiet=True)
    call = fake.calls[0]
    assert call["devices"] == [0, 1] and call["quiet"] is True and call["journal"] is None
    # host arrays as they are (no copy), in C order
    assert np.shares_memory(call["arrays"]["a"], args[1]) and call["arrays"]["a"].shape == (1000,)
    assert list(call["answers"]) == ["c"] and call["verify"] is None


def test_restrictions_strings_become_constraints_and_callables_points():
    tp = {"block_size_x": [16, 32, 64], "block_size_y": [1, 2, 4, 8, 16, 32], "tile_size_y": [1, 2, 4, 8]}
    base = dict(kernel_name="k", kernel_source="__global__ void k(float *x) {}", problem_size=(64, 64),
                arguments=[np.zeros(64 * 64, np.float32)], tune_params=tp)
    t = translate_call({**base, "restrictions": ["block_size_x==block_size_y*tile_size_y",
                                                 "not (tile_size_y > 4 and block_size_y == 1) or block_size_x % 32 != 0"]})
    assert t.config["constraints"][:2] == ["((block_size_x == (block_size_y * tile_size_y)))",
                                           "(((((tile_size_y > 4)) && ((block_size_y == 1))) == 0) || "
                                           "(((block_size_x % 32) != 0)))"]
    assert "points" not in t.config
    t.kernel_dir.close()
    # a true division inside a restriction compares the exact quotient: Python decides
    t = translate_call({**base, "restrictions": ["block_size_x / 32 == 1.5 or block_size_x == 16"]})
    assert {p["block_size_x"] for p in t.config["points"]} == {16}
    t.kernel_dir.close()
    t = translate_call({**base, "restrictions": lambda p: p["block_size_x"] * p["block_size_y"] == 64})
    pts = t.config["points"]
    assert pts and all(p["block_size_x"] * p["block_size_y"] == 64 for p in pts)
    assert len(pts) == 3 * 4 - 0 and "constraints" not in t.config
    t.kernel_dir.close()


def test_grid_divisors_and_problem_sizes_as_expressions_callables_and_parameter_names(fake):
    tp = {"block_size_x": [32, 64, 128], "threads_per_row": [1, 32]}
    base = dict(kernel_name="k", kernel_source="__global__ void k(float *x) {}", arguments=[np.zeros(1000, np.float32)],
                tune_params=tp)
    t = translate_call({**base, "problem_size": 1000, "grid_div_x": ["block_size_x/threads_per_row"]})
    assert t.config["declare"]["launch"][0]["grid"][0] == "ceil_div(problem_size_x, (block_size_x / threads_per_row))"
    t.kernel_dir.close()
    t = translate_call({**base, "problem_size": "block_size_x * 2", "grid_div_x": []})
    assert t.config["declare"]["launch"][0]["grid"][0] == "(block_size_x * 2)"
    t.kernel_dir.close()
    # a divisor only Python can compute: grid_size_x per point, as Kernel Tuner computes it
    results, _ = kernel_tuner.tune_kernel("k", "__global__ void k(float *x) {}", 1000, base["arguments"], tp,
                                          grid_div_x=[lambda p: p["block_size_x"] / p["threads_per_row"]], quiet=True)
    config = fake.calls[-1]["config"]
    assert config["declare"]["launch"][0]["grid"][0] == "grid_size_x"
    assert {(p["block_size_x"], p["threads_per_row"]): p["grid_size_x"] for p in config["points"]} == {
        (32, 1): 32, (32, 32): 1000, (64, 1): 16, (64, 32): 500, (128, 1): 8, (128, 32): 250}
    assert all("grid_size_x" not in r for r in results) and len(results) == 6


def test_integer_outputs_are_compared_exactly_as_gpuk_takes_them():
    """gpuk refuses a tolerance for an integer output ("integers are compared exactly"): an int32
    output (point-in-polygon's bitmap), with an answer or without, gets none; a float one gets
    numpy.allclose's."""
    code = "__global__ void k(int *bitmap, float *y, const float *x) {}"
    args = [np.zeros(10, np.int32), np.zeros(10, np.float32), np.ones(10, np.float32)]
    for answer in ([np.ones(10, np.int32), np.ones(10, np.float32), None], None):
        t = translate_call(dict(kernel_name="k", kernel_source=code, problem_size=10, arguments=args,
                                tune_params={"block_size_x": [32]}, answer=answer, atol=0.5))
        try:
            assert t.config["compare"] == {"y": {"atol": 0.5, "rtol": 1e-5}}
            assert [a.get("role") for a in t.config["declare"]["args"]] == ["inout", "inout", "in"]
        finally:
            t.kernel_dir.close()


def test_block_size_names_smem_args_cmem_args_defines_and_compiler_options():
    t = translate_call(dict(kernel_name="k", kernel_source="__global__ void k(float *x) {}", problem_size=(100, 10),
                            arguments=[np.zeros(1000, np.float32)], tune_params={"bx": [32, 64], "by": [2]},
                            block_size_names=["bx", "by"], smem_args={"size": "bx * by * 4"},
                            cmem_args={"d_filter": np.arange(9, dtype=np.float32)},
                            defines={"WIDTH": 100, "HALF": "bx / 2", "TWICE": lambda p: 2 * p["bx"]},
                            compiler_options=["-use_fast_math"]))
    try:
        d = t.config["declare"]
        assert d["launch"][0]["block"] == ["bx", "by", 1] and d["launch"][0]["shared_bytes"] == "((bx * by) * 4)"
        assert d["launch"][0]["grid"][:2] == ["ceil_div(problem_size_x, bx)", "ceil_div(problem_size_y, by)"]
        assert d["constants"] == [{"name": "d_filter", "array": "float32", "length": 9}]
        np.testing.assert_array_equal(t.constants["d_filter"], np.arange(9, dtype=np.float32))
        assert d["compiler_options"] == ["-use_fast_math"]
        assert {p["bx"]: p["TWICE"] for p in t.config["points"]} == {32: 64, 64: 128}
        code = open(t.kernel_dir.file).read()
        # a defines dict is all Kernel Tuner writes: no grid_size_x, no kernel_tuner; as the
        # declaration's -D options, the source as it was given
        assert d["defines"] == {"WIDTH": "100", "HALF": "bx / 2"}
        assert code == "__global__ void k(float *x) {}"
    finally:
        t.kernel_dir.close()


def test_strategies_and_their_options_map_to_gpuks(fake):
    args, _ = vector_args()
    tp = {"block_size_x": [32 * i for i in range(1, 11)]}
    for kt, ours in options.STRATEGIES.items():
        kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, strategy=kt,
                                 strategy_options={"max_fevals": 4, "time_limit": 2.5}, quiet=True)
        assert fake.calls[-1]["config"]["strategy"] == ours
        assert fake.calls[-1]["config"]["budget"] == {"evaluations": 4, "seconds": 2.5}
    kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, strategy="random_sample",
                             strategy_options={"fraction": 0.25}, seed=3, quiet=True)
    assert fake.calls[-1]["config"]["budget"] == {"evaluations": 3} and fake.calls[-1]["config"]["seed"] == 3
    with pytest.raises(gpuk.ConfigError, match=r"strategy='pso': gpuk has exhaustive, random, anneal, bayes"):
        kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, strategy="pso")
    with pytest.raises(gpuk.ConfigError, match=r"strategy_options 'T' of simulated_annealing"):
        kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, strategy="simulated_annealing",
                                 strategy_options={"T": 1.0})


@pytest.mark.parametrize("keyword, value, words", [
    ("lang", "OpenCL", "CUDA with NVRTC only"),
    ("texmem_args", {"t": np.zeros(4)}, "texmem_args: gpuk binds no textures"),
    ("observers", [object()], "observers: gpuk has no observers"),
    ("simulation_mode", True, "simulation_mode"),
    ("parallel", True, "device=\\[0, 1, ...\\]"),
    ("objectives", {"time": False, "energy": False}, "one objective"),
    ("smem_args", {"size": 4, "carveout": 1}, "smem_args \\['carveout'\\]"),
    ("compiler", "g++", "compiler: gpuk compiles device code with NVRTC"),
    ("platform", 1, "OpenCL"),
    ("log", 10, "log: gpuk writes no log file"),
    ("iterations", 0, "iterations=0"),
    ("device", "cuda:0", "device='cuda:0'"),
])
def test_what_gpuk_cannot_honour_is_refused_by_name(fake, keyword, value, words):
    args, _ = vector_args()
    with pytest.raises(gpuk.ConfigError, match=words):
        kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, {"block_size_x": [64]}, **{keyword: value})
    assert not fake.calls


@pytest.mark.parametrize("change, words", [
    (dict(tune_params={"block_size_x": [64.0]}), "not an integer"),
    (dict(tune_params={"block_size_x": [True]}), "not an integer"),
    (dict(tune_params={"grid_size_x": [1]}), "forbidden name"),
    (dict(arguments=[np.zeros(1000, np.float32), np.zeros(1000, np.float32), np.zeros(1000, np.float32), 1000]),
     "Python int has no width"),
    (dict(arguments=[np.zeros(4, np.float32)]), "takes 4 arguments \\(c, a, b, n\\), not the 1 given"),
    (dict(arguments=[np.zeros(4, np.float16)] * 3 + [np.int32(4)]), "float16"),
    (dict(arguments=[np.zeros(0, np.float32)] * 3 + [np.int32(0)]), "an empty array"),
    (dict(kernel_source=lambda p: VECTOR_ADD), "code-generating function"),
    (dict(kernel_name="vector_add<float>"), "template instantiations"),
    (dict(answer=[None]), "one per argument"),
    (dict(answer=[np.zeros(7, np.float32), None, None, None]), "has 7 elements, the argument 1000"),
    (dict(answer=[None, None, None, np.int32(3)]), "a scalar has no output"),
    (dict(restrictions=[("x", ["block_size_x"])]), "gpuk takes strings and callables"),
    (dict(restrictions=["block_size_x / 2 > width"]), "'block_size_x / 2 > width': name 'width' is not defined"),
    (dict(restrictions=["block_size_x >"]), "is not a Python expression"),
    (dict(objective="GFLOP/s"), "ranks by time or by one of the metrics"),
    (dict(objective="GFLOP/s", metrics={"GFLOP/s": lambda p: 1 / p["time"]}, strategy="bayes_opt"),
     "could not be guided by it"),
])
def test_a_wrong_call_is_refused_before_the_tuner(fake, change, words):
    args, _ = vector_args()
    call = dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=1000, arguments=args,
                tune_params={"block_size_x": [64]})
    call.update(change)
    with pytest.raises((gpuk.ConfigError, ValueError), match=words):
        kernel_tuner.tune_kernel(**call)
    assert not fake.calls


def test_a_string_metric_can_be_the_objective_of_gpuks_search(fake):
    args, _ = vector_args()
    metrics = {"GFLOP/s": "2*4096**3/1e9 / (time / 1e3)"}
    results, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, {"block_size_x": [64, 256]},
                                            metrics=metrics, objective="GFLOP/s", strategy="bayes_opt", quiet=True)
    config = fake.calls[-1]["config"]
    assert config["objective"] == {"metric": "GFLOP/s", "higher_is_better": True}
    assert config["declare"]["metrics"]["GFLOP/s"] == \
        "(((2.0 * 68719476736.0) / 1000000000.0) / ((seconds * 1000.0) / 1000.0))"
    assert env["best_config"]["block_size_x"] == 256


def test_verify_gets_kernel_tuners_lists(fake):
    seen = []

    def verify(answer, result, atol=None):
        seen.append((answer, result, atol))
        return float(np.sum(result[0])) == 6.0

    x = np.ones(6, np.float32)
    partial = np.zeros(4, np.float32)
    kernel_tuner.tune_kernel("sum", "__global__ void sum(float *out, const float *x, int n) {}", "num_blocks",
                             [partial, x, np.int32(6)], {"block_size_x": [32], "num_blocks": [1, 2]}, grid_div_x=[],
                             answer=[np.float32(6), None, None], verify=verify, atol=1e-3, quiet=True)
    call = fake.calls[-1]
    assert call["answers"] == {} and call["config"]["compare"] == {}
    assert [a.get("role") for a in call["config"]["declare"]["args"]] == ["inout", "in", None]
    assert call["config"]["declare"]["launch"][0]["grid"][0] == "num_blocks"
    # gpuk's tuner calls it with the expected outputs (here the first variant's) and the variant's
    got = {"out": np.array([2, 4, 0, 0], np.float32)}
    assert call["verify"]({"out": np.zeros(4, np.float32)}, got) is True
    assert call["verify"]({"out": np.zeros(4, np.float32)}, {"out": np.ones(4, np.float32)}) is False
    answer, result, atol = seen[0]
    assert answer[0] == 6 and result[1] is None and result[2] is None and atol == 1e-3


def test_the_cache_is_kernel_tuners_file_and_resumes(fake, tmp_path):
    args, expected = vector_args()
    tp = {"block_size_x": [64, 128, 256]}
    fake.fail = {(128,): ("compile error", "x")}
    cache = tmp_path / "vector_add"
    first, _ = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, {"block_size_x": [64, 128]},
                                        cache=str(cache), quiet=True)
    # gpuk's journal beside the cache while the tuner runs (a cut tune goes on from it), then removed
    assert fake.calls[-1]["journal"] == str(tmp_path / "vector_add.gpuk-journal")
    assert not (tmp_path / "vector_add.gpuk-journal").exists()
    with pytest.raises(ValueError, match="different tunable parameters"):
        kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, {"bx": [1]}, cache=str(cache), quiet=True)
    data = json.loads((tmp_path / "vector_add.json").read_text())
    assert data["device_name"] == "Fake GPU" and data["kernel_name"] == "vector_add" and data["problem_size"] == 1000
    assert data["tune_params_keys"] == ["block_size_x"] and set(data["cache"]) == {"64", "128"}
    assert data["cache"]["128"]["__error__"] == "CompilationFailedConfig"
    # the cache's header fixed the parameters: the same call again runs nothing
    n = len(fake.calls)
    again, _ = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, {"block_size_x": [64, 128]},
                                        cache=str(cache), quiet=True)
    assert len(fake.calls) == n and [r["block_size_x"] for r in again] == [64, 128]
    assert type(again[1]["__error__"]) is CompilationFailedConfig and again[0]["compile_time"] == 0
    json.loads((tmp_path / "vector_add.json").read_text())


def test_a_cut_cache_is_read_and_the_rest_run(fake, tmp_path):
    args, _ = vector_args()
    tp = {"block_size_x": [64, 128, 256]}
    path = tmp_path / "c.json"
    head = {"device_name": "Fake GPU", "kernel_name": "vector_add", "problem_size": 1000,
            "tune_params_keys": ["block_size_x"], "tune_params": tp, "objective": "time", "cache": {}}
    entry = {"block_size_x": 128, "time": 0.5, "times": [0.5], "compile_time": 1, "verification_time": 0,
             "benchmark_time": 1, "strategy_time": 0, "framework_time": 0, "timestamp": "t"}
    path.write_text(json.dumps(head, indent="")[:-3] + "\n" + json.dumps({"128": entry})[1:-1] + ",")
    results, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, cache=str(path), quiet=True)
    assert [p["block_size_x"] for p in fake.calls[-1]["config"]["points"]] == [64, 256]
    assert sorted(r["block_size_x"] for r in results) == [64, 128, 256]
    assert set(json.loads(path.read_text())["cache"]) == {"64", "128", "256"}


def test_store_output_file_writes_t4(fake, tmp_path):
    fake.fail = {(128,): ("wrong answer", "c differs")}
    args, _ = vector_args()
    tp = {"block_size_x": [64, 128]}
    results, _ = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, quiet=True)
    kernel_tuner.file_utils.store_output_file(str(tmp_path / "out"), results, tp)
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["schema_version"] == "1.0.0"
    assert [(r["configuration"], r["invalidity"], r["correctness"]) for r in data["results"]] == [
        ({"block_size_x": 64}, "correct", 1), ({"block_size_x": 128}, "correctness", 0)]
    assert data["results"][0]["times"]["runtimes"] == [pytest.approx(0.01 * 4)] * 7
    kernel_tuner.file_utils.store_metadata_file(str(tmp_path / "meta"))
    assert json.loads((tmp_path / "meta.json").read_text())["schema_version"] == "1.0.0"


def test_get_config_string_and_get_best_config_as_kernel_tuners():
    util = kernel_tuner.util
    assert util.get_config_string({"block_size_x": 64, "time": 0.12345}) == "block_size_x=64, time=0.123"
    results = [{"t": InvalidConfig(), "__error__": InvalidConfig()}, {"t": 2.0}, {"t": 1.5}]
    assert util.get_best_config(results, "t") is results[2]
    assert util.get_best_config(results, "t", True) is results[1]


def test_unroll_pragmas_of_a_zero_factor_are_guarded():
    code = "__global__ void k(float *x) {\n    #pragma unroll loop_unroll_factor_0\n    for (;;) {}\n}\n"
    t = translate_call(dict(kernel_name="k", kernel_source=code, problem_size=10, arguments=[np.zeros(10, np.float32)],
                            tune_params={"loop_unroll_factor_0": [0, 4]}))
    try:
        assert "    #if loop_unroll_factor_0 != 0\n    #pragma unroll loop_unroll_factor_0\n    #endif\n" in \
            open(t.kernel_dir.file).read()
    finally:
        t.kernel_dir.close()


def test_the_docs_page_has_the_option_table_as_the_code_has_it(repo):
    page = (repo / "docs" / "kernel-tuner.md").read_text()
    assert options.markdown_table(options.TUNE_OPTIONS) in page
    assert options.markdown_table({"params": options.RUN_OPTIONS["params"]}) in page


def test_run_kernel_refuses_what_kernel_tuners_refuses_before_the_gpu():
    args, _ = vector_args()
    with pytest.raises(gpuk.ConfigError, match="run_kernel: params must be a dict"):
        kernel_tuner.run_kernel("vector_add", VECTOR_ADD, 1000, args, [64])
    with pytest.raises(TypeError, match="answer"):  # a keyword run_kernel lacks, as in Kernel Tuner
        kernel_tuner.run_kernel("vector_add", VECTOR_ADD, 1000, args, {"block_size_x": 64}, answer=[None] * 4)


def test_a_single_grid_divisor_string_is_one_divisor():
    t = translate_call(dict(kernel_name="k", kernel_source="__global__ void k(float *x) {}", problem_size=1000,
                            arguments=[np.zeros(1000, np.float32)], tune_params={"block_size_x": [32, 64]},
                            grid_div_x="block_size_x*2"))
    try:
        assert t.config["declare"]["launch"][0]["grid"][0] == "ceil_div(problem_size_x, (block_size_x * 2))"
    finally:
        t.kernel_dir.close()


def test_the_option_table_holds_exactly_the_signatures_keywords():
    import inspect
    assert list(inspect.signature(kernel_tuner.tune_kernel).parameters) == list(options.TUNE_OPTIONS)
    assert set(inspect.signature(kernel_tuner.run_kernel).parameters) == set(options.RUN_OPTIONS)


def test_a_cache_of_another_gpu_is_refused(fake, tmp_path):
    args, _ = vector_args()
    tp = {"block_size_x": [64, 128]}
    path = tmp_path / "other.json"
    head = {"device_name": "Other GPU", "kernel_name": "vector_add", "problem_size": 1000,
            "tune_params_keys": ["block_size_x"], "tune_params": tp, "objective": "time", "cache": {}}
    path.write_text(json.dumps(head, indent="")[:-3] + "}\n}")
    with pytest.raises(ValueError, match="different device \\(cache: Other GPU, actual: Fake GPU\\)"):
        kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, cache=str(path), quiet=True)
    assert json.loads(path.read_text())["cache"] == {}


@pytest.mark.parametrize("call", [
    dict(tune_params={"block_size_x": [64, 128]}),
    dict(tune_params={"block_size_x": [32, 64], "tile": [1, 2]}, grid_div_x=["block_size_x", "tile"],
         restrictions=["block_size_x * tile <= 128 and not tile == 3"], smem_args={"size": "block_size_x * 4"},
         metrics={"GFLOP/s": "1000 / 1e9 / (time / 1e3)"}, objective="GFLOP/s"),
    dict(tune_params={"block_size_x": [32, 64], "tile": [1, 2]}, grid_div_x=[lambda p: p["block_size_x"] * p["tile"]],
         smem_args={"size": lambda p: p["block_size_x"] * 4}, defines={"TWICE": lambda p: 2 * p["tile"]}),
    dict(problem_size="block_size_x * 4", grid_div_x=[], tune_params={"block_size_x": [32, 64]}),
])
def test_every_declaration_made_is_one_gpuks_parser_takes(call):
    """The translation's declaration read by gpuk's own parser (the Kernel's declare=), no GPU."""
    args, _ = vector_args()
    t = translate_call({**dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=1000,
                               arguments=args), **call})
    try:
        k = gpuk.Kernel(t.kernel_dir.file, declare=t.config["declare"], engine=gpuk.Engine(kernels=[t.kernel_dir.path]),
                        params=(t.config.get("points") or [{n: v[0] for n, v in t.config["params"].items()}])[0])
        assert [a["name"] for a in k.arrays] == ["c", "a", "b"] and k.sizes == list(t.config["sizes"])
    finally:
        t.kernel_dir.close()


def test_end_to_end_on_gpuks_tuner_over_the_fake_driver(tmp_path):
    """The real tuner (gpuk._gpuk.tune_kernel) on the driver whose device memory is host memory and
    whose launches write nothing (tests/api/fake_driver.cpp), in a child process that loads it: the
    translation taken whole by the tuner, its report made into Kernel Tuner's results."""
    import os
    import subprocess
    import sys
    import textwrap
    from pathlib import Path
    if not hasattr(_gpuk, "tune_kernel"):
        pytest.skip("this build's _gpuk has no tune_kernel (gpuk's tuner binding)")
    driver = Path(_gpuk.__file__).parent.parent.parent / "tests" / "fake_memory_driver"
    if not (driver / "libcuda.so.1").exists():
        pytest.skip("the fake driver is not built (cmake --build build --target gpuk_fake_memory_driver)")
    body = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_kernel_tuner import VECTOR_ADD, vector_args
        from gpuk import kernel_tuner
        args, expected = vector_args()
        tp = {{"block_size_x": [64, 128, 2048]}}
        out = {{}}
        # a launch writes nothing: c keeps its data (zeros), which is the answer here
        r, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, quiet=True,
                                          answer=[np.zeros(1000, np.float32), None, None, None],
                                          cache={str(tmp_path / "cache")!r}, metrics={{"x": "1 / time"}})
        out["ok"] = [(x["block_size_x"], "__error__" in x, x["x"] > 0) for x in r]
        out["best"] = env["best_config"]["block_size_x"]
        r, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, quiet=True,
                                          answer=[expected, None, None, None])
        out["wrong"] = [(repr(x["__error__"]), x["__error__"].reason[:12]) for x in r]
        r, _ = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, quiet=True,
                                        verify=lambda a, b, atol=None: False)
        out["verify"] = sorted({{x["__error__"].reason for x in r}})
        r, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, tp, quiet=True,
                                          answer=[np.zeros(1000, np.float32), None, None, None],
                                          cache={str(tmp_path / "cache")!r})
        out["resumed"] = [(x["block_size_x"], x["compile_time"]) for x in r]
        print(json.dumps(out))
    """)
    env = dict(os.environ, LD_LIBRARY_PATH=f"{driver}:{os.environ.get('LD_LIBRARY_PATH', '')}",
               GPUK_CACHE_DIR=str(tmp_path / "gpuk-cache"), PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, "-c", body], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["ok"] == [[64, False, True], [128, False, True]]  # 2048 threads: outside the space
    assert out["best"] in (64, 128)
    assert out["wrong"] == [["WrongAnswerConfig", "mismatch: c:"]] * 2
    assert out["verify"] == ["rejected by the verify function"]
    assert out["resumed"] == [[64, 0], [128, 0]]


def test_with_cuda_started_by_another_library_gpuk_starts_it_too_before_the_sweep(fake, monkeypatch):
    """CUDA does not survive a fork: the tuner must then measure in this process, which it does
    once gpuk itself has started the driver."""
    started = []
    monkeypatch.setattr(interface, "_cuda_started_elsewhere", lambda: True)
    monkeypatch.setattr(interface, "_device_name", lambda device: started.append(device) or "Fake GPU")
    args, _ = vector_args()
    kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, 1000, args, {"block_size_x": [64]}, device=[1], quiet=True)
    assert started == [1] and len(fake.calls) == 1


def test_cccl_headers_come_from_cuda_home_and_cub_cuh_is_its_device_code(tmp_path, monkeypatch):
    """Kernel Tuner's rule (CUDA_HOME, CUDA_PATH, CUDA_ROOT), CUDA 13's include/cccl; cub.cuh keeps
    the block, warp and thread levels of the toolkit's own (NVRTC compiles no host code)."""
    from pathlib import Path
    from gpuk.kernel_tuner import toolkit
    cccl = tmp_path / "cuda" / "include" / "cccl"
    for library in ("cub/block", "cub/device", "thrust", "cuda/std", "nv"):
        (cccl / library).mkdir(parents=True)
    (cccl / "cub" / "cub.cuh").write_text(
        "#pragma once\n#include <cub/config.cuh>\n#include <cub/block/block_reduce.cuh>\n"
        "#include <cub/device/device_reduce.cuh>\n#include <cub/warp/warp_scan.cuh>\n"
        "#include <cub/thread/thread_load.cuh>\n#include <cub/util_device.cuh>\n")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert toolkit.cccl_dir() == cccl
    assert toolkit.includes_cccl(["#include <cub/cub.cuh>\n"]) and not toolkit.includes_cccl(['#include "my.h"\n'])
    include = tmp_path / "kernels" / "include"
    include.parent.mkdir()
    assert toolkit.link_cccl(include)
    assert sorted(p.name for p in include.iterdir()) == ["cub", "cuda", "nv", "thrust"]
    assert (include / "thrust").resolve() == cccl / "thrust"
    assert (include / "cub" / "block").resolve() == cccl / "cub" / "block"
    umbrella = (include / "cub" / "cub.cuh").read_text().splitlines()
    assert [line for line in umbrella if line.startswith("#include")] == [
        "#include <cub/block/block_reduce.cuh>", "#include <cub/warp/warp_scan.cuh>",
        "#include <cub/thread/thread_load.cuh>"]
    code = "#include <cub/cub.cuh>\n__global__ void k(float *x) {}\n"
    t = translate_call(dict(kernel_name="k", kernel_source=code, problem_size=10,
                            arguments=[np.zeros(10, np.float32)], tune_params={"block_size_x": [32]}))
    try:
        assert (Path(t.kernel_dir.path) / "include" / "cub" / "cub.cuh").is_file()
    finally:
        t.kernel_dir.close()
