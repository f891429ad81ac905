"""The sort options (begin_bit, end_bit, float_order) and the segmented and per-channel
reductions: their argument checks, all before the GPU is opened (no GPU needed)."""
import ctypes

import numpy as np
import pytest

import gpuk
from producers import CaiArray

FAKE_POINTER = 0x7F0000000000  # never dereferenced: the checks refuse the array first
OPERATIONS = ("argmax", "argmin", "max", "min", "sum")


# --- sort options -------------------------------------------------------------------------

@pytest.mark.parametrize("function", ["keys", "argsort"])
def test_a_bit_window_outside_the_key_is_refused_with_the_keys_width(function):
    x = np.arange(10, dtype=np.uint32)
    sort = getattr(gpuk.sort, function)
    with pytest.raises(gpuk.ConfigError, match=r"begin_bit must be at least 0 and less than 32 \(uint32 keys have 32"):
        sort(x, begin_bit=32)
    with pytest.raises(gpuk.ConfigError, match="begin_bit must be at least 0"):
        sort(x, begin_bit=-1)
    with pytest.raises(gpuk.ConfigError, match=r"end_bit must be greater than begin_bit \(8\) and at most 32"):
        sort(x, begin_bit=8, end_bit=8)
    with pytest.raises(gpuk.ConfigError, match="at most 64"):
        sort(x.astype(np.int64), end_bit=65)


def test_the_sort_options_refuse_values_of_the_wrong_kind():
    x = np.zeros(10, np.float32)
    with pytest.raises(gpuk.ConfigError, match="begin_bit must be an integer, not '1.5'"):
        gpuk.sort.keys(x, begin_bit=1.5)
    with pytest.raises(gpuk.ConfigError, match="end_bit must be an integer, not 'true'"):
        gpuk.sort.keys(x, end_bit=True)
    with pytest.raises(gpuk.ConfigError, match="float_order must be one of total, cub, not 'numpy'"):
        gpuk.sort.keys(x, float_order="numpy")
    with pytest.raises(gpuk.ConfigError, match="has no option 'begin_bits'"):
        gpuk.sort.pairs(x, np.zeros(10, np.uint32), begin_bits=0)


def test_the_sort_options_are_listed_with_their_help():
    options = {o["name"]: o for o in gpuk.sort.options}
    assert options["begin_bit"]["kind"] == "integer" and options["begin_bit"]["default"] == "0"
    assert options["end_bit"]["default"] == "none"
    assert options["float_order"]["choices"] == ["total", "cub"]


# --- segmented reductions -----------------------------------------------------------------

def test_every_reduce_operation_has_its_segmented_and_per_channel_function():
    for op in OPERATIONS:
        assert callable(getattr(gpuk.reduce, f"segmented_{op}"))
        assert callable(getattr(gpuk.reduce, f"per_channel_{op}"))
    assert "cub::DeviceSegmentedReduce" in gpuk.reduce.segmented_argmax.__doc__


def test_offsets_or_begin_and_end_not_both_nor_neither():
    x = np.zeros(10, np.float32)
    with pytest.raises(TypeError, match="not both"):
        gpuk.reduce.segmented_argmax(x, [0, 5, 10], begin=[0], end=[5])
    with pytest.raises(TypeError, match="takes offsets"):
        gpuk.reduce.segmented_argmax(x)
    with pytest.raises(TypeError, match="takes offsets"):
        gpuk.reduce.segmented_sum(x, begin=[0])


def test_offsets_are_checked_against_the_input():
    x = np.zeros(10, np.float32)
    with pytest.raises(gpuk.ConfigError, match=r"offsets\[2\] = 11 is outside \[0, 10\]"):
        gpuk.reduce.segmented_argmax(x, np.array([0, 5, 11]))
    with pytest.raises(gpuk.ConfigError, match=r"begin\[0\] = -1 is outside"):
        gpuk.reduce.segmented_max(x, begin=[-1], end=[3])
    with pytest.raises(gpuk.ConfigError, match="begin has 2 offsets, end 1"):
        gpuk.reduce.segmented_min(x, begin=[0, 1], end=[3])
    with pytest.raises(gpuk.ConfigError, match="offsets has no element"):
        gpuk.reduce.segmented_sum(x, np.array([], np.int64))
    with pytest.raises(gpuk.ConfigError, match="offsets are integers"):
        gpuk.reduce.segmented_argmin(x, np.array([0.0, 10.0]))
    with pytest.raises(gpuk.ConfigError, match="offsets are integers"):
        gpuk.reduce.segmented_argmin(x, np.array([False, True]))


def test_device_offsets_must_be_int64():
    x = CaiArray(FAKE_POINTER, np.float32, (100,))
    with pytest.raises(gpuk.ConfigError, match="offsets on the GPU must be int64, not int32"):
        gpuk.reduce.segmented_argmax(x, CaiArray(FAKE_POINTER, np.int32, (3,)))
    with pytest.raises(gpuk.ConfigError, match="must be int64"):
        gpuk.reduce.segmented_argmax(x, begin=CaiArray(FAKE_POINTER, np.uint64, (2,)),
                                     end=CaiArray(FAKE_POINTER, np.int64, (2,)))


def test_no_segments_is_an_empty_answer_without_the_gpu():
    x = np.arange(10, dtype=np.int32)
    best = gpuk.reduce.segmented_argmax(x, np.array([0]))
    assert best.values.shape == (0,) and best.values.dtype == np.int32 and best.indices.dtype == np.int64
    assert gpuk.reduce.segmented_argmax(x, np.array([0]), abs=True).values.dtype == np.uint32
    sums = gpuk.reduce.segmented_sum(x, begin=[], end=[])
    assert sums.shape == (0,) and sums.dtype == np.int64
    assert gpuk.reduce.segmented_max(x.astype(np.float32), [0]).dtype == np.float32
    out = np.empty(4, np.int64)
    assert gpuk.reduce.segmented_max(x, [0], out=out) is out


def test_the_layout_options_are_the_functions_own():
    x = np.zeros(12, np.float32)
    with pytest.raises(TypeError, match="the offsets give the segments"):
        gpuk.reduce.segmented_argmax(x, [0, 12], segments=1)
    with pytest.raises(TypeError, match="takes no channels= option"):
        gpuk.reduce.segmented_argmax(x, [0, 12], channels=3)
    with pytest.raises(gpuk.ConfigError, match="abs='yes': True or False"):
        gpuk.reduce.segmented_sum(x, [0, 12], abs="yes")


# --- per-channel reductions ---------------------------------------------------------------

def test_per_channel_needs_a_channel_axis_or_channels():
    with pytest.raises(gpuk.ConfigError, match="1-d array has no channel axis"):
        gpuk.reduce.per_channel_argmax(np.zeros(12, np.float32))
    with pytest.raises(gpuk.ConfigError, match="channels=0: from 1 to 1024"):
        gpuk.reduce.per_channel_argmax(np.zeros(12, np.float32), channels=0)
    with pytest.raises(gpuk.ConfigError, match="channels=2000: from 1 to 1024"):
        gpuk.reduce.per_channel_max(np.zeros((2, 2000), np.float32))
    with pytest.raises(gpuk.ConfigError, match="not a multiple of channels=5"):
        gpuk.reduce.per_channel_sum(np.zeros(12, np.float32), channels=5)
    with pytest.raises(gpuk.ConfigError, match="channels=True: an integer"):
        gpuk.reduce.per_channel_min(np.zeros(12, np.float32), channels=True)


def test_per_channel_of_no_pixels_is_refused_unless_out_is_given():
    image = np.zeros((0, 4, 3), np.float32)
    with pytest.raises(gpuk.ConfigError, match="no pixels"):
        gpuk.reduce.per_channel_argmax(image)
    out = np.empty(6, np.int64)
    assert gpuk.reduce.per_channel_argmax(image, out=out) is out


def test_per_channel_device_image_checks_come_first():
    x = CaiArray(FAKE_POINTER, np.float32, (10, 10), strides=(4, 40))
    with pytest.raises(gpuk.ConfigError, match="not C-contiguous"):
        gpuk.reduce.per_channel_argmax(x)


def test_record_views_split_values_and_indices():
    from gpuk._layouts import _record_views, _slot_value_dtype
    raw = np.zeros(3 * 16, np.uint8)
    rec = raw.view(np.int64).reshape(3, 2)
    rec[:, 1] = [4, -1, 7]
    raw.view(np.float32).reshape(3, 4)[:, 0] = [1.5, -np.inf, 2.5]
    values, indices = _record_views(raw, "float32", 3, host=True)
    assert values.tolist() == [1.5, -np.inf, 2.5] and indices.tolist() == [4, -1, 7]
    assert values.flags.c_contiguous and indices.flags.c_contiguous
    assert _slot_value_dtype("{uint32 value; int64 index at byte 8} x 17") == "uint32"
    assert _slot_value_dtype("float64 x 5") == "float64"


def test_valid_sort_options_pass_every_check_before_the_gpu():
    from conftest import no_gpu_reason
    if not no_gpu_reason():
        pytest.skip("a GPU is here: the call would run (test_options_gpu.py checks the answers)")
    x = np.zeros(10, np.float32)
    for options in ({"begin_bit": 0, "end_bit": 16}, {"float_order": "cub"}, {"end_bit": None},
                    {"begin_bit": np.int64(31), "end_bit": 32, "float_order": "total", "order": "descending"}):
        with pytest.raises(gpuk.NoDeviceError):
            gpuk.sort.keys(x, **options)


# --- tuning policy ------------------------------------------------------------------------

def test_the_tuning_policy_by_name_or_file(tmp_path):
    for policy in ("user_database", "shipped_only", "none"):
        assert gpuk.Engine(tuning=policy).tuning == policy
    with pytest.raises(gpuk.ConfigError, match="tuning='shipped': one of user_database, shipped_only, none"):
        gpuk.Engine(tuning="shipped")
    with pytest.raises(gpuk.ConfigError, match="a string names a policy"):
        gpuk.Engine(tuning=str(tmp_path / "tuning.yaml"))
    with pytest.raises(gpuk.ConfigError, match="not int"):
        gpuk.Engine(tuning=1)
    with pytest.raises(gpuk.ConfigError):
        gpuk.Engine(tuning=tmp_path / "missing.yaml")  # a missing file: refused when the Engine is made


def test_max_and_min_of_an_empty_array_are_refused_before_the_gpu():
    # C++ answers {0, index -1}; the Python max/min return the value alone, so they refuse.
    for f in (gpuk.reduce.max, gpuk.reduce.min):
        with pytest.raises(gpuk.ConfigError, match="of an empty array has no value"):
            f(np.zeros((0, 3), np.float32))
        with pytest.raises(gpuk.ConfigError, match="empty array"):
            f([])


def test_the_layout_options_point_to_their_functions():
    x = np.zeros(12, np.float32)
    with pytest.raises(TypeError, match="use gpuk.reduce.segmented_argmax"):
        gpuk.reduce.argmax(x, segments=3)
    with pytest.raises(TypeError, match="use gpuk.reduce.per_channel_sum"):
        gpuk.reduce.sum(x, channels=3)
    with pytest.raises(TypeError, match="the offsets give the segments"):
        gpuk.reduce.segmented_max(x, [0, 12], segment_min=2)
    with pytest.raises(TypeError, match="last axis or channels= gives the channels"):
        gpuk.reduce.per_channel_max(x.reshape(4, 3), segments=2)


def test_the_functions_list_their_options():
    assert "begin_bit: integer, default 0" in gpuk.sort.keys.__doc__
    assert "float_order: choice (total | cub)" in gpuk.sort.argsort.__doc__


# --- what reaches the native launch (a fake Operation; no GPU) ----------------------------

class FakeNative:
    def __init__(self, slots):
        self.arrays = [{"name": n, "output": o, "type": t, "bytes": b, "host_result": False} for n, o, t, b in slots]
        self.scalar, self.variant, self.chosen, self.warnings = None, "v", "c", []
        self.min_n, self.max_n, self.scratch_bytes = 1, 1 << 20, 0
        self.got = []

    def launch(self, pointers, n, stream, *scalar):
        self.got.append((list(pointers), n, stream))

    def call_arrays(self, inputs, out, stream, device):
        return NotImplemented  # the Python layer's general path, which these tests follow


def fake_engine(monkeypatch, slots):
    engine = gpuk.Engine()
    native = FakeNative(slots)
    asked = []

    def operation(family, operation, dtype, n, options, stream):
        asked.append((family, operation, dtype, n, dict(options), stream))
        return gpuk.Operation(engine, native, family, operation, dtype, options)

    monkeypatch.setattr(engine, "_operation", operation)
    monkeypatch.setattr("gpuk._layouts.check_on_device", lambda *args: None)
    return engine, native, asked


def test_segmented_offsets_become_begin_and_end_pointers(monkeypatch):
    slots = [("input", False, "float32", 400), ("begin_offsets", False, "int64 x 3", 24),
             ("end_offsets", False, "int64 x 3", 24), ("results", True, "{float32 value; int64 index at byte 8} x 3", 48)]
    engine, native, asked = fake_engine(monkeypatch, slots)
    x = CaiArray(FAKE_POINTER, np.float32, (100,))
    offsets = CaiArray(FAKE_POINTER + 0x1000, np.int64, (4,))
    out = CaiArray(FAKE_POINTER + 0x2000, np.int64, (3, 2))
    assert gpuk.reduce.segmented_argmax(x, offsets, out=out, stream=5, engine=engine, abs=True) is out
    assert asked == [("reduce", "argmax", "float32", 100, {"abs": "true", "segments": "3"}, 5)]
    assert native.got == [([FAKE_POINTER, FAKE_POINTER + 0x1000, FAKE_POINTER + 0x1008, FAKE_POINTER + 0x2000], 100, 5)]
    begin, end = CaiArray(FAKE_POINTER + 0x3000, np.int64, (3,)), CaiArray(FAKE_POINTER + 0x4000, np.int64, (3,))
    gpuk.reduce.segmented_argmax(x, begin=begin, end=end, out=out, engine=engine)
    assert native.got[-1] == ([FAKE_POINTER, FAKE_POINTER + 0x3000, FAKE_POINTER + 0x4000, FAKE_POINTER + 0x2000], 100, 0)
    with pytest.raises(gpuk.ConfigError, match=r"out needs 48 bytes \(3 x \{float32 value; int64 index at byte 8\}\)"):
        gpuk.reduce.segmented_argmax(x, offsets, out=CaiArray(FAKE_POINTER, np.int64, (5,)), engine=engine)


def test_segmented_of_an_empty_device_input_launches_for_one_element(monkeypatch):
    slots = [("input", False, "int32", 4), ("begin_offsets", False, "int64 x 2", 16),
             ("end_offsets", False, "int64 x 2", 16), ("results", True, "int64 x 2", 16)]
    engine, native, asked = fake_engine(monkeypatch, slots)
    out = CaiArray(FAKE_POINTER + 0x2000, np.int64, (2,))
    gpuk.reduce.segmented_sum(CaiArray(0, np.int32, (0,)), CaiArray(FAKE_POINTER, np.int64, (3,)), out=out, engine=engine)
    assert asked[0][3] == 1 and native.got[0][1] == 1  # as C++: n counts 1 for the bucket


def test_per_channel_takes_the_last_axis_and_launches_on_every_element(monkeypatch):
    slots = [("input", False, "float32", 4 * 60), ("results", True, "float64 x 3", 24)]
    engine, native, asked = fake_engine(monkeypatch, slots)
    image = CaiArray(FAKE_POINTER, np.float32, (4, 5, 3))
    out = CaiArray(FAKE_POINTER + 0x1000, np.float64, (3,))
    assert gpuk.reduce.per_channel_sum(image, out=out, engine=engine) is out
    assert asked == [("reduce", "sum", "float32", 60, {"channels": "3"}, 0)]
    assert native.got == [([FAKE_POINTER, FAKE_POINTER + 0x1000], 60, 0)]
    gpuk.reduce.per_channel_sum(CaiArray(FAKE_POINTER, np.float32, (60,)), channels=3, out=out, engine=engine)
    assert native.got[-1] == ([FAKE_POINTER, FAKE_POINTER + 0x1000], 60, 0)


def test_a_plugin_whose_slots_differ_is_refused_before_any_launch(monkeypatch):
    engine, native, _ = fake_engine(monkeypatch, [("input", False, "float32", 40), ("result", True, "float64", 8)])
    with pytest.raises(gpuk.ConfigError, match="versions differ"):
        gpuk.reduce.per_channel_sum(CaiArray(FAKE_POINTER, np.float32, (10, 1)), out=CaiArray(FAKE_POINTER, np.float64, (1,)),
                                    engine=engine)
    assert native.got == []


class HostMemory:
    """Stands in for gpuk._gpuk.DeviceMemory: host bytes at a real address (the fake launch reads them)."""

    def __init__(self, device, nbytes):
        self.buffer = np.zeros(nbytes, np.uint8)
        self.ptr, self.bytes, self.device = self.buffer.ctypes.data, nbytes, device

    def upload_from(self, host, nbytes, stream):
        ctypes.memmove(self.ptr, host, nbytes)

    def download_to(self, host, nbytes, stream):
        ctypes.memmove(host, self.ptr, nbytes)


def at(ptr, dtype, count):
    return np.ctypeslib.as_array((ctypes.c_uint8 * (count * np.dtype(dtype).itemsize)).from_address(ptr)).view(dtype)


class SegmentedArgmaxOnTheHost(FakeNative):
    """A fake launch that answers argmax per segment into 16-byte records, as the plugin's kernels do."""

    def __init__(self, dtype, count):
        super().__init__([("input", False, dtype, 0), ("begin_offsets", False, f"int64 x {count}", 8 * count),
                          ("end_offsets", False, f"int64 x {count}", 8 * count),
                          ("results", True, f"{{{dtype} value; int64 index at byte 8}} x {count}", 16 * count)])
        self.dtype, self.count = dtype, count

    def launch(self, pointers, n, stream, *scalar):
        super().launch(pointers, n, stream)
        x = at(pointers[0], self.dtype, n)
        begin, end = at(pointers[1], np.int64, self.count), at(pointers[2], np.int64, self.count)
        records = at(pointers[3], np.uint8, 16 * self.count)
        for s, (b, e) in enumerate(zip(begin, end)):
            value, index = (x[b:e].max(), int(np.argmax(x[b:e]))) if e > b else (np.finfo(self.dtype).min, -1)
            records[16 * s:16 * s + np.dtype(self.dtype).itemsize] = np.array([value], self.dtype).view(np.uint8)
            records[16 * s + 8:16 * s + 16] = np.array([index], np.int64).view(np.uint8)


def test_the_numpy_path_uploads_launches_and_splits_the_records(monkeypatch):
    engine = gpuk.Engine()
    native = SegmentedArgmaxOnTheHost("float32", 4)
    monkeypatch.setattr(engine, "_operation",
                        lambda *a: gpuk.Operation(engine, native, "reduce", "argmax", "float32", a[4]))
    monkeypatch.setattr(gpuk._gpuk, "DeviceMemory", HostMemory)
    monkeypatch.setattr(gpuk._gpuk, "synchronize", lambda *a: None)
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], np.float32)
    best = gpuk.reduce.segmented_argmax(x, [0, 3, 3, 8, 10], engine=engine)
    assert isinstance(best.values, np.ndarray) and best.values.flags.c_contiguous
    assert best.values.tolist() == [4, np.finfo(np.float32).min, 9, 5] and best.indices.tolist() == [2, -1, 2, 0]
    assert native.got[0][1] == 10
    best = gpuk.reduce.segmented_argmax(x, begin=np.array([5, 0, 9, 2], np.int32), end=[6, 10, 9, 4], engine=engine)
    assert best.values.tolist() == [9, 9, np.finfo(np.float32).min, 4] and best.indices.tolist() == [0, 5, -1, 0]
    out = np.zeros(8, np.int64)
    assert gpuk.reduce.segmented_argmax(x, [0, 3, 3, 8, 10], out=out, engine=engine) is out
    assert out.reshape(4, 2)[:, 1].tolist() == [2, -1, 2, 0]


def test_a_device_input_gets_strided_device_views_of_the_records(monkeypatch):
    engine = gpuk.Engine()
    native = SegmentedArgmaxOnTheHost("float64", 2)
    monkeypatch.setattr(engine, "_operation",
                        lambda *a: gpuk.Operation(engine, native, "reduce", "argmax", "float64", a[4]))
    monkeypatch.setattr(gpuk._gpuk, "DeviceMemory", HostMemory)
    monkeypatch.setattr(gpuk._gpuk, "synchronize", lambda *a: None)
    monkeypatch.setattr("gpuk._layouts.check_on_device", lambda *args: None)
    host = np.array([1.5, -2.0, 7.25, 0.5], np.float64)
    offsets = np.array([0, 3, 4], np.int64)
    best = gpuk.reduce.segmented_argmax(CaiArray(host.ctypes.data, np.float64, (4,)),
                                        CaiArray(offsets.ctypes.data, np.int64, (3,)), engine=engine)
    assert isinstance(best.values, gpuk.DeviceArray) and isinstance(best.indices, gpuk.DeviceArray)
    assert best.values.__cuda_array_interface__["strides"] == (16,)
    assert best.indices.ptr == best.values.ptr + 8
    assert best.values.numpy().tolist() == [7.25, 0.5] and best.indices.numpy().tolist() == [2, 0]


@pytest.mark.parametrize("family,operation,layout,answer", [
    ("reduce", "argmax", "{float32 value; int64 index at byte 8}", (0.0, -1)),
    ("reduce", "sum", "float64", 0.0),
    ("search", "find", "int64", -1),
    ("search", "count", "int64", 0)])
def test_an_empty_input_launches_nothing_and_answers_as_cpp(monkeypatch, family, operation, layout, answer):
    engine = gpuk.Engine()
    native = FakeNative([("input", False, "float32", 4), ("result", True, layout, 16)])
    native.arrays[1]["host_result"] = True
    if family == "search":
        native.scalar = {"name": "value", "dtype": "float32"}
    asked = []

    def operation_for(*a):
        asked.append(a[3])
        return gpuk.Operation(engine, native, family, operation, "float32", a[4])

    monkeypatch.setattr(engine, "_operation", operation_for)
    args = (np.empty(0, np.float32),) + ((1.0,) if family == "search" else ())
    got = engine.call(family, operation, *args)
    assert (tuple(got) if isinstance(answer, tuple) else got) == answer
    assert asked == [1] and native.got == []  # prepared as n = 1 (its checks), nothing launched


def test_an_empty_sort_returns_empty_arrays_and_leaves_out_alone(monkeypatch):
    engine = gpuk.Engine()
    native = FakeNative([("keys_in", False, "uint32", 4), ("keys_out", True, "uint32", 4)])
    monkeypatch.setattr(engine, "_operation", lambda *a: gpuk.Operation(engine, native, "sort", "sort", "uint32", a[4]))
    keys = gpuk.sort.keys(np.empty(0, np.uint32), engine=engine, begin_bit=4)
    assert keys.shape == (0,) and keys.dtype == np.uint32 and native.got == []
    out = np.empty(0, np.uint32)
    assert gpuk.sort.keys(np.empty(0, np.uint32), out=out, engine=engine) is out
