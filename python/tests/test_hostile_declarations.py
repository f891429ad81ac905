"""Hostile declarations from Python without a GPU (docs/reliability.md, "Bounds on what gpuk
reads"): a kernel directory holding a metric 20,000 parentheses deep or 8,000 parameters opens
(the broken file is a problem of its own, not a crash of the interpreter), gpuk.Kernel(declare=)
takes at most 64 parameters, and float scalars are finite unless the declaration says not."""
import copy
import time  # process_time: a shared test machine stretches wall time

import pytest

import gpuk
from test_kernel import AXPY

# The broken files are load problems, which the engine says as warnings: expected here.
pytestmark = pytest.mark.filterwarnings("ignore::gpuk.GpukWarning")

PLAIN = 'extern "C" __global__ void axpy(float* y, const float* x, float a, int n) {}\n'


def sidecar(extra):
    return ("sizes: [n]\nparams_as: defines\nargs:\n"
            "  - {name: y, array: float32, length: n, role: inout}\n"
            "  - {name: x, array: float32, length: n, role: in}\n"
            "  - {name: a, scalar: float32, value: 2.0}\n"
            "  - {name: n, scalar: int32, value: n}\n"
            "launch:\n  - {entry: axpy, grid: \"ceil_div(n, 256)\", block: 256}\n" + extra)


def kernel_dir(tmp_path, files):
    (tmp_path / "kernel").mkdir(mode=0o700)
    tmp_path.chmod(0o700)
    for name, text in files.items():
        (tmp_path / "kernel" / name).write_text(text)
    return tmp_path


def test_a_metric_20000_deep_is_its_files_problem_not_the_interpreters(tmp_path):
    deep = "(" * 20000 + "1" + ")" * 20000
    d = kernel_dir(tmp_path, {"deep.cu": PLAIN, "deep.yaml": sidecar(f"metrics:\n  deep: '{deep}'\n"),
                              "good.cu": PLAIN, "good.yaml": sidecar("metrics:\n  GB: n / seconds\n")})
    start = time.process_time()
    engine = gpuk.Engine(kernels=[d])
    assert time.process_time() - start < 5
    problems = [p for p in engine.problems() if "deep.yaml" in p]
    assert len(problems) == 1 and "nested too deeply (more than 64 levels" in problems[0]
    assert gpuk.Kernel(str(d / "kernel" / "good.cu")).name == "good"
    with pytest.raises(gpuk.ConfigError, match="nested too deeply"):
        gpuk.Kernel(str(d / "kernel" / "deep.cu"))


def test_8000_parameters_are_refused_in_well_under_a_second(tmp_path):
    params = "params:\n" + "".join(f"  p{i}: {{default: 1, values: [1, 2, 3, 4]}}\n" for i in range(8000))
    d = kernel_dir(tmp_path, {"k.cu": PLAIN, "k.yaml": sidecar(params)})
    start = time.process_time()
    engine = gpuk.Engine(kernels=[d])
    assert time.process_time() - start < 2
    assert any("params: 8000 of them; a kernel file or a declaration has at most 64" in p for p in engine.problems())


def test_declare_takes_at_most_64_parameters(repo):
    path = repo / "tests" / "declared" / "kernels" / "kernel" / "axpy.cu"
    many = copy.deepcopy(AXPY)
    many["params"] = {f"p{i}": {"default": 1, "values": [1, 2]} for i in range(65)}
    with pytest.raises(gpuk.ConfigError, match="params: 65 of them; a kernel file or a declaration has at most 64"):
        gpuk.Kernel(path, declare=many)


@pytest.mark.parametrize("value", ["1e300", "1e39", "nan", "1e999", "-inf"])
def test_a_float32_scalar_is_finite_unless_the_declaration_says_not(repo, value):
    path = repo / "tests" / "declared" / "kernels" / "kernel" / "axpy.cu"
    d = copy.deepcopy(AXPY)
    d["args"][2] = {"name": "a", "scalar": "float32", "value": value}
    with pytest.raises(gpuk.ConfigError, match="is not a finite float32.*finite: false"):
        gpuk.Kernel(path, declare=d)
    d["args"][2]["finite"] = False
    assert gpuk.Kernel(path, declare=d).name == "axpy"


def test_expected_floats_are_not_cast_to_an_integer_outputs_dtype():
    from gpuk._kernel import _compare
    import numpy as np
    got = np.array([2, 3, -1], np.int32)
    assert _compare("out", got, np.array([2.0, 3.0, -1.0]), 0, 0) is None
    assert _compare("out", got, [2, 3, -1], 0, 0) is None
    problem = _compare("out", got, np.array([2.7, 3.0, -1.0]), 0, 0)
    assert problem is not None and problem.startswith("out: 1 ")
    assert _compare("out", got, np.array([2.0, np.nan, -1.0]), 0, 0) is not None


@pytest.mark.parametrize("call, words", [
    (lambda c: gpuk.run(c, repeats=-3), "repeats=-3: an integer from 1 to 1000000"),
    (lambda c: gpuk.run(c, repeats=1000001), "repeats=1000001: an integer from 1 to 1000000"),
    (lambda c: gpuk.run(c, repeats=2.5), "repeats=2.5: an integer"),
    (lambda c: gpuk.run(c, device=-1), "device=-1: an integer from 0 to 1023"),
    (lambda c: gpuk.tune(c, seed=-1), "seed=-1: an integer from 0 to 18446744073709551615"),
    (lambda c: gpuk.tune(c, budget=0), "budget=0: an integer from 1"),
    (lambda c: gpuk.tune(c, threads=True), "threads=True: an integer"),
])
def test_python_numbers_are_told_in_the_keywords_words_not_the_clis_flags(repo, call, words):
    with pytest.raises(gpuk.ConfigError, match=words.replace(".", r"\.")) as e:
        call(repo / "configs" / "argmax.yaml")
    assert "--" not in str(e.value)


def test_a_kernels_sizes_are_planned_before_the_gpu(tmp_path):
    # Without a GPU the caller hears what is wrong with the sizes, not "no GPU" (with one, the same).
    later = sidecar("").replace("block: 256}", "block: 256, when: n > 4096}")
    d = kernel_dir(tmp_path, {"k.cu": PLAIN, "k.yaml": sidecar(""), "later.cu": PLAIN, "later.yaml": later})
    k = gpuk.Kernel(str(d / "kernel" / "k.cu"))
    with pytest.raises(gpuk.ConfigError, match=r"k\.yaml:7:5: value of n 'n' of k is 2147483648, outside int32's range"):
        k.prepare(n=2**31)
    with pytest.raises(gpuk.ConfigError, match=r"no launch of later runs for n = 100 \(every launch's 'when' is 0\)"):
        gpuk.Kernel(str(d / "kernel" / "later.cu")).prepare(n=100)
    with pytest.raises(gpuk.ConfigError, match=r"value of n 'n' of k is 2147483648"):
        gpuk.Engine(kernels=[d]).prepare("kernel", "k", sizes={"n": 2**31})
