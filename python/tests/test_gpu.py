"""Every family on the GPU, on NumPy arrays and on device arrays handed over through DLPack and
__cuda_array_interface__ (the producers of producers.py); each answer against NumPy. Skipped,
with the reason, without a GPU."""
import numpy as np
import pytest

import gpuk
from producers import DeviceCopy

RNG = np.random.default_rng(7)


def data(dtype, n, low=-1000, high=1000):
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(-1, 1, n).astype(dtype)
    if np.dtype(dtype).kind == "u":
        low = 0
    return RNG.integers(low, high, n).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint32", "int64"])
@pytest.mark.parametrize("n", [1, 250_000])
def test_reduce_on_numpy(gpu, dtype, n):
    x = data(dtype, n)
    best = gpuk.reduce.argmax(x)
    assert best.index == int(np.argmax(x)) and best.value == x[best.index]
    low = gpuk.reduce.argmin(x)
    assert low.index == int(np.argmin(x)) and low.value == x[low.index]
    assert gpuk.reduce.max(x) == x.max() and gpuk.reduce.min(x) == x.min()
    total = gpuk.reduce.sum(x)
    if x.dtype.kind == "f":
        assert total == pytest.approx(float(np.sum(x, dtype=np.float64)), rel=1e-9, abs=1e-9)
    else:
        assert total == int(np.sum(x, dtype=np.int64 if x.dtype.kind == "i" else np.uint64))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint32", "int64"])
@pytest.mark.parametrize("n", [1, 250_001])
def test_argminmax_is_argmin_and_argmax_from_one_pass(gpu, dtype, n):
    x = data(dtype, n, -20, 20)  # ties
    both = gpuk.reduce.argminmax(x)
    assert (both.min_index, both.max_index) == (int(np.argmin(x)), int(np.argmax(x)))
    assert both.min == x.min() and both.max == x.max()
    assert tuple(gpuk.reduce.argmin(x)) == (both.min, both.min_index)
    assert tuple(gpuk.reduce.argmax(x)) == (both.max, both.max_index)
    y = np.array([1.0, -0.0, np.nan, 4.0, np.nan], np.float32)  # a NaN is both, at the first NaN
    both = gpuk.reduce.argminmax(y)
    assert (both.min_index, both.max_index) == (2, 2) and np.isnan(both.min) and np.isnan(both.max)
    assert tuple(gpuk.reduce.argminmax(np.array([-2, 7, 5], np.int32), abs=True)) == (2, 0, 7, 1)
    assert tuple(gpuk.reduce.argminmax(np.zeros(0, np.float32))) == (0, -1, 0, -1)


def test_reduce_abs_and_ties_and_nan(gpu):
    x = np.array([0.5, -3.0, 3.0, 1.0], np.float32)
    assert tuple(gpuk.reduce.argmax(x, abs=True)) == (3.0, 1)  # |-3| = |3|: the first
    y = np.array([1.0, np.nan, 2.0, np.nan], np.float32)
    assert gpuk.reduce.argmax(y).index == 1  # a NaN wins, the first one


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "float32", "float64"])
def test_search_on_numpy(gpu, dtype):
    x = RNG.permutation(100_000).astype(dtype)
    v = x[12345]
    assert gpuk.search.find(x, v) == 12345
    assert gpuk.search.find(x, value=v) == 12345
    assert gpuk.search.count(x, v) == 1
    assert x[gpuk.search.any(x, v)] == v
    assert gpuk.search.find(x, 100_001) == -1
    few = np.array([3, 1, 3, 3, 2], dtype)
    assert gpuk.search.count(few, 3) == 3 and gpuk.search.find(few, 3) == 0


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "float32", "float64"])
def test_find_if_on_numpy(gpu, dtype):
    x = np.arange(100_001).astype(dtype)  # ascending: the first x >= v is at v
    assert gpuk.search.find_if(x, ">=", x[777]) == 777
    assert gpuk.search.find_if(x, "ge", x[777]) == 777
    assert gpuk.search.find_if(x, ">", x[-1]) == -1
    assert gpuk.search.find_if(x, "<=", x[0]) == 0
    assert gpuk.search.find_if(x, "<", x[0]) == -1
    assert gpuk.search.find_if(x, "!=", x[0]) == 1
    assert gpuk.search.find_if(x, "==", x[100_000]) == 100_000
    assert gpuk.search.find_if(x, value=x[5], compare=">") == 6
    assert gpuk.search.find_if(x[:0], "<", x[0]) == -1  # empty: nothing launched


def _ordered(x):
    """The bounds' order (the sort family's): -0.0 before +0.0, every NaN equal and last."""
    if x.dtype.kind != "f":
        return x
    signed = np.int32 if x.itemsize == 4 else np.int64
    bits = x.view(signed).astype(np.int64)
    magnitude = bits & np.int64(np.iinfo(signed).max)
    key = np.where(bits < 0, -magnitude - 1, magnitude)
    return np.where(np.isnan(x), np.iinfo(np.int64).max, key)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "float32", "float64"])
@pytest.mark.parametrize("sorted_needles", [False, True])
def test_lower_and_upper_bound_on_numpy(gpu, dtype, sorted_needles):
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 50, 100_003).astype(dtype)
    q = rng.integers(-3, 55, 4097).astype(dtype)
    if dtype.startswith("float"):
        keys[:7] = [np.nan, -0.0, 0.0, -np.inf, np.inf, np.nan, -0.0]
        q[:5] = [np.nan, -0.0, 0.0, -np.inf, np.inf]
    keys = keys[np.argsort(_ordered(keys), kind="stable")]
    if sorted_needles:
        q = q[np.argsort(_ordered(q), kind="stable")]
    ok, oq = _ordered(keys), _ordered(q)
    assert (gpuk.search.lower_bound(keys, q, sorted=sorted_needles) == np.searchsorted(ok, oq, "left")).all()
    assert (gpuk.search.upper_bound(keys, q, sorted=sorted_needles) == np.searchsorted(ok, oq, "right")).all()
    assert gpuk.search.lower_bound(keys, q[:0]).shape == (0,)  # no needles: nothing launched
    assert (gpuk.search.upper_bound(keys[:0], q) == 0).all()  # no keys: every bound is 0


def test_find_if_nan_and_signed_zero(gpu):
    y = np.array([np.nan, 2.0, -0.0, np.nan, 0.0, -1.0], np.float32)
    assert gpuk.search.find_if(y, "<", 0.0) == 5  # NaN < 0 and -0.0 < 0 are false
    assert gpuk.search.find_if(y, "<=", 0.0) == 2
    assert gpuk.search.find_if(y, "!=", 2.0) == 0  # NaN != 2 is true
    assert gpuk.search.find_if(y, "!=", np.nan) == 0
    for op in ("==", "<", "<=", ">", ">="):
        assert gpuk.search.find_if(y, op, np.nan) == -1


@pytest.mark.parametrize("dtype", ["uint32", "int32", "float32", "int64", "float64"])
@pytest.mark.parametrize("n", [4096, 100_000])
def test_sort_on_numpy(gpu, dtype, n):
    x = data(dtype, n)
    np.testing.assert_array_equal(gpuk.sort.keys(x), np.sort(x, kind="stable"))
    np.testing.assert_array_equal(gpuk.sort.keys(x, order="descending"), np.sort(x, kind="stable")[::-1])
    np.testing.assert_array_equal(gpuk.sort.argsort(x), np.argsort(x, kind="stable").astype(np.uint32))
    values = np.arange(n, dtype=np.uint32)
    keys, carried = gpuk.sort.pairs(x, values)
    order = np.argsort(x, kind="stable")
    np.testing.assert_array_equal(keys, x[order])
    np.testing.assert_array_equal(carried, values[order])


def test_sort_pairs_with_uint64_values_and_out(gpu):
    x = data("uint32", 5000)
    values = RNG.integers(0, 1 << 60, 5000).astype(np.uint64)
    keys_out, values_out = np.empty_like(x), np.empty_like(values)
    result = gpuk.sort.pairs(x, values, out=(keys_out, values_out))
    assert result[0] is keys_out and result[1] is values_out
    order = np.argsort(x, kind="stable")
    np.testing.assert_array_equal(values_out, values[order])


@pytest.mark.parametrize("protocol", ["dlpack", "cai"])
def test_every_family_on_device_arrays(gpu, protocol):
    host = data("float32", 250_000)
    x = DeviceCopy(host)
    arr = getattr(x, protocol)
    best = gpuk.reduce.argmax(arr())
    assert best.index == int(np.argmax(host))
    assert gpuk.reduce.sum(arr()) == pytest.approx(float(host.astype(np.float64).sum()), rel=1e-9)
    assert gpuk.search.find(arr(), host[4321]) == 4321
    out = DeviceCopy.empty(np.float32, host.shape)
    result = gpuk.sort.keys(arr(), out=getattr(out, protocol)(), order="descending")
    gpuk._gpuk.synchronize(0, 0)
    np.testing.assert_array_equal(out.numpy(), np.sort(host)[::-1])
    new = gpuk.sort.keys(arr())  # a result array of gpuk's own
    assert isinstance(new, gpuk.DeviceArray)
    np.testing.assert_array_equal(new.numpy(), np.sort(host))


def test_reduce_into_a_device_array_on_a_stream_waits_for_nothing(gpu):
    host = data("int32", 100_000)
    x = DeviceCopy(host)
    best = DeviceCopy.empty(np.int64, (2,))  # {int32 value; int64 index at byte 8}: 16 bytes
    assert gpuk.reduce.argmax(x.cai(), out=best.cai()) is not None
    gpuk._gpuk.synchronize(0, 0)
    assert best.numpy()[1] == int(np.argmax(host))
    small = DeviceCopy.empty(np.int32, (2,))
    with pytest.raises(gpuk.ConfigError, match="needs 16 bytes"):
        gpuk.reduce.argmax(x.cai(), out=small.cai())


def test_a_read_only_out_and_a_wrong_sized_out_are_refused(gpu):
    x = DeviceCopy(data("float32", 1000))
    ro = DeviceCopy.empty(np.float32, (1000,))
    from producers import CaiArray
    with pytest.raises(gpuk.ConfigError, match="read-only"):
        gpuk.sort.keys(x.cai(), out=CaiArray(ro.memory.ptr, np.float32, (1000,), readonly=True))
    with pytest.raises(gpuk.ConfigError, match="elements"):
        gpuk.sort.keys(x.cai(), out=DeviceCopy.empty(np.float32, (999,)).cai())
    with pytest.raises(gpuk.ConfigError, match="must be float32"):
        gpuk.sort.keys(x.cai(), out=DeviceCopy.empty(np.int32, (1000,)).cai())


def test_a_host_pointer_through_cai_is_refused(gpu):
    from producers import CaiArray
    host = np.zeros(100, np.float32)
    with pytest.raises(gpuk.ConfigError, match="not CUDA device memory"):
        gpuk.reduce.argmax(CaiArray(host.ctypes.data, np.float32, (100,)))


def test_prepare_says_what_was_chosen_and_launches_on_pointers(gpu):
    host = data("float32", 250_000)
    x = DeviceCopy(host)
    op = gpu.prepare("reduce", "argmax", "float32", host.size)
    assert op.variant and op.chosen and op.min_n <= host.size <= op.max_n
    assert [a["name"] for a in op.arrays] == ["input", "result"]
    out = DeviceCopy.empty(np.int64, (2,))
    op.launch([x.memory.ptr, out.memory.ptr], host.size, 0)
    gpuk._gpuk.synchronize(0, 0)
    assert out.numpy()[1] == int(np.argmax(host))
    assert op(x.cai()).index == int(np.argmax(host))
    named = gpu.prepare("reduce", "argmax", "float32", host.size, kernel="onepass", params={"BLOCK": 512})
    assert "BLOCK=512" in named.variant and "named" in named.chosen


def test_run_takes_an_array_as_the_workload_and_returns_the_json_report(gpu, repo):
    host = data("float32", 10_000)
    report = gpuk.run(repo / "configs" / "argmax.yaml", input=host, repeats=5)
    assert report["verification"]["passed"]
    assert report["result"]["index"] == str(int(np.argmax(np.abs(host))))


def test_run_and_compare_return_their_reports(gpu, repo, tmp_path):
    import json
    a = gpuk.run(repo / "configs" / "sort_small.yaml", repeats=20)
    b = gpuk.run(repo / "configs" / "sort_small.yaml", repeats=20)
    (tmp_path / "a.json").write_text(json.dumps({k: v for k, v in a.items() if k != "text"}))
    (tmp_path / "b.json").write_text(json.dumps({k: v for k, v in b.items() if k != "text"}))
    c = gpuk.compare(tmp_path / "a.json", tmp_path / "b.json", threshold=1000)
    assert c["kind"] == "run" and c["rows"] and not c["slower"]
    assert all(r["verdict"] in ("same", "faster", "slower") for r in c["rows"] if r["a_ms"] and r["b_ms"])


@pytest.mark.parametrize("first", ["numpy", "torch", "cupy", "jax"])
def test_a_framework_imported_first_in_a_fresh_process(gpu, first):
    # Each of these loads the system libstdc++ before gpuk does; a gpuk built by a toolchain that
    # links libstdc++.a and exported it crashed here in its first ostringstream.
    import importlib.util
    import subprocess
    import sys
    if importlib.util.find_spec(first) is None:
        pytest.skip(f"{first} is not installed")
    code = (f"import {first}, numpy as np, gpuk\n"
            "x = np.random.default_rng(0).standard_normal(250_000).astype(np.float32)\n"
            "assert gpuk.reduce.argmax(x).index == int(np.argmax(x))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def topk_reference(x, k, largest, is_sorted):
    """The first k of each row's stable sort (descending for the largest), ties by the lower index."""
    chosen = []
    for row in x.reshape(-1, x.shape[-1]):
        key = row.astype(np.float64)  # exact for the test's data
        order = np.lexsort((np.arange(row.size), -key if largest else key))[:k]
        chosen.append(order if is_sorted else np.sort(order))
    idx = np.array(chosen).reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, idx, axis=-1), idx.astype(np.int64)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "int64"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("is_sorted", [True, False])
def test_topk_on_numpy(gpu, dtype, largest, is_sorted):
    x = data(dtype, 3 * 10_007).reshape(3, 10_007)
    for k in (1, 8, 300):
        values, indices = gpuk.sort.topk(x, k, largest=largest, sorted=is_sorted)
        want_values, want_indices = topk_reference(x, k, largest, is_sorted)
        assert values.shape == (3, k) and indices.shape == (3, k) and indices.dtype == np.int64
        np.testing.assert_array_equal(indices, want_indices)
        np.testing.assert_array_equal(values, want_values)


def segmented_reference(x, begin, end, descending, values=None):
    """Each segment's stable sort in the sort family's order (-0.0 before +0.0, NaNs equal and last;
    descending: NaNs first, equal keys in input order); keys in no segment as they are."""
    keys, carried = x.copy(), None if values is None else values.copy()
    for b, e in zip(begin, end):
        if e <= b:
            continue
        key = _ordered(x[b:e]).astype(np.int64)
        order = np.lexsort((np.arange(e - b), -key if descending else key))
        keys[b:e] = x[b:e][order]
        if values is not None:
            carried[b:e] = values[b:e][order]
    return keys, carried


def _bits(x):
    return x.view(f"u{x.itemsize}")  # bit for bit: NaN payloads and signs, -0.0


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "int64", "float64"])
def test_segmented_sort_on_numpy(gpu, dtype):
    n = 50_021  # a prime: no multiple of a warp, a tile or anything else
    x = data(dtype, n, low=-50, high=50)  # many ties
    if dtype.startswith("float"):
        x[::97], x[1::101], x[2::103], x[3::89] = np.nan, -0.0, 0.0, np.copysign(np.nan, -1)
    lengths = [0, 1, 31, 32, 33, 0, 4095, 4096, 4097, 9000, 2]
    offsets = np.concatenate(([0], np.cumsum(lengths), [n])).astype(np.int64)  # the last segment: the rest
    for descending in (False, True):
        order = "descending" if descending else "ascending"
        want, _ = segmented_reference(x, offsets[:-1], offsets[1:], descending)
        np.testing.assert_array_equal(_bits(gpuk.sort.segmented_sort(x, offsets, order=order)), _bits(want))
    values = RNG.integers(0, 1 << 60, n).astype(np.uint64)
    want, want_values = segmented_reference(x, offsets[:-1], offsets[1:], True, values)
    keys, carried = gpuk.sort.segmented_sort_pairs(x, values, offsets, order="descending")
    np.testing.assert_array_equal(_bits(keys), _bits(want))
    np.testing.assert_array_equal(carried, want_values)


def test_segmented_sort_shuffled_segments_with_gaps_and_device_arrays(gpu):
    n = 20_011
    x = data("float32", n)
    x[::31] = np.nan
    begin = np.array([9000, 0, 40, 7, 5000, 300], np.int64)  # [7, 3): empty; keys in no segment stay
    end = np.array([20_000, 33, 4137, 3, 5001, 300], np.int64)
    want, want_values = segmented_reference(x, begin, end, False, np.arange(n, dtype=np.float32))
    got, carried = gpuk.sort.segmented_sort(x, begin=begin, end=end, values=np.arange(n, dtype=np.float32))
    np.testing.assert_array_equal(_bits(got), _bits(want))  # NumPy in: keys in no segment as they went in
    np.testing.assert_array_equal(carried, want_values)
    # On the GPU: device keys and offsets, into out= (keys in no segment keep what out held).
    keys, b, e = DeviceCopy(x), DeviceCopy(begin), DeviceCopy(end)
    out = DeviceCopy(np.full(n, -7, np.float32))
    assert gpuk.sort.segmented_sort(keys.cai(), begin=b.cai(), end=e.cai(), out=out.dlpack(), order="descending") \
        is not None
    want_desc, _ = segmented_reference(x, begin, end, True)
    covered = np.zeros(n, bool)
    for s0, s1 in zip(begin, end):
        covered[s0:max(s0, s1)] = True
    got = out.numpy()
    np.testing.assert_array_equal(_bits(got[covered]), _bits(want_desc[covered]))
    assert (got[~covered] == -7).all()
    # One offsets array on the GPU covering everything, into a new gpuk.DeviceArray.
    offsets = DeviceCopy(np.array([0, 1, 1, 5000, n], np.int64))
    new = gpuk.sort.segmented_sort(keys.dlpack(), offsets.cai())
    assert isinstance(new, gpuk.DeviceArray)
    want, _ = segmented_reference(x, [0, 1, 1, 5000], [1, 1, 5000, n], False)
    np.testing.assert_array_equal(_bits(new.numpy()), _bits(want))
