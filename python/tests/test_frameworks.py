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
