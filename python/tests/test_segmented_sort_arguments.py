"""gpuk.sort.segmented_sort and segmented_sort_pairs without a GPU: every argument check before the
GPU is opened, and what reaches the native launch (a fake Operation, host memory standing in for
device memory). The answers on a GPU: test_gpu.py."""
import ctypes

import numpy as np
import pytest

import gpuk
from producers import CaiArray

FAKE_POINTER = 0x7F0000000000  # never dereferenced: the checks refuse the array first
X = np.arange(10, dtype=np.float32)


def test_the_functions_replace_the_generic_ones_and_say_what_they_are():
    assert gpuk.sort.segmented_sort.__qualname__ == "sort.segmented_sort"
    assert gpuk.sort.segmented_sort_pairs.__qualname__ == "sort.segmented_sort_pairs"
    assert "cub::DeviceSegmentedSort" in gpuk.sort.segmented_sort.__doc__
    assert "returns (keys, values)" in gpuk.sort.segmented_sort_pairs.__doc__


def test_offsets_or_begin_and_end_not_both_nor_neither():
    with pytest.raises(TypeError, match="not both"):
        gpuk.sort.segmented_sort(X, [0, 5, 10], begin=[0], end=[5])
    with pytest.raises(TypeError, match="takes offsets"):
        gpuk.sort.segmented_sort(X)
    with pytest.raises(TypeError, match="takes offsets"):
        gpuk.sort.segmented_sort(X, begin=[0])
    with pytest.raises(TypeError, match="takes the values array after the keys"):
        gpuk.sort.segmented_sort_pairs(X, None, [0, 10])


@pytest.mark.parametrize("call,words", [
    (lambda: gpuk.sort.segmented_sort(X, [0, 5, 11]), r"offsets\[2\] = 11 is outside \[0, 10\]"),
    (lambda: gpuk.sort.segmented_sort(X, [-1, 10]), r"offsets\[0\] = -1 is outside"),
    (lambda: gpuk.sort.segmented_sort(X, [0, 6, 4, 10]), r"offsets\[2\] = 4 is less than offsets\[1\] = 6"),
    (lambda: gpuk.sort.segmented_sort(X, begin=[0, 3], end=[5, 8]), r"segments 0 \[0, 5\) and 1 \[3, 8\) overlap"),
    (lambda: gpuk.sort.segmented_sort(X, begin=[6, 0, 2], end=[9, 2, 7]), r"segments 2 \[2, 7\) and 0 \[6, 9\)"),
    (lambda: gpuk.sort.segmented_sort(X, begin=[0, 1], end=[3]), "begin has 2 offsets, end 1"),
    (lambda: gpuk.sort.segmented_sort(X, np.array([], np.int64)), "offsets has no element"),
    (lambda: gpuk.sort.segmented_sort(X, np.array([0.0, 10.0])), "offsets are integers"),
    (lambda: gpuk.sort.segmented_sort(X, np.array([False, True])), "offsets are integers"),
    (lambda: gpuk.sort.segmented_sort(X, np.lib.stride_tricks.as_strided(np.zeros(1, np.int64), ((1 << 31) + 1,),
                                                                         (0,))),
     r"segments must be fewer than 2\^31, not 2147483648"),
])
def test_host_offsets_are_checked_in_full(call, words):
    with pytest.raises(gpuk.ConfigError, match=words):
        call()


def test_empty_and_reversed_segments_are_fine_on_the_host():
    # end <= begin is an empty segment; empty segments may sit anywhere, even "inside" others.
    from gpuk._segmented_sort import _check_disjoint
    _check_disjoint(np.array([0, 7, 3, 5]), np.array([5, 2, 3, 10]), "t")
    with pytest.raises(gpuk.ConfigError, match="overlap"):
        _check_disjoint(np.array([0, 4]), np.array([5, 10]), "t")


def test_device_offsets_must_be_int64():
    x = CaiArray(FAKE_POINTER, np.float32, (100,))
    with pytest.raises(gpuk.ConfigError, match="offsets on the GPU must be int64, not int32"):
        gpuk.sort.segmented_sort(x, CaiArray(FAKE_POINTER, np.int32, (3,)))
    with pytest.raises(gpuk.ConfigError, match="must be int64"):
        gpuk.sort.segmented_sort(x, begin=CaiArray(FAKE_POINTER, np.uint64, (2,)),
                                 end=CaiArray(FAKE_POINTER, np.int64, (2,)))


@pytest.mark.parametrize("call,exception,words", [
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], segments=2), TypeError, "the offsets give the segments"),
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], segment_lengths="equal"), TypeError, "takes no segment_lengths="),
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], begin_bit=4), gpuk.ConfigError, "sorts by the whole key"),
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], order="down"), gpuk.ConfigError,
     "order must be one of ascending, descending, not 'down'"),
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], float_order="numpy"), gpuk.ConfigError, "float_order must be one of"),
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], k=3), gpuk.ConfigError, "options of topk"),
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], values="uint64"), TypeError, "values= takes the values array"),
    (lambda: gpuk.sort.segmented_sort_pairs(X, np.zeros(9, np.uint32), [0, 10]), gpuk.ConfigError,
     "values has 9 elements, the keys 10"),
    (lambda: gpuk.sort.segmented_sort_pairs(X, np.zeros(10, np.int16), [0, 10]), gpuk.ConfigError,
     "dtype int16 is not one of gpuk's dtypes"),
    (lambda: gpuk.sort.segmented_sort(X.astype(">f4"), [0, 10]), gpuk.ConfigError, "big-endian"),
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], out=np.empty(10, np.int32)), gpuk.ConfigError,
     r"out \(keys\) must be float32, not int32"),
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], out=np.empty(9, np.float32)), gpuk.ConfigError,
     r"out \(keys\) has 9 elements, the input 10"),
    (lambda: gpuk.sort.segmented_sort(X, [0, 10], out=(X.copy(), X.copy())), TypeError, "out= takes 1 array"),
    (lambda: gpuk.sort.segmented_sort_pairs(X, X, [0, 10], out=(X.copy(), np.empty(10, np.float64))),
     gpuk.ConfigError, r"out \(values\) must be float32, not float64"),
])
def test_a_wrong_call_is_told_so_before_the_gpu(call, exception, words):
    with pytest.raises(exception, match=words) as e:
        call()
    assert not isinstance(e.value, gpuk.NoDeviceError)


def test_nothing_to_sort_launches_nothing_and_needs_no_gpu():
    keys = gpuk.sort.segmented_sort(np.empty(0, np.float32), [0])
    assert keys.shape == (0,) and keys.dtype == np.float32
    keys, values = gpuk.sort.segmented_sort_pairs(np.empty(0, np.int64), np.empty(0, np.float64), [0, 0, 0])
    assert keys.dtype == np.int64 and values.dtype == np.float64 and values.shape == (0,)
    # No segments: NumPy in, NumPy out, every key where it was.
    y = np.array([3, 1, 2], np.int32)
    got = gpuk.sort.segmented_sort(y, [0])
    assert got.tolist() == [3, 1, 2] and got is not y
    out = np.zeros(3, np.int32)
    assert gpuk.sort.segmented_sort(y, begin=[], end=[], out=out) is out and out.tolist() == [0, 0, 0]


# --- what reaches the native launch (a fake Operation; no GPU) ----------------------------

class HostMemory:
    """Stands in for gpuk._gpuk.DeviceMemory: host bytes at a real address (the fake launch reads them)."""

    def __init__(self, device, nbytes):
        self.buffer = np.full(nbytes, 0xA5, np.uint8)  # poisoned, as fresh device memory may be anything
        self.ptr, self.bytes, self.device = self.buffer.ctypes.data, nbytes, device

    def upload_from(self, host, nbytes, stream):
        ctypes.memmove(self.ptr, host, nbytes)

    def download_to(self, host, nbytes, stream):
        ctypes.memmove(host, self.ptr, nbytes)


def at(ptr, dtype, count):
    return np.ctypeslib.as_array((ctypes.c_uint8 * (count * np.dtype(dtype).itemsize)).from_address(ptr)).view(dtype)


class SegmentedSortOnTheHost:
    """A fake native Operation whose launch sorts each segment stably on the host, as the kernels do."""

    def __init__(self, keys, values=None, descending=False):
        names = ["keys_in", "keys_out"] + (["values_in", "values_out"] if values else []) + ["begin_offsets",
                                                                                                 "end_offsets"]
        self.arrays = [{"name": n, "output": n.endswith("_out"), "type": "int64", "bytes": 0, "host_result": False}
                       for n in names]
        self.scalar = {"name": "segments", "dtype": "int64"}
        self.variant, self.chosen, self.warnings = "v", "c", []
        self.min_n, self.max_n, self.scratch_bytes = 1, 1 << 20, 0
        self.keys, self.values, self.descending = keys, values, descending
        self.got = []

    def call_arrays(self, *a):
        return NotImplemented

    def launch(self, pointers, n, stream, *scalar):
        self.got.append((list(pointers), n, stream, scalar))
        count = scalar[1]
        if self.values:
            ki, ko, vi, vo, b, e = pointers
        else:
            (ki, ko, b, e), vi, vo = pointers, None, None
        keys_in, keys_out = at(ki, self.keys, n), at(ko, self.keys, n)
        begin, end = at(b, np.int64, count), at(e, np.int64, count)
        for s0, s1 in zip(begin, end):
            if s1 <= s0:
                continue
            seg = keys_in[s0:s1]
            order = np.argsort(-seg if self.descending else seg, kind="stable")
            keys_out[s0:s1] = seg[order]
            if self.values:
                at(vo, self.values, n)[s0:s1] = at(vi, self.values, n)[s0:s1][order]


def fake_engine(monkeypatch, native):
    engine = gpuk.Engine()
    asked = []

    def operation(family, operation, dtype, n, options, stream):
        asked.append((family, operation, dtype, n, dict(options), stream))
        return gpuk.Operation(engine, native, family, operation, dtype, options)

    monkeypatch.setattr(engine, "_operation", operation)
    monkeypatch.setattr(gpuk._gpuk, "DeviceMemory", HostMemory)
    monkeypatch.setattr(gpuk._gpuk, "synchronize", lambda *a: None)
    monkeypatch.setattr("gpuk._segmented_sort.check_on_device", lambda *args: None)
    return engine, asked


def test_numpy_keys_come_back_sorted_per_segment_and_unsegmented_keys_stay(monkeypatch):
    native = SegmentedSortOnTheHost("float32")
    engine, asked = fake_engine(monkeypatch, native)
    x = np.array([5, 3, 4, 9, 8, 1, 7, 6, 2, 0], np.float32)
    got = gpuk.sort.segmented_sort(x, [0, 3, 3, 7, 10], engine=engine)
    assert got.tolist() == [3, 4, 5, 1, 7, 8, 9, 0, 2, 6]
    assert asked == [("sort", "segmented_sort", "float32", 10, {"segments": "4"}, 0)]
    assert native.got[0][1] == 10 and native.got[0][3] == ("int64", 4)  # n, and the count as the scalar
    # Segments that leave keys out: those come back as they went in (not the poison).
    native.descending = True
    got = gpuk.sort.segmented_sort(x, begin=[6, 1], end=[9, 3], engine=engine, order="descending")
    assert got.tolist() == [5, 3, 4, 9, 8, 1, 7, 6, 2, 0][:1] + [4, 3] + [9, 8, 1] + [7, 6, 2] + [0]
    assert asked[-1][4] == {"segments": "2", "order": "descending"}
    # out= keeps what it held outside the segments.
    native.descending = False
    out = np.full(10, -1, np.float32)
    assert gpuk.sort.segmented_sort(x, [2, 4], out=out, engine=engine) is out
    assert out.tolist() == [-1, -1, 4, 9, -1, -1, -1, -1, -1, -1]


def test_pairs_carry_any_four_or_eight_byte_values_by_their_bits(monkeypatch):
    native = SegmentedSortOnTheHost("int32", values="float32")
    engine, asked = fake_engine(monkeypatch, native)
    keys = np.array([2, 1, 2, 0, 3], np.int32)
    values = np.array([0.5, 1.5, 2.5, 3.5, 4.5], np.float32)
    k, v = gpuk.sort.segmented_sort_pairs(keys, values, np.array([0, 3, 5], np.uint8), engine=engine)
    assert k.tolist() == [1, 2, 2, 0, 3] and v.tolist() == [1.5, 0.5, 2.5, 3.5, 4.5]  # stable: 0.5 before 2.5
    assert v.dtype == np.float32
    assert asked[-1][1] == "segmented_sort_pairs" and asked[-1][4] == {"values": "uint32", "segments": "2"}
    k2, v2 = gpuk.sort.segmented_sort(keys, np.array([0, 3, 5]), values=values, engine=engine)
    assert k2.tolist() == k.tolist() and v2.tolist() == v.tolist()


def test_device_arrays_reach_the_launch_in_cubs_order(monkeypatch):
    native = SegmentedSortOnTheHost("float32")
    native.launch = lambda pointers, n, stream, *scalar: native.got.append((list(pointers), n, stream, scalar))
    engine, asked = fake_engine(monkeypatch, native)
    x = CaiArray(FAKE_POINTER, np.float32, (100,))
    offsets = CaiArray(FAKE_POINTER + 0x1000, np.int64, (4,))
    out = CaiArray(FAKE_POINTER + 0x2000, np.float32, (100,))
    assert gpuk.sort.segmented_sort(x, offsets, out=out, stream=5, engine=engine, float_order="cub") is out
    assert asked == [("sort", "segmented_sort", "float32", 100, {"float_order": "cub", "segments": "3"}, 5)]
    assert native.got == [([FAKE_POINTER, FAKE_POINTER + 0x2000, FAKE_POINTER + 0x1000, FAKE_POINTER + 0x1008], 100, 5,
                           ("int64", 3))]
    native = SegmentedSortOnTheHost("float32", values="uint64")
    native.launch = lambda pointers, n, stream, *scalar: native.got.append((list(pointers), n, stream, scalar))
    engine, asked = fake_engine(monkeypatch, native)
    v, vo = CaiArray(FAKE_POINTER + 0x3000, np.uint64, (100,)), CaiArray(FAKE_POINTER + 0x4000, np.int64, (100,))
    begin, end = CaiArray(FAKE_POINTER + 0x5000, np.int64, (7,)), CaiArray(FAKE_POINTER + 0x6000, np.int64, (7,))
    gpuk.sort.segmented_sort_pairs(x, v, begin=begin, end=end, out=(out, vo), engine=engine)
    assert asked[-1][4] == {"values": "uint64", "segments": "7"}
    assert native.got[-1][0] == [FAKE_POINTER, FAKE_POINTER + 0x2000, FAKE_POINTER + 0x3000, FAKE_POINTER + 0x4000,
                                 FAKE_POINTER + 0x5000, FAKE_POINTER + 0x6000]
    assert native.got[-1][3] == ("int64", 7)


def test_a_plugin_whose_slots_differ_is_refused_before_any_launch(monkeypatch):
    native = SegmentedSortOnTheHost("float32", values="uint32")  # pairs' slots for a keys-only call
    engine, _ = fake_engine(monkeypatch, native)
    with pytest.raises(gpuk.ConfigError, match="versions differ"):
        gpuk.sort.segmented_sort(X, [0, 10], engine=engine)
    assert native.got == []


def test_a_prepared_segmented_sort_is_checked_before_the_gpu():
    e = gpuk.Engine()
    with pytest.raises(gpuk.ConfigError, match="sorts by the whole key"):
        e.prepare_sizes("sort", "segmented_sort", "float32", 1000, segments=5000, begin_bit=3)
    with pytest.raises(gpuk.ConfigError, match="segments must be fewer than 2\\^31"):
        e.prepare_sizes("sort", "segmented_sort_pairs", "int64", 1000, segments=1 << 31, values="uint64")
