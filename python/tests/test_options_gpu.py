"""The sort options (bit windows, CUB's float order, in place) and the segmented and per-channel
reductions on the GPU, each answer against a NumPy reference written here from the documented
semantics (docs/kernels/sort.md "Orders and bit windows", docs/kernels/reduce.md "Segments and
channels"). Skipped, with the reason, without a GPU."""
import numpy as np
import pytest

import gpuk
from producers import DeviceCopy

RNG = np.random.default_rng(11)


# --- a NumPy reference of the sort orders ---------------------------------------------------

def ordered_bits(keys, descending=False, float_order="total", begin_bit=0, end_bit=None):
    """The key's order-preserving unsigned bits, the window of them: what the sort compares."""
    keys = np.asarray(keys)
    width = keys.dtype.itemsize * 8
    ut = np.dtype(f"uint{width}")
    sign = ut.type(1) << ut.type(width - 1)
    b = keys.view(ut).copy()
    if keys.dtype.kind == "f":
        negative = (b & sign) != 0
        b = np.where(negative, ~b, b | sign).astype(ut)
        if float_order == "total":
            b[np.isnan(keys)] = ~ut.type(0)  # every NaN equal, after +inf
    elif keys.dtype.kind == "i":
        b = (b ^ sign).astype(ut)
    if descending:
        b = (~b).astype(ut)
    if keys.dtype.kind == "f" and float_order == "cub":
        b[b == sign - ut.type(1)] = sign  # CUB: -0.0 (ascending) / +0.0 (descending) as the other zero
    end_bit = width if end_bit is None else end_bit
    b = (b >> ut.type(begin_bit)).astype(ut)
    if end_bit - begin_bit < width:
        b &= ut.type((1 << (end_bit - begin_bit)) - 1)
    return b


def reference_order(keys, **options):
    return np.argsort(ordered_bits(keys, **options), kind="stable")


def assert_same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    width = a.dtype.itemsize * 8
    np.testing.assert_array_equal(a.view(f"uint{width}"), b.view(f"uint{width}"))


def special_floats(dtype, n):
    x = RNG.uniform(-4, 4, n).astype(dtype)
    nan = np.array(np.nan, dtype)
    width = np.dtype(dtype).itemsize * 8
    ut = np.dtype(f"uint{width}")
    negative_nan = np.array(nan.view(ut) | (ut.type(1) << ut.type(width - 1)), ut).view(dtype)
    payload_nan = np.array(nan.view(ut) | ut.type(5), ut).view(dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, nan, negative_nan, payload_nan, 1.0, -1.0, 0.0, -0.0], dtype)
    x[RNG.choice(n, specials.size * 20, replace=False)] = np.tile(specials, 20)
    return x


# --- sort options -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("order", ["ascending", "descending"])
@pytest.mark.parametrize("float_order", ["total", "cub"])
def test_float_orders_against_numpy(gpu, dtype, order, float_order):
    x = special_floats(dtype, 20_000)
    perm = reference_order(x, descending=order == "descending", float_order=float_order)
    assert_same_bits(gpuk.sort.keys(x, order=order, float_order=float_order), x[perm])
    np.testing.assert_array_equal(gpuk.sort.argsort(x, order=order, float_order=float_order), perm)
    values = np.arange(x.size, dtype=np.uint32)
    keys, carried = gpuk.sort.pairs(x, values, order=order, float_order=float_order)
    assert_same_bits(keys, x[perm])
    np.testing.assert_array_equal(carried, perm)


@pytest.mark.parametrize("dtype,window", [("uint32", (0, 16)), ("uint32", (8, 20)), ("int32", (4, 32)),
                                          ("float32", (16, 32)), ("int64", (0, 40)), ("uint64", (32, 64)),
                                          ("float64", (3, 61))])
@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_bit_windows_against_numpy(gpu, dtype, window, order):
    if np.dtype(dtype).kind == "f":
        x = special_floats(dtype, 50_000)
    else:
        info = np.iinfo(dtype)
        x = RNG.integers(info.min, info.max, 50_000, dtype=dtype, endpoint=True)
    begin, end = window
    for float_order in (["total", "cub"] if np.dtype(dtype).kind == "f" else ["total"]):
        perm = reference_order(x, descending=order == "descending", float_order=float_order, begin_bit=begin,
                               end_bit=end)
        got = gpuk.sort.argsort(x, order=order, begin_bit=begin, end_bit=end, float_order=float_order)
        np.testing.assert_array_equal(got, perm)
        assert_same_bits(gpuk.sort.keys(x, order=order, begin_bit=begin, end_bit=end, float_order=float_order),
                         x[perm])


def test_in_place_sorts_on_device_arrays(gpu):
    host = RNG.integers(0, 1 << 31, 100_000).astype(np.uint32)
    x = DeviceCopy(host)
    assert gpuk.sort.keys(x.cai(), out=x.cai(), begin_bit=0, end_bit=16) is not None
    perm = reference_order(host, end_bit=16)
    np.testing.assert_array_equal(x.numpy(), host[perm])
    keys, values = DeviceCopy(host), DeviceCopy(np.arange(host.size, dtype=np.uint64))
    gpuk.sort.pairs(keys.dlpack(), values.dlpack(), out=(keys.dlpack(), values.dlpack()), order="descending")
    perm = reference_order(host, descending=True)
    np.testing.assert_array_equal(keys.numpy(), host[perm])
    np.testing.assert_array_equal(values.numpy(), perm.astype(np.uint64))


def test_in_place_on_numpy(gpu):
    x = RNG.standard_normal(5000).astype(np.float32)
    expected = np.sort(x, kind="stable")
    assert gpuk.sort.keys(x, out=x) is x
    np.testing.assert_array_equal(x, expected)


def test_an_out_that_overlaps_the_input_is_refused(gpu):
    x = DeviceCopy(np.arange(2000, dtype=np.uint32))
    from producers import CaiArray
    shifted = CaiArray(x.memory.ptr + 4, np.uint32, (1000,))
    with pytest.raises(gpuk.ConfigError, match="overlap"):
        gpuk.sort.keys(CaiArray(x.memory.ptr, np.uint32, (1000,)), out=shifted)


# --- a NumPy reference of the reductions ----------------------------------------------------

def reference_best(x, op, abs_=False):
    """(value, index) of one non-empty range: the lowest index among equals; a NaN wins, the first."""
    v = x
    if abs_ and x.dtype.kind == "f":
        v = np.abs(x)
    elif abs_ and x.dtype.kind == "i":  # the unsigned magnitude: |INT_MIN| does not overflow
        v = np.array([abs(int(t)) for t in x], f"uint{x.dtype.itemsize * 8}")
    if v.dtype.kind == "f":
        nans = np.flatnonzero(np.isnan(v))
        if nans.size:
            return v[nans[0]], int(nans[0])
    i = int(np.argmax(v) if op in ("argmax", "max") else np.argmin(v))
    return v[i], i


def empty_value(dtype, op):
    dt = np.dtype(dtype)
    info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
    return info.min if op in ("argmax", "max") else info.max


def check_segments(x, begin, end, op, got, abs_=False):
    value_dtype = np.dtype(x.dtype)
    if abs_ and value_dtype.kind == "i":
        value_dtype = np.dtype(f"uint{value_dtype.itemsize * 8}")
    for s, (b, e) in enumerate(zip(begin, end)):
        seg = x[b:e] if e > b else x[:0]
        if op == "sum":
            if seg.size == 0:
                assert got[s] == 0
            elif x.dtype.kind == "f":
                ref = np.sum(np.abs(seg) if abs_ else seg, dtype=np.float64)
                # a NaN in the segment makes the sum NaN (as NumPy's): NaN must answer NaN
                assert got[s] == pytest.approx(ref, rel=1e-9, abs=1e-9 * max(1, seg.size), nan_ok=True)
            else:
                assert int(got[s]) == int(sum(abs(int(v)) if abs_ else int(v) for v in seg))
            continue
        values, indices = got if op in ("argmax", "argmin") else (got, None)
        if seg.size == 0:
            assert values[s] == empty_value(value_dtype, op)
            if indices is not None:
                assert indices[s] == -1
            continue
        value, index = reference_best(seg, op, abs_)
        if np.isnan(value) if value_dtype.kind == "f" else False:
            assert np.isnan(values[s])
        else:
            assert values[s] == value, f"segment {s} [{b}, {e})"
        if indices is not None:
            assert indices[s] == index, f"segment {s} [{b}, {e})"


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint32", "int64"])
@pytest.mark.parametrize("op", ["argmax", "argmin", "max", "min", "sum"])
def test_segmented_on_numpy(gpu, dtype, op):
    lengths = np.concatenate([[0, 1, 5, 0, 4096, 3], RNG.integers(0, 3000, 60), [0, 100_000, 0]])
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n = int(offsets[-1])
    x = (RNG.uniform(-1, 1, n) if np.dtype(dtype).kind == "f" else RNG.integers(0 if dtype[0] == "u" else -50, 50, n))
    x = x.astype(dtype)  # small integers: many ties
    got = getattr(gpuk.reduce, f"segmented_{op}")(x, offsets)
    check_segments(x, offsets[:-1], offsets[1:], op, got)


def test_segmented_nan_ties_abs_and_begin_end(gpu):
    x = np.array([1.0, np.nan, 3.0, np.nan, -5.0, 5.0, 2.0, 2.0, -0.0, 0.0], np.float32)
    begin = np.array([0, 2, 4, 6, 8, 5, 7, 3])  # overlapping, out of order, empty
    end = np.array([4, 4, 6, 8, 10, 5, 3, 10])
    for op in ("argmax", "argmin", "max", "min", "sum"):
        f = getattr(gpuk.reduce, f"segmented_{op}")
        check_segments(x, begin, end, op, f(x, begin=begin, end=end))
        check_segments(x, begin, end, op, f(x, begin=begin, end=end, abs=True), abs_=True)
    best = gpuk.reduce.segmented_argmax(x, begin=begin, end=end)
    assert best.indices.tolist()[:4] == [1, 1, 1, 0]  # NaN first, relative to begin; a tie: the first
    ints = np.array([-7, 7, 3, -2147483648], np.int32)
    best = gpuk.reduce.segmented_argmax(ints, [0, 2, 4], abs=True)
    assert best.values.dtype == np.uint32 and best.values.tolist() == [7, 2147483648] and best.indices.tolist() == [0, 1]


def test_segmented_of_an_empty_input_answers_every_segment(gpu):
    x = np.empty(0, np.float32)
    best = gpuk.reduce.segmented_argmax(x, [0, 0, 0])
    assert best.indices.tolist() == [-1, -1] and best.values.tolist() == [np.finfo(np.float32).min] * 2
    assert gpuk.reduce.segmented_sum(x, [0, 0]).tolist() == [0.0]


@pytest.mark.parametrize("protocol", ["dlpack", "cai"])
def test_segmented_on_device_arrays_and_out(gpu, protocol):
    host = RNG.uniform(-1, 1, 200_000).astype(np.float32)
    offsets = np.array([0, 10, 10, 70_000, 200_000], np.int64)
    x, d_offsets = DeviceCopy(host), DeviceCopy(offsets)
    best = gpuk.reduce.segmented_argmax(getattr(x, protocol)(), getattr(d_offsets, protocol)())
    assert isinstance(best.values, gpuk.DeviceArray)
    check_segments(host, offsets[:-1], offsets[1:], "argmax", (best.values.numpy(), best.indices.numpy()))
    sums = gpuk.reduce.segmented_sum(getattr(x, protocol)(), offsets)  # host offsets uploaded
    check_segments(host, offsets[:-1], offsets[1:], "sum", sums.numpy())
    records = DeviceCopy.empty(np.int64, (4, 2))
    assert gpuk.reduce.segmented_argmin(x.cai(), d_offsets.cai(), out=records.cai()) is not None
    gpuk._gpuk.synchronize(0, 0)
    raw = records.numpy()
    values = raw.view(np.float32).reshape(4, 4)[:, 0]
    check_segments(host, offsets[:-1], offsets[1:], "argmin", (values, raw[:, 1]))
    small = DeviceCopy.empty(np.int64, (7,))
    with pytest.raises(gpuk.ConfigError, match="needs 64 bytes"):
        gpuk.reduce.segmented_argmin(x.cai(), d_offsets.cai(), out=small.cai())


def check_channels(image, channels, op, got, abs_=False):
    planes = np.asarray(image).reshape(-1, channels)
    begin = np.zeros(channels, np.int64)
    for c in range(channels):
        check_segments(np.ascontiguousarray(planes[:, c]), begin[c:c + 1], [planes.shape[0]], op,
                       _pick(got, c, op), abs_)


def _pick(got, c, op):
    if op in ("argmax", "argmin"):
        return (got[0][c:c + 1], got[1][c:c + 1])
    return got[c:c + 1]


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
@pytest.mark.parametrize("op", ["argmax", "argmin", "max", "min", "sum"])
def test_per_channel_on_numpy(gpu, dtype, op):
    shape = (48, 64, 17)
    image = (RNG.uniform(0, 1, shape) if dtype[0] == "f" else RNG.integers(-20, 20, shape)).astype(dtype)
    got = getattr(gpuk.reduce, f"per_channel_{op}")(image)
    check_channels(image, 17, op, got)


def test_per_channel_ties_nan_and_explicit_channels(gpu):
    image = np.zeros((4, 5, 3), np.float32)
    image[1, 2, 0] = np.nan
    image[3, 4, 0] = np.nan
    image[2, 2, 1] = 7
    image[0, 1, 1] = 7
    best = gpuk.reduce.per_channel_argmax(image)
    assert best.indices.tolist() == [7, 1, 0]  # the first NaN; the first of the tie; all equal: 0
    flat = gpuk.reduce.per_channel_argmax(image.reshape(-1), channels=3)
    assert flat.indices.tolist() == best.indices.tolist()
    np.testing.assert_array_equal(np.unravel_index(best.indices[1], image.shape[:-1]), (0, 1))


def test_per_channel_on_a_device_image(gpu):
    host = RNG.uniform(-1, 1, (480, 640, 17)).astype(np.float32)
    image = DeviceCopy(host)
    best = gpuk.reduce.per_channel_argmax(image.dlpack())
    check_channels(host, 17, "argmax", (best.values.numpy(), best.indices.numpy()))
    check_channels(host, 17, "argmax", gpuk.reduce.per_channel_argmax(host, abs=False))


# --- n = 0, as the C++ calls: nothing launched ----------------------------------------------

def test_empty_inputs_answer_as_the_cpp_calls(gpu):
    x = np.empty(0, np.float32)
    keys = gpuk.sort.keys(x)
    assert isinstance(keys, np.ndarray) and keys.shape == (0,) and keys.dtype == np.float32
    k, v = gpuk.sort.pairs(x, np.empty(0, np.uint32))
    assert k.shape == v.shape == (0,)
    assert gpuk.sort.argsort(x).shape == (0,)
    assert tuple(gpuk.reduce.argmax(x)) == (0.0, -1) and gpuk.reduce.argmin(x).index == -1
    assert gpuk.reduce.sum(x) == 0.0 and gpuk.reduce.sum(np.empty(0, np.int32)) == 0
    assert gpuk.search.find(x, 1.0) == -1 and gpuk.search.any(x, 1.0) == -1 and gpuk.search.count(x, 1.0) == 0
    out = DeviceCopy(np.full(2, 7, np.int64))
    gpuk.reduce.max(DeviceCopy(x).cai(), out=out.cai())  # not written
    assert out.numpy().tolist() == [7, 7]
