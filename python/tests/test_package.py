"""The package without a GPU: import, listing, check, config errors, the no-GPU error."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpuk
from conftest import no_gpu_reason


def test_imports_with_version_and_the_errors_as_exception_classes():
    assert gpuk.__version__
    assert issubclass(gpuk.ConfigError, ValueError) and issubclass(gpuk.ConfigError, gpuk.Error)
    assert issubclass(gpuk.NoDeviceError, gpuk.DeviceError)
    assert issubclass(gpuk.Error, RuntimeError)


def test_every_loaded_family_is_a_namespace_with_its_plugins_operations():
    families = {f["name"]: f for f in gpuk.families()}
    assert {"reduce", "search", "sort"} <= set(families)
    for name, f in families.items():
        namespace = getattr(gpuk, name)
        assert namespace.operations == f["operations"]
        for op in f["operations"]:
            assert callable(getattr(namespace, op)), (name, op)
    assert set(families["reduce"]["operations"]) == {"max", "min", "sum", "argmax", "argmin", "argminmax"}
    assert gpuk.sort.keys is gpuk.sort.sort and gpuk.sort.pairs is gpuk.sort.sort_pairs
    assert "float32" in families["reduce"]["dtypes"]
    assert any(o["name"] == "abs" and o["kind"] == "boolean" for o in families["reduce"]["options"])


def test_kernels_lists_files_with_their_parameters():
    files = gpuk.kernels()
    onepass = next(f for f in files if f["family"] == "reduce" and f["name"] == "onepass")
    assert os.path.isfile(onepass["path"])
    block = next(p for p in onepass["params"] if p["name"] == "BLOCK")
    assert block["default"] in block["values"]
    assert "argmax" in onepass["operations"]


def test_check_compiles_a_config_and_a_kernel_file_without_a_gpu(repo):
    result = gpuk.check(repo / "configs" / "argmax.yaml")
    assert result["passed"] and result["results"][0]["ok"]
    assert "sm_" in result["results"][0]["detail"]


def test_check_names_file_line_and_column_of_a_broken_kernel_file(tmp_path):
    bad = tmp_path / "broken.cu"
    bad.write_text("/* gpuk\nfamily: reduce\noperations: [argmax]\nparams:\n  BLOCK: {default: 100, values: [128, 256]}\n"
                   "launch:\n  - entry: k\n    grid: 1\n    block: BLOCK\n*/\n"
                   "template <class Op, int BLOCK> __global__ void k() {}\n")
    with pytest.raises(gpuk.ConfigError) as e:
        gpuk.check(bad)
    assert str(bad) in str(e.value) and e.value.line == 5


def test_a_config_error_carries_file_line_and_column(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("family: reduce\noperation: argmax\nsize: 1000\nrepeets: 5\n")
    with pytest.raises(gpuk.ConfigError) as e:
        gpuk.run(config)
    assert e.value.file == str(config) and e.value.line == 4 and e.value.column == 1
    assert "did you mean 'repeats'" in str(e.value)


def test_prepare_refuses_a_bad_spec_in_the_clis_words_before_touching_the_gpu():
    engine = gpuk.Engine()
    with pytest.raises(gpuk.ConfigError, match="argmax"):
        engine.prepare("reduce", "argmx", "float32", 1000)
    with pytest.raises(gpuk.ConfigError, match="size must be at least 1"):
        engine.prepare("reduce", "argmax", "float32", 0)
    with pytest.raises(gpuk.ConfigError, match="float16"):
        engine.prepare("reduce", "argmax", "float16", 10)
    with pytest.raises(gpuk.ConfigError, match="unknown family"):
        engine.family("scan")


def test_engine_device_must_be_an_ordinal():
    with pytest.raises(gpuk.ConfigError):
        gpuk.Engine(device=-1)


@pytest.mark.skipif(no_gpu_reason() is None, reason="a GPU is here: the no-GPU error cannot happen")
def test_without_a_gpu_a_call_raises_one_clear_error():
    with pytest.raises(gpuk.NoDeviceError) as e:
        gpuk.reduce.argmax(np.arange(10, dtype=np.float32))
    assert "GPU" in str(e.value) or "driver" in str(e.value)
    with pytest.raises(gpuk.NoDeviceError):
        gpuk.run("configs/argmax.yaml") if os.path.exists("configs/argmax.yaml") else gpuk.device_info()


def test_the_package_imports_from_another_directory(tmp_path):
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", "import gpuk; print(gpuk.executable(), len(gpuk.kernels()))"],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) > 0


def test_decode_reads_a_result_layout():
    from gpuk._engine import decode
    raw = np.array([2.5], np.float32).tobytes() + b"\0" * 4 + np.array([7], np.int64).tobytes()
    r = decode("{float32 value; int64 index at byte 8}", raw)
    assert r.value == 2.5 and r.index == 7 and tuple(r) == (2.5, 7)
    assert decode("int64", np.array([-1], np.int64).tobytes()) == -1
