"""PyTorch, CuPy and JAX arrays through gpuk, each answer against the framework's own; skipped,
with the reason, where the framework or a GPU is missing."""
import numpy as np
import pytest

import gpuk


def _framework(name):
    module = pytest.importorskip(name, reason=f"{name} is not installed")
    return module


def test_torch(gpu):
    torch = _framework("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    x = torch.randn(250_000, device="cuda")
    best = gpuk.reduce.argmax(x)
    assert best.index == int(torch.argmax(x)) and best.value == float(x[best.index])
    assert gpuk.reduce.sum(x) == pytest.approx(float(x.double().sum()), rel=1e-6)
    y = gpuk.sort.keys(x, order="descending")
    assert isinstance(y, torch.Tensor) and y.device == x.device
    assert torch.equal(y, torch.sort(x, descending=True, stable=True).values)
    i = torch.randint(0, 1 << 30, (100_000,), device="cuda", dtype=torch.int32)
    assert gpuk.search.find(i, int(i[777])) == int(torch.nonzero(i == i[777])[0])
    stream = torch.cuda.Stream()
    out = torch.empty_like(x)
    with torch.cuda.stream(stream):
        gpuk.sort.keys(x, out=out, stream=stream)
    stream.synchronize()
    assert torch.equal(out, torch.sort(x).values)
    idx = gpuk.sort.argsort(x)
    assert torch.equal(idx.long(), torch.sort(x, stable=True).indices)
    with pytest.raises(gpuk.ConfigError, match="not C-contiguous"):
        gpuk.reduce.argmax(x.view(500, 500).t())
    with pytest.raises(gpuk.ConfigError, match="float16"):
        gpuk.reduce.argmax(x.half())


def test_cupy(gpu):
    cp = _framework("cupy")
    x = cp.random.random(250_000, dtype=cp.float64)
    assert gpuk.reduce.argmin(x).index == int(cp.argmin(x))
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        k = cp.random.randint(0, 1 << 30, 100_000, dtype=cp.int32)
        v = cp.arange(100_000, dtype=cp.uint32)
        keys, values = gpuk.sort.pairs(k, v, stream=stream)
    stream.synchronize()
    assert isinstance(keys, cp.ndarray)
    assert bool(cp.array_equal(keys, cp.sort(k))) and bool(cp.array_equal(k[values], keys))
    assert gpuk.search.count(k, int(k[5])) == int((k == k[5]).sum())
    with pytest.raises(gpuk.ConfigError, match="not C-contiguous"):
        gpuk.reduce.max(x[::2])


def test_jax(gpu):
    jax = _framework("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    x = jax.random.normal(jax.random.PRNGKey(0), (250_000,), dtype=jnp.float32)
    x.block_until_ready()
    assert gpuk.reduce.argmax(x).index == int(jnp.argmax(x))
    y = gpuk.sort.keys(x)  # JAX arrays are immutable: the result is gpuk's own device array
    np.testing.assert_array_equal(y.numpy(), np.sort(np.asarray(x)))
    assert gpuk.search.find(x, float(x[1234])) == int(np.flatnonzero(np.asarray(x) == np.asarray(x)[1234])[0])


def test_torch_segmented_and_per_channel(gpu):
    torch = _framework("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    x = torch.randn(100_000, device="cuda")
    offsets = torch.tensor([0, 10, 10, 60_000, 100_000], device="cuda")  # int64
    best = gpuk.reduce.segmented_argmax(x, offsets)
    assert isinstance(best.values, torch.Tensor) and best.values.dtype == torch.float32
    torch.cuda.synchronize()
    assert best.indices.tolist() == [int(torch.argmax(x[0:10])), -1, int(torch.argmax(x[10:60_000])),
                                     int(torch.argmax(x[60_000:]))]
    assert float(best.values[1]) == float(torch.finfo(torch.float32).min)
    sums = gpuk.reduce.segmented_sum(x, offsets)
    assert sums.dtype == torch.float64 and float(sums[3]) == pytest.approx(float(x[60_000:].double().sum()), rel=1e-9)
    with pytest.raises(gpuk.ConfigError, match="must be int64, not int32"):
        gpuk.reduce.segmented_max(x, offsets.int())
    image = torch.rand(48, 64, 17, device="cuda")
    best = gpuk.reduce.per_channel_argmax(image)
    torch.cuda.synchronize()
    assert torch.equal(best.indices, image.reshape(-1, 17).argmax(dim=0))
    keys = gpuk.sort.keys(torch.tensor([-0.0, 0.0, -0.0], device="cuda"), float_order="cub")
    assert torch.signbit(keys).tolist() == [True, False, True]  # CUB: equal, in input order


def test_torch_segmented_sort(gpu):
    torch = _framework("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    x = torch.randint(-20, 20, (70_001,), device="cuda", dtype=torch.int64)
    offsets = torch.tensor([0, 1, 1, 33, 40_000, 70_001], device="cuda")  # int64, covering every key
    values = torch.arange(70_001, device="cuda", dtype=torch.int32)
    keys, carried = gpuk.sort.segmented_sort(x, offsets, values=values, order="descending")
    assert isinstance(keys, torch.Tensor) and keys.dtype == torch.int64 and carried.dtype == torch.int32
    torch.cuda.synchronize()
    bounds = offsets.tolist()
    for b, e in zip(bounds[:-1], bounds[1:]):
        want = torch.sort(x[b:e], descending=True, stable=True)
        assert torch.equal(keys[b:e], want.values) and torch.equal(carried[b:e], values[b:e][want.indices])
    with pytest.raises(gpuk.ConfigError, match="must be int64, not int32"):
        gpuk.sort.segmented_sort(x, offsets.int())


def test_cupy_segmented_and_per_channel(gpu):
    cp = _framework("cupy")
    x = cp.random.random(50_000, dtype=cp.float64)
    offsets = cp.array([0, 25_000, 50_000], dtype=cp.int64)
    best = gpuk.reduce.segmented_argmin(x, offsets)
    assert isinstance(best.indices, cp.ndarray)
    cp.cuda.runtime.deviceSynchronize()
    assert best.indices.tolist() == [int(cp.argmin(x[:25_000])), int(cp.argmin(x[25_000:]))]
    image = cp.random.randint(-100, 100, (30, 40, 3), dtype=cp.int32)
    mx = gpuk.reduce.per_channel_max(image)
    cp.cuda.runtime.deviceSynchronize()
    assert mx.tolist() == image.reshape(-1, 3).max(axis=0).tolist()
