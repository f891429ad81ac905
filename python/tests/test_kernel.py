"""gpuk.Kernel without a GPU: a declared kernel (docs/declared.md) from a config, a name, a kernel
file and a declaration given from Python; the named sizes taken from the arrays' shapes or from
keywords; every wrong call refused with its reason before the GPU is opened; the comparison that
Kernel.verify makes. The GPU side is test_kernel_gpu.py."""
import numpy as np
import pytest

import gpuk
from gpuk import _gpuk
from gpuk._kernel import _compare, axes_of, infer_sizes
from producers import CaiArray, DLPackArray

FAKE = 0x7F0000000000  # never touched: every call here stops before the GPU

AXPY = {
    "sizes": ["n"],
    "params_as": "defines",
    "params": {"block_size_x": {"default": 256, "values": [64, 128, 256]}},
    "args": [{"name": "y", "array": "float32", "length": "n", "role": "inout"},
             {"name": "x", "array": "float32", "length": "n", "role": "in"},
             {"name": "a", "scalar": "float32", "value": 2.0},
             {"name": "n", "scalar": "int32", "value": "n"}],
    "launch": [{"entry": "axpy", "grid": "ceil_div(n, block_size_x)", "block": "block_size_x"}],
}


def test_a_config_gives_the_kernel_its_sizes_and_its_variant(repo):
    k = gpuk.Kernel(repo / "configs" / "kernel_stencil2d.yaml")
    assert k.name == "stencil2d"
    assert k.sizes == ["nx", "ny"]
    assert [(a["name"], a["dtype"], a["role"], a["length"]) for a in k.arrays] == [
        ("out", "float32", "out", "nx * ny"), ("in", "float32", "in", "nx * ny")]
    assert k.pick == "named"
    assert k.params == {"block_size_x": 64, "block_size_y": 4, "tile_size_y": 16}
    assert "stencil2d" in repr(k)


def test_a_name_runs_the_tuning_databases_pick_unless_params_or_variant_say_otherwise():
    assert gpuk.Kernel("stencil2d").pick == "lookup"
    assert gpuk.Kernel("stencil2d", variant="auto").pick == "lookup"
    assert gpuk.Kernel("stencil2d", variant="default").pick == "defaults"
    k = gpuk.Kernel("stencil2d", params={"block_size_x": 64})
    assert (k.pick, k.params) == ("named", {"block_size_x": 64})


def test_a_kernel_file_with_its_declaration_beside_it(repo):
    k = gpuk.Kernel(str(repo / "tests" / "declared" / "kernels" / "kernel" / "scale2d.cu"))
    assert k.name == "scale2d" and k.sizes == ["nx", "ny"]
    assert k.declaration["params_as"] == "defines"
    assert k.declaration["scalars"][-1] == {"name": "alpha", "dtype": "float32", "value": 0.5}


def test_a_plain_kernel_file_declared_from_python(repo):
    path = repo / "tests" / "declared" / "kernels" / "kernel" / "axpy.cu"
    with pytest.raises(gpuk.ConfigError, match=r"plain CUDA.*from Python: gpuk.Kernel\(.*declare="):
        gpuk.Kernel(path)
    k = gpuk.Kernel(path, declare=AXPY)
    assert [(a["name"], a["role"]) for a in k.arrays] == [("y", "inout"), ("x", "in")]
    assert k.sizes_for(np.zeros(10, np.float32), np.zeros(10, np.float32)) == {"n": 10}


def test_what_is_refused_when_the_kernel_is_made(repo):
    with pytest.raises(gpuk.ConfigError, match="no kernel|no_such"):
        gpuk.Kernel("no_such_kernel")
    with pytest.raises(gpuk.ConfigError, match="variant="):
        gpuk.Kernel("stencil2d", variant="fastest")
    with pytest.raises(gpuk.ConfigError, match="not both"):
        gpuk.Kernel("stencil2d", variant="auto", params={"block_size_x": 64})
    with pytest.raises(gpuk.ConfigError, match="no such kernel file"):
        gpuk.Kernel("kernels/missing.cu")
    with pytest.raises(gpuk.ConfigError, match="not of a declared kernel"):
        gpuk.Kernel(repo / "configs" / "argmax.yaml")
    with pytest.raises(gpuk.ConfigError, match="declare="):
        gpuk.Kernel("stencil2d", declare=3)


def test_sizes_from_a_2d_arrays_shape_x_the_last_axis():
    k = gpuk.Kernel("stencil2d")
    grid = np.zeros((30, 40), np.float32)  # ny rows of nx
    assert k.sizes_for(np.zeros_like(grid), grid) == {"nx": 40, "ny": 30}


def test_sizes_from_a_products_order_when_the_names_are_not_xyz():
    k = gpuk.Kernel("matmul")
    a, b, c = np.zeros((3, 5), np.float32), np.zeros((5, 7), np.float32), np.zeros((3, 7), np.float32)
    assert k.sizes_for(c, a, b) == {"m": 3, "n": 7, "k": 5}


def test_a_length_of_one_size_is_the_element_count_of_any_shape():
    k = gpuk.Kernel("histogram")
    assert k.sizes_for(np.zeros(64, np.uint32), np.zeros((10, 10), np.uint32)) == {"n": 100, "bins": 64}


def test_keywords_give_what_the_shapes_cannot():
    k = gpuk.Kernel("stencil2d")
    flat = np.zeros(1200, np.float32)
    with pytest.raises(gpuk.ConfigError, match=r"shapes do not say nx, ny .*pass nx=, ny="):
        k.sizes_for(flat, flat)
    assert k.sizes_for(flat, flat, nx=40, ny=30) == {"nx": 40, "ny": 30}
    # A keyword wins over a shape; the length then says whether they agree.
    grid = np.zeros((30, 40), np.float32)
    with pytest.raises(gpuk.ConfigError, match=r"out has 1200 elements .* nx=41 \(given\).* takes 1230 \(nx \* ny\)"):
        k.sizes_for(grid, grid, nx=41)


def test_every_wrong_call_is_told_before_the_gpu():
    k = gpuk.Kernel("stencil2d")
    grid = np.zeros((30, 40), np.float32)
    with pytest.raises(TypeError, match=r"takes 2 arrays, in the declaration's order \(out, in\); got 1"):
        k(grid)
    with pytest.raises(gpuk.ConfigError, match="in is float64; the kernel declares float32"):
        k(grid, grid.astype(np.float64))
    with pytest.raises(gpuk.ConfigError, match="not C-contiguous"):
        k(grid, np.zeros((30, 80), np.float32)[:, ::2])
    with pytest.raises(gpuk.ConfigError, match="has no size 'nz'"):
        k(grid, grid, nz=2)
    with pytest.raises(gpuk.ConfigError, match="at least 1"):
        k(grid.reshape(-1), grid.reshape(-1), nx=0, ny=30)
    with pytest.raises(gpuk.ConfigError, match="read-only"):
        k(CaiArray(FAKE, np.float32, (30, 40), readonly=True), CaiArray(FAKE, np.float32, (30, 40)))
    with pytest.raises(gpuk.ConfigError, match="disagree|says"):
        k(np.zeros((30, 40), np.float32), np.zeros((31, 40), np.float32))


def test_two_arrays_that_disagree_on_a_size_are_named():
    decl = gpuk.Kernel("stencil2d").declaration
    with pytest.raises(gpuk.ConfigError, match=r"in's shape \(31, 40\) says ny = 31, out's says 30"):
        infer_sizes(decl, [(30, 40), (31, 40)])


def test_axes_of():
    assert axes_of(["nx", "ny"]) == ["ny", "nx"]
    assert axes_of(["nx", "ny", "nz"]) == ["nz", "ny", "nx"]
    assert axes_of(["m", "k"]) == ["m", "k"]
    assert axes_of(["n"]) == ["n"]


def test_a_call_on_device_arrays_needs_the_gpu_only_after_its_checks():
    if _gpuk_has_gpu():
        pytest.skip("a GPU is here: test_kernel_gpu.py runs the call")
    k = gpuk.Kernel("stencil2d")
    with pytest.raises(gpuk.NoDeviceError):
        k(CaiArray(FAKE, np.float32, (30, 40)), DLPackArray(FAKE, np.float32, (30, 40)))
    assert len(k._dispatch) == 0  # nothing registered for the one-call path


def test_the_one_call_path_hands_back_what_it_has_not_prepared():
    d = _gpuk.ShapeDispatch(0)
    assert d.call((CaiArray(FAKE, np.float32, (3,)),), {}, 0) is NotImplemented
    assert d.call((np.zeros(3, np.float32),), {}, 0) is NotImplemented
    assert len(d) == 0


def test_the_comparison_of_verify():
    got = np.array([1.0, 2.0, np.nan, np.inf, 5.0], np.float32)
    assert _compare("out", got, np.array([1.0, 2.0 + 1e-7, np.nan, np.inf, 5.0]), 1e-6, 1e-5) is None
    message = _compare("out", got, np.array([1.0, 2.5, np.nan, np.inf, 4.0]), 1e-6, 1e-5)
    assert message.startswith("out: 2 of 5 differ (atol 1e-06 + rtol 1e-05 * |expected|); first at index 1 "
                              "(got 2.0, expected 2.5); max abs error 1, max rel error 0.25")
    assert "first at index 2" in _compare("out", got, np.array([1.0, 2.0, 3.0, np.inf, 5.0]), 1e-6, 1e-5)
    assert "first at index 3" in _compare("out", got, np.array([1.0, 2.0, np.nan, -np.inf, 5.0]), 1e-6, 1e-5)
    ints = np.array([1, 2, 3], np.uint32)
    assert _compare("hist", ints, [1, 2, 3], 1e-6, 1e-5) is None
    assert _compare("hist", ints, [1, 2, 4], 1e-6, 1e-5).startswith("hist: 1 of 3 differ (exact); first at index 2")
    assert _compare("hist", ints, None, 1e-6, 1e-5) is None  # not compared
    assert "the reference has 2 elements" in _compare("hist", ints, [1, 2], 1e-6, 1e-5)


def _gpuk_has_gpu():
    try:
        gpuk.device_info()
        return True
    except gpuk.NoDeviceError:
        return False
