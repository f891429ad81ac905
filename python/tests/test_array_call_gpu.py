"""The array path's one call into C++ on the GPU: a prepared Operation and the family functions
on __cuda_array_interface__ and DLPack arrays (gpuk's DeviceArray and the tests' producers), with
out= and without, each answer against NumPy; the family function finds its Operation in C++
(_gpuk.Dispatch) once one was prepared. Skipped, with the reason, without a GPU."""
import numpy as np
import pytest

import gpuk
from gpuk import _gpuk
from producers import CaiArray, DeviceCopy, DLPackArray

RNG = np.random.default_rng(37)


class DLPackOnly:
    """A DeviceArray seen through DLPack alone."""

    def __init__(self, a):
        self.a = a

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__(stream=stream)


def device_array(engine, host, stream=0):
    copy = DeviceCopy(host, engine.device)
    return gpuk.DeviceArray(copy.memory, host.dtype.name, host.shape, stream), copy


def test_a_prepared_argmax_on_either_protocol_with_and_without_out(gpu):
    e = gpu
    n = 100_000
    host = RNG.uniform(-1, 1, n).astype(np.float32)
    x, keep = device_array(e, host)
    op = e.prepare("reduce", "argmax", "float32", n)
    best_memory = _gpuk.DeviceMemory(e.device, 16)
    best = gpuk.DeviceArray(best_memory, "int64", (2,))
    want = int(np.argmax(host))
    for arg in (x, DLPackOnly(x), keep.cai(), keep.dlpack()):
        best_memory.upload_from(np.full(2, -7, np.int64).ctypes.data, 16, 0)
        assert op(arg, out=best, stream=0) is best
        assert best.numpy()[1] == want, type(arg)
        answer = op(arg)  # read back, waited for
        assert answer.index == want and answer.value == host[want], type(arg)
    s = 0
    assert op(x, out=(best,), stream=s) is best


def test_the_family_function_finds_its_operation_in_one_call(gpu):
    e = gpu
    n = 5000
    host = RNG.integers(-1000, 1000, n).astype(np.int64)
    x, _ = device_array(e, host)
    assert gpuk.reduce.argmin(x, engine=e).index == int(np.argmin(host))  # prepares, registers
    dispatch = e._dispatch[("reduce", "argmin", ())]
    assert len(dispatch) >= 1
    out = gpuk.DeviceArray(_gpuk.DeviceMemory(e.device, 16), "int64", (2,))
    for _ in range(3):
        assert gpuk.reduce.argmin(x, out=out, engine=e) is out
        assert out.numpy()[1] == int(np.argmin(host))
    assert gpuk.reduce.max(x, engine=e) == host.max()  # a read answer's field
    assert gpuk.reduce.sum(x, engine=e) == host.sum()
    before = len(e._operations)
    gpuk.reduce.argmin(x, engine=e)
    assert len(e._operations) == before  # found, not prepared again


def test_sort_pairs_through_one_call_keeps_the_operations_array_order(gpu):
    e = gpu
    n = 3000
    keys = RNG.integers(0, 1 << 30, n).astype(np.uint32)
    values = np.arange(n, dtype=np.uint32)
    d_keys, _k = device_array(e, keys)
    d_values, _v = device_array(e, values)
    keys_out, _ko = device_array(e, np.zeros(n, np.uint32))
    values_out, _vo = device_array(e, np.zeros(n, np.uint32))
    op = e.prepare("sort", "sort_pairs", "uint32", n, values="uint32")
    assert op(d_keys, d_values, out=(keys_out, values_out)) == (keys_out, values_out)
    order = np.argsort(keys, kind="stable")
    assert np.array_equal(keys_out.numpy(), keys[order]) and np.array_equal(values_out.numpy(), values[order])


def test_what_the_one_call_does_not_take_still_gets_the_general_paths_answer_or_words(gpu):
    e = gpu
    n = 1000
    host = RNG.uniform(-1, 1, n).astype(np.float32)
    x, keep = device_array(e, host)
    op = e.prepare("reduce", "argmax", "float32", n)
    assert op(host).index == int(np.argmax(host))  # NumPy: uploaded by the general path
    small = gpuk.DeviceArray(_gpuk.DeviceMemory(e.device, 8), "int64", (1,))
    with pytest.raises(gpuk.ConfigError, match="needs 16 bytes"):
        op(x, out=small)
    with pytest.raises(gpuk.ConfigError, match="prepared for float32"):
        op(DeviceCopy(host.astype(np.float64), e.device).cai())
    with pytest.raises(gpuk.ConfigError, match="read-only"):
        op(x, out=CaiArray(keep.memory.ptr, np.int64, (2,), readonly=True))
    with pytest.raises(gpuk.ConfigError, match="not CUDA device memory"):
        op(CaiArray(host.ctypes.data, np.float32, (n,)))
    with pytest.raises(gpuk.ConfigError, match="on GPU 5"):
        op(DLPackArray(keep.memory.ptr, np.float32, (n,), device=(2, 5)))
