"""Array, stream and value checks, through producers the tests build: no GPU needed (the
pointers are never touched; every check comes before the GPU is opened)."""
import numpy as np
import pytest

import gpuk
from gpuk._arrays import resolve, scalar_bits, stream_handle
from producers import CaiArray, DLPackArray

FAKE_POINTER = 0x7F0000000000  # never dereferenced: the checks refuse the array first


def test_dlpack_on_another_gpu_is_refused_with_the_engines_device():
    x = DLPackArray(FAKE_POINTER, np.float32, (100,), device=(2, 3))
    with pytest.raises(gpuk.ConfigError, match=r"on GPU 3, the engine's is GPU 0"):
        gpuk.reduce.argmax(x)
    assert x.streams == []  # refused before the producer was asked for the tensor


def test_dlpack_on_a_device_gpuk_cannot_reach_is_refused():
    with pytest.raises(gpuk.ConfigError, match="ROCm"):
        gpuk.reduce.sum(DLPackArray(FAKE_POINTER, np.float32, (100,), device=(10, 0)))


def test_dlpack_not_c_contiguous_is_refused_and_the_capsule_released():
    before = DLPackArray.deleted
    x = DLPackArray(FAKE_POINTER, np.float32, (10, 10), strides=(1, 10))
    with pytest.raises(gpuk.ConfigError, match="not C-contiguous"):
        gpuk.reduce.argmax(x)
    assert x.streams == [1]  # the legacy default stream, in DLPack's words
    assert DLPackArray.deleted == before + 1


def test_dlpack_dtype_gpuk_lacks_is_refused():
    with pytest.raises(gpuk.ConfigError, match="float16 is not one of gpuk's dtypes"):
        gpuk.reduce.argmax(DLPackArray(FAKE_POINTER, np.float16, (100,)))


def test_dlpack_gets_the_callers_stream():
    x = DLPackArray(FAKE_POINTER, np.float16, (100,))
    with pytest.raises(gpuk.ConfigError):
        gpuk.reduce.argmax(x, stream=0x1234)
    assert x.streams == [0x1234]


def test_cai_not_c_contiguous_is_refused():
    x = CaiArray(FAKE_POINTER, np.float32, (10, 10), strides=(4, 40))
    with pytest.raises(gpuk.ConfigError, match="not C-contiguous"):
        gpuk.sort.keys(x)


def test_cai_c_strides_given_explicitly_are_accepted():
    a = resolve(CaiArray(FAKE_POINTER, np.int32, (4, 5), strides=(20, 4)), "x", device=0, stream=0)
    assert a.dtype == "int32" and a.size == 20 and a.ptr == FAKE_POINTER


def test_cai_dtype_gpuk_lacks_is_refused():
    with pytest.raises(gpuk.ConfigError, match="not one of gpuk's dtypes"):
        gpuk.reduce.max(CaiArray(FAKE_POINTER, np.float16, (100,)))
    with pytest.raises(gpuk.ConfigError, match="not one of gpuk's dtypes"):
        gpuk.reduce.max(CaiArray(FAKE_POINTER, ">f4", (100,)))  # big-endian


def test_numpy_checks():
    with pytest.raises(gpuk.ConfigError, match="not C-contiguous"):
        gpuk.reduce.argmax(np.arange(100, dtype=np.float32)[::2])
    with pytest.raises(gpuk.ConfigError, match="float16"):
        gpuk.reduce.argmax(np.zeros(10, np.float16))
    with pytest.raises(gpuk.ConfigError, match="bool"):
        gpuk.search.find(np.zeros(10, bool), 1)


def test_streams_from_ints_and_the_cuda_stream_protocol():
    class Stream:
        def __cuda_stream__(self):
            return (0, 0xABC)

    class TorchLike:
        cuda_stream = 0xDEF

    assert stream_handle(None) == 0 and stream_handle(5) == 5
    assert stream_handle(Stream()) == 0xABC
    assert stream_handle(TorchLike()) == 0xDEF
    with pytest.raises(gpuk.ConfigError, match="stream="):
        stream_handle("default")
    with pytest.raises(gpuk.ConfigError):
        stream_handle(-1)


def test_a_search_value_must_be_exact_in_the_arrays_dtype():
    assert scalar_bits(7, "int32", "v") == 7
    assert scalar_bits(-1, "int64", "v") == (1 << 64) - 1
    assert scalar_bits(1.5, "float32", "v") == int.from_bytes(np.float32(1.5).tobytes(), "little")
    assert scalar_bits(3.0, "uint32", "v") == 3
    with pytest.raises(gpuk.ConfigError, match="not exact in int32"):
        scalar_bits(2.5, "int32", "value")
    with pytest.raises(gpuk.ConfigError, match="out of range"):
        scalar_bits(1 << 40, "int32", "value")
    with pytest.raises(gpuk.ConfigError, match="out of range"):
        scalar_bits(-1, "uint32", "value")


def test_pointers_follow_the_operations_own_array_order(monkeypatch):
    # sort_pairs takes (keys_in, keys_out, values_in, values_out): inputs and outputs interleaved.
    class Native:
        arrays = [{"name": n, "output": o, "type": "uint32", "bytes": 40, "host_result": False}
                  for n, o in (("keys_in", False), ("keys_out", True), ("values_in", False), ("values_out", True))]
        scalar, variant, chosen, warnings, min_n, max_n, scratch_bytes = None, "v", "c", [], 8, 15, 0

        def launch(self, pointers, n, stream, *scalar):
            self.got = (list(pointers), n, stream)

        def call_arrays(self, inputs, out, stream, device):
            return NotImplemented  # the Python layer's general path, which this test follows

    native = Native()
    op = gpuk.Operation(gpuk.Engine(), native, "sort", "sort_pairs", "uint32", {})
    monkeypatch.setattr("gpuk._engine.check_on_device", lambda *args: None)
    arrays = [CaiArray(FAKE_POINTER + i * 0x1000, np.uint32, (10,)) for i in range(4)]
    out = op(arrays[0], arrays[1], out=(arrays[2], arrays[3]), stream=7)
    assert out == (arrays[2], arrays[3])
    assert native.got == ([FAKE_POINTER, FAKE_POINTER + 0x2000, FAKE_POINTER + 0x1000, FAKE_POINTER + 0x3000], 10, 7)


def test_operation_launch_says_what_it_takes_when_the_binding_refuses_an_argument():
    class Native:  # as nanobind refuses a float where the C++ takes an integer
        arrays = [{"name": "input", "output": False, "type": "float32", "bytes": 40, "host_result": False}]
        scalar, variant, chosen, warnings, min_n, max_n, scratch_bytes = None, "v", "c", [], 8, 15, 0

        def launch(self, pointers, n, stream, *scalar):
            if not all(isinstance(v, int) for v in (*pointers, n)):
                raise TypeError("launch(): incompatible function arguments")

        def call_arrays(self, inputs, out, stream, device):
            return NotImplemented

    op = gpuk.Operation(gpuk.Engine(), Native(), "reduce", "sum", "float32", {})
    op.launch([FAKE_POINTER], 10, 0)
    with pytest.raises(gpuk.ConfigError, match=r"n=1.5: an integer"):
        op.launch([FAKE_POINTER], 1.5, 0)
    with pytest.raises(gpuk.ConfigError, match=r"arrays\[0\]=2.5: an integer"):
        op.launch([2.5], 10, 0)
