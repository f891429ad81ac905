"""gpuk.Kernel on the GPU: the shipped declared kernels (stencil2d, matmul, histogram) and the
tests' (scale2d beside its YAML, axpy declared from Python) on NumPy arrays and on device arrays
through __cuda_array_interface__ and DLPack, each answer against NumPy; the one-call path taken
once the shapes were prepared; Kernel.verify against a function and against arrays; the
Operation's pointer path. Skipped, with the reason, without a GPU."""
import numpy as np
import pytest

import gpuk
from producers import DeviceCopy

RNG = np.random.default_rng(34)


def stencil(grid, c0=0.5, c1=0.125):
    """stencil2d_naive's answer: out = c0 * in + c1 * (the four neighbours), 0 outside."""
    p = np.pad(grid, 1)
    return (c0 * grid + c1 * (p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1])).astype(np.float32)


def test_a_stencil_from_its_config_on_numpy_arrays(gpu, repo):
    k = gpuk.Kernel(repo / "configs" / "kernel_stencil2d.yaml")
    grid = RNG.uniform(-1, 1, (67, 131)).astype(np.float32)  # neither side a multiple of a block
    out = np.zeros_like(grid)
    assert k(out, grid) is out
    np.testing.assert_allclose(out, stencil(grid), rtol=1e-5, atol=1e-6)


def test_variant_auto_and_the_defaults_give_the_same_answer(gpu):
    grid = RNG.uniform(-1, 1, (40, 50)).astype(np.float32)
    for variant in ("auto", "default"):
        out = np.zeros_like(grid)
        gpuk.Kernel("stencil2d", variant=variant)(out, grid)
        np.testing.assert_allclose(out, stencil(grid), rtol=1e-5, atol=1e-6)


def test_device_arrays_through_either_protocol_then_the_one_call_path(gpu):
    e = gpu
    k = gpuk.Kernel("stencil2d", params={"block_size_x": 32, "block_size_y": 4, "tile_size_y": 2})
    grid = RNG.uniform(-1, 1, (33, 70)).astype(np.float32)
    want = stencil(grid)
    x = DeviceCopy(grid, e.device)
    for protocol in ("cai", "dlpack"):
        out = DeviceCopy.empty(np.float32, grid.shape, e.device)
        o, i = (out.cai(), x.cai()) if protocol == "cai" else (out.dlpack(), x.dlpack())
        for _ in range(3):  # the first call prepares and registers the shapes; the others take one call into C++
            assert k(o, i) is o
            gpuk._gpuk.synchronize(e.device, 0)
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    # One entry: the shapes, stream and thread are the same whichever protocol speaks; one Operation.
    assert len(k._dispatch) == 1 and len(k._operations) == 1
    # gpuk's own DeviceArray (both protocols; __cuda_array_interface__ is read first).
    mem_in, mem_out = gpuk._gpuk.DeviceMemory(e.device, grid.nbytes), gpuk._gpuk.DeviceMemory(e.device, grid.nbytes)
    mem_in.upload_from(grid.ctypes.data, grid.nbytes, 0)
    a_in = gpuk.DeviceArray(mem_in, "float32", grid.shape)
    a_out = gpuk.DeviceArray(mem_out, "float32", grid.shape)
    k(a_out, a_in)
    np.testing.assert_allclose(a_out.numpy(), want, rtol=1e-5, atol=1e-6)


def test_a_matmul_sized_by_its_arrays(gpu):
    a = RNG.uniform(-1, 1, (48, 80)).astype(np.float32)
    b = RNG.uniform(-1, 1, (80, 56)).astype(np.float32)
    c = np.zeros((48, 56), np.float32)
    gpuk.Kernel("matmul")(c, a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_a_histogram_exactly(gpu):
    values = RNG.integers(0, 1 << 20, 100_000, dtype=np.uint32)
    hist = np.full(300, 7, np.uint32)
    gpuk.Kernel("histogram")(hist, values)
    np.testing.assert_array_equal(hist, np.bincount(values % 300, minlength=300).astype(np.uint32))


def test_a_kernel_file_and_a_declaration_from_python(gpu, repo):
    kernels = repo / "tests" / "declared" / "kernels" / "kernel"
    grid = RNG.uniform(-1, 1, (20, 30)).astype(np.float32)
    out = np.zeros_like(grid)
    gpuk.Kernel(kernels / "scale2d.cu")(out, grid)
    np.testing.assert_array_equal(out, 0.5 * grid)
    from test_kernel import AXPY
    y = RNG.uniform(-1, 1, 1000).astype(np.float32)
    x = RNG.uniform(-1, 1, 1000).astype(np.float32)
    want = (2 * x + y).astype(np.float32)
    assert gpuk.Kernel(kernels / "axpy.cu", declare=AXPY)(y, x) is y  # in-out: written back
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_verify_against_a_function_and_against_arrays(gpu, repo):
    k = gpuk.Kernel("stencil2d")
    grid = RNG.uniform(-1, 1, (45, 61)).astype(np.float32)
    out = np.zeros_like(grid)
    got = k.verify(out, grid, reference=lambda g: stencil(g))
    np.testing.assert_allclose(got, stencil(grid), rtol=1e-5, atol=1e-6)
    assert not out.any()  # the caller's arrays are not written
    k.verify(out, grid, reference={"out": stencil(grid)})
    wrong = stencil(grid)
    wrong[3, 5] += 1
    with pytest.raises(gpuk.WrongAnswerError, match=r"out: 1 of 2745 differ .*first at index 188 "):
        k.verify(out, grid, reference=wrong)
    # Device arrays: read back, run on copies.
    x = DeviceCopy(grid, gpu.device)
    y = DeviceCopy.empty(np.float32, grid.shape, gpu.device)
    k.verify(y.cai(), x.dlpack(), reference=stencil)


def test_the_operation_of_a_kernel_on_pointers(gpu):
    e = gpu
    k = gpuk.Kernel("stencil2d", variant="default")
    grid = RNG.uniform(-1, 1, (30, 40)).astype(np.float32)
    op = k.prepare(nx=40, ny=30)
    assert op.max_n == 1200 and [a["name"] for a in op.arrays] == ["out", "in"]
    x = DeviceCopy(grid, e.device)
    y = DeviceCopy.empty(np.float32, grid.shape, e.device)
    op.launch([y.memory.ptr, x.memory.ptr], op.max_n, 0)
    np.testing.assert_allclose(y.numpy(), stencil(grid), rtol=1e-5, atol=1e-6)
