"""Every argument is checked before the GPU is opened: on a machine without one, a wrong call
says what is wrong with the call (not "no NVIDIA driver"); on a GPU it says the same. One row per
kind of mistake (issue 36's Python items, and the messages' wording)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuk
from conftest import REPO, no_gpu_reason

X = np.arange(1000, dtype=np.float32)
I32 = np.arange(1000, dtype=np.int32)
BIG_ENDIAN = np.arange(1000, dtype=">f4")

class NoShape:
    __cuda_array_interface__ = {"typestr": "<f4", "data": (0x7F0000000000, False), "version": 3}


class DataNotAPair:
    __cuda_array_interface__ = {"typestr": "<f4", "shape": (10,), "data": 0x7F0000000000, "version": 3}


CASES = [
    ("an interface without its shape", lambda: gpuk.reduce.argmax(NoShape()), gpuk.ConfigError,
     "__cuda_array_interface__ is malformed (KeyError: 'shape')"),
    ("an interface whose data is not a pair", lambda: gpuk.reduce.argmax(DataNotAPair()), gpuk.ConfigError,
     "__cuda_array_interface__ is malformed (TypeError"),
    # (what, call, exception, words)
    ("a big-endian input", lambda: gpuk.reduce.argmax(BIG_ENDIAN), gpuk.ConfigError, "big-endian ('>f4')"),
    ("a big-endian sort", lambda: gpuk.sort.keys(BIG_ENDIAN), gpuk.ConfigError, "newbyteorder('<')"),
    ("a big-endian search", lambda: gpuk.search.find(BIG_ENDIAN, 3.0), gpuk.ConfigError, "big-endian"),
    ("a big-endian out=", lambda: gpuk.sort.keys(X, out=np.empty(1000, ">f4")), gpuk.ConfigError, "big-endian"),
    ("bounds with needles of another dtype", lambda: gpuk.search.lower_bound(X, I32), gpuk.ConfigError,
     "the needles are int32, the haystack float32"),
    ("bounds with a needle count", lambda: gpuk.search.upper_bound(X, X, needle_count=3), TypeError,
     "takes no needle_count= option"),
    ("bounds with sorted= not a bool", lambda: gpuk.search.lower_bound(X, X, sorted="yes"), gpuk.ConfigError,
     "sorted='yes': True or False"),
    ("bounds' out= of the wrong size", lambda: gpuk.search.lower_bound(X, X[:5], out=np.empty(4, np.int64)),
     gpuk.ConfigError, "out must be int64 with 5 elements"),
    ("a search without its value", lambda: gpuk.search.find(X), TypeError, "takes value= (the value, float32)"),
    ("a value where none is taken", lambda: gpuk.reduce.argmax(X, value=3), TypeError, "takes no value"),
    ("an array too many", lambda: gpuk.reduce.argmax(X, X), TypeError, "takes 1 input array(s) (input), not 2"),
    ("out= of the wrong count", lambda: gpuk.sort.keys(X, out=(X.copy(), X.copy())), TypeError,
     "out= takes 1 array(s)"),
    ("a topk k above the row", lambda: gpuk.sort.topk(X.reshape(10, 100), 101), gpuk.ConfigError,
     "k (101) must be at most the row's length, 100"),
    ("a topk k of 0", lambda: gpuk.sort.topk(X, 0), gpuk.ConfigError, "a count of at least 1"),
    ("a topk out= of the wrong size", lambda: gpuk.sort.topk(X, 4, out=(np.empty(5, np.float32), np.empty(4, np.int64))),
     gpuk.ConfigError, "values_out has 5 elements; it takes 4"),
    ("out= of another dtype", lambda: gpuk.sort.keys(X, out=np.empty(1000, np.float64)), gpuk.ConfigError,
     "keys_out must be float32, not float64"),
    ("out= of another size", lambda: gpuk.sort.keys(X, out=np.empty(999, np.float32)), gpuk.ConfigError,
     "has 999 elements, the input 1000"),
    ("out= too small for the answer", lambda: gpuk.reduce.argmax(X, out=np.empty(1, np.int64)), gpuk.ConfigError,
     "needs 16 bytes; the array has 8"),
    ("a value not exact in the dtype", lambda: gpuk.search.find(I32, 2.5), gpuk.ConfigError, "2.5 is not exact in int32"),
    ("find_if without its comparison", lambda: gpuk.search.find_if(X), TypeError, "needs a comparison"),
    ("find_if's comparison twice", lambda: gpuk.search.find_if(X, "<", 1.0, compare="lt"), TypeError,
     "multiple values for argument 'compare'"),
    ("find_if with an unknown comparison", lambda: gpuk.search.find_if(X, "=<", 1.0), gpuk.ConfigError,
     "compare must be one of eq, ne, lt, le, gt, ge, range, closed_range, not '=<'"),
    ("find_if without its value", lambda: gpuk.search.find_if(X, "<"), TypeError, "takes value="),
    ("a range with one value", lambda: gpuk.search.find_if(X, "range", 1.0), TypeError,
     "a range takes two values, not 1.0"),
    ("a range with three values", lambda: gpuk.search.find_if(X, "[]", (1, 2, 3)), TypeError,
     "a range takes two values"),
    ("a comparison with two values", lambda: gpuk.search.find_if(X, "<", (0.0, 1.0)), TypeError,
     "one value, not (0.0, 1.0)"),
    ("a range's hi not exact in the dtype", lambda: gpuk.search.find_if(I32, "range", (0, 2.5)), gpuk.ConfigError,
     "(hi): 2.5 is not exact in int32"),
    ("a range's lo out of range", lambda: gpuk.search.find_if(I32, "closed_range", (-2**31 - 1, 0)),
     gpuk.ConfigError, "(lo): -2147483649 is out of range for int32"),
    ("compare on find", lambda: gpuk.search.find(X, 1.0, compare="lt"), gpuk.ConfigError,
     "compare: lt is find_if's option"),
    ("values of another size", lambda: gpuk.sort.pairs(X, np.arange(999, dtype=np.uint32)), gpuk.ConfigError,
     "has 999 elements, the input 1000"),
    ("an unknown option", lambda: gpuk.sort.keys(X, ordr="descending"), gpuk.ConfigError, "ordr"),
    ("an option's bad value", lambda: gpuk.reduce.argmax(X, abs="maybe"), gpuk.ConfigError, "abs"),
    ("n = 1.5 to prepare", lambda: gpuk.Engine().prepare("reduce", "argmax", "float32", 1.5), gpuk.ConfigError,
     "n=1.5: an integer"),
    ("n as a string", lambda: gpuk.Engine().prepare("reduce", "argmax", "float32", "100"), gpuk.ConfigError,
     "n='100': an integer"),
    ("a parameter not an integer", lambda: gpuk.Engine().prepare("reduce", "argmax", "float32", 100,
                                                                 params={"BLOCK": "x"}), gpuk.ConfigError,
     "params['BLOCK']='x': an integer"),
    ("2^31 segments' offsets", lambda: gpuk.reduce.segmented_argmax(
        X, np.lib.stride_tricks.as_strided(np.zeros(1, np.int64), ((1 << 31) + 1,), (0,))), gpuk.ConfigError,
     "segments must be between 1 and 2147483647"),
    ("a directory list given as a number", lambda: gpuk.Engine(kernels=7), gpuk.ConfigError,
     "kernels= takes a path or a list of paths, not int"),
]


@pytest.mark.parametrize("what,call,exception,words", CASES, ids=[c[0] for c in CASES])
def test_a_wrong_call_is_told_so_before_the_gpu(what, call, exception, words):
    with pytest.raises(exception) as e:
        call()
    assert words in str(e.value), (what, str(e.value))
    assert not isinstance(e.value, gpuk.NoDeviceError), what


def test_a_directory_given_as_one_string_is_one_directory(tmp_path):
    kernels = tmp_path / "mine"
    kernels.mkdir()
    engine = gpuk.Engine(kernels=str(kernels))  # not the directories "/", "t", "m", "p", ...
    assert str(kernels) in engine._native.kernel_dirs()
    assert str(kernels) in gpuk.Engine(kernels=kernels)._native.kernel_dirs()


def test_a_path_that_looks_like_an_option_is_a_path(tmp_path):
    # gpuk.check('--help') checks a file named --help (there is none), it does not print the CLI's help.
    with pytest.raises(gpuk.ConfigError) as e:
        gpuk.check("--help")
    assert "--help" in str(e.value)
    os.chdir(tmp_path)
    (tmp_path / "-x.yaml").write_text("family: reduce\noperation: argmax\nsize: 1000\nrepeets: 5\n")
    with pytest.raises(gpuk.ConfigError, match="repeats"):
        gpuk.check("-x.yaml")
    with pytest.raises(gpuk.ConfigError, match="kernels= takes paths"):
        gpuk.check("-x.yaml", kernels=[1])


@pytest.mark.skipif(no_gpu_reason() is None, reason="a GPU is here: the no-GPU error cannot happen")
def test_without_a_gpu_the_error_speaks_of_the_call_not_a_command():
    with pytest.raises(gpuk.NoDeviceError) as e:
        gpuk.reduce.argmax(X)
    assert "NVIDIA" in str(e.value) and "this command" not in str(e.value)
    engine = gpuk.Engine()  # as the C++ Engine: the GPU is opened when something needs it
    with pytest.raises(gpuk.NoDeviceError):
        engine.device_info()
    with pytest.raises(gpuk.NoDeviceError):
        engine.prepare("reduce", "argmax", "float32", 1000)


@pytest.mark.skipif(no_gpu_reason() is None, reason="a GPU is here: the examples run instead of skipping")
def test_without_a_gpu_the_python_examples_skip_with_one_line_and_77(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(gpuk.__file__))),
                                         *filter(None, [env.get("PYTHONPATH")])])
    examples = sorted((REPO / "examples" / "python").glob("*.py"))
    assert examples
    for example in examples:
        out = subprocess.run([sys.executable, str(example)], cwd=tmp_path, env=env, capture_output=True, text=True)
        lines = out.stdout.strip().splitlines()  # (a framework's own warnings on stderr are its own)
        assert out.returncode == 77 and len(lines) == 1 and "skipped" in lines[0], (example.name, out)
        assert "Traceback" not in out.stderr, (example.name, out.stderr)
