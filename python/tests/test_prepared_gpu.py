"""Prepared handles (gpuk.Engine.prepare_sizes) on the GPU: a sort, a reduction with a host
answer, a segmented argmax and a segmented sort over segment counts up to their max, a per-channel argmax and
caller-owned scratch, on device memory of gpuk's own; each answer against NumPy. Skipped, with
the reason, without a GPU."""
import numpy as np
import pytest

import gpuk
from gpuk import _gpuk

RNG = np.random.default_rng(11)


def upload(engine, host):
    host = np.ascontiguousarray(host)
    memory = _gpuk.DeviceMemory(engine.device, max(1, host.nbytes))
    memory.upload_from(host.ctypes.data, host.nbytes, 0)
    return memory


def download(engine, memory, dtype, count):
    host = np.empty(count, dtype)
    memory.download_to(host.ctypes.data, host.nbytes, 0)
    _gpuk.synchronize(engine.device, 0)
    return host


RECORD = np.dtype({"names": ["value", "index"], "formats": ["float32", "int64"], "offsets": [0, 8], "itemsize": 16})


def test_a_prepared_sort_and_argmax_serve_every_n_up_to_max_n(gpu):
    e = gpu
    max_n = 1 << 18
    x = RNG.uniform(-1, 1, max_n).astype(np.float32)
    d_x, d_out = upload(e, x), _gpuk.DeviceMemory(e.device, x.nbytes)
    sorter = e.prepare_sizes("sort", "sort", "float32", max_n)
    assert sorter.max_n == max_n and len(sorter.variants) == 19 and sorter.scratch_bytes > 0
    amax = e.prepare_sizes("reduce", "argmax", "float32", max_n)
    for n in (max_n, 1, 1000, 77777):
        sorter.launch([d_x.ptr, d_out.ptr], n)
        assert np.array_equal(download(e, d_out, np.float32, n), np.sort(x[:n]))
        best = amax.launch_and_read([d_x.ptr, 0], n)
        assert best.index == int(np.argmax(x[:n])) and best.value == x[best.index]


def test_a_prepared_segmented_argmax_takes_each_calls_segment_count(gpu):
    e = gpu
    max_n, max_segments = 1_000_003, 500
    x = RNG.uniform(-1, 1, max_n).astype(np.float32)
    d_x = upload(e, x)
    d_best = _gpuk.DeviceMemory(e.device, max_segments * 16)
    h = e.prepare_sizes("reduce", "argmax", "float32", max_n, segments=max_segments, scratch="caller")
    assert h.scalar == {"name": "segments", "dtype": "int64", "count": 1} and h.held_bytes == 0
    pool = _gpuk.DeviceMemory(e.device, h.scratch_bytes)
    h.use_scratch(pool.ptr, h.scratch_bytes)
    for segments in (500, 7, 499, 1, 500):
        cuts = np.sort(RNG.integers(0, max_n + 1, segments - 1))
        offsets = np.concatenate([[0], cuts, [max_n]]).astype(np.int64)
        d_off = upload(e, offsets)
        h.launch([d_x.ptr, d_off.ptr, d_off.ptr + 8, d_best.ptr], max_n, value=segments)
        got = download(e, d_best, np.uint8, segments * 16).view(RECORD)
        for s in range(segments):
            b, end = offsets[s], offsets[s + 1]
            want = int(np.argmax(x[b:end])) if end > b else -1
            assert got["index"][s] == want, (segments, s)
    with pytest.raises(gpuk.ConfigError, match="prepared for 1 to 500 segments"):
        h.launch([d_x.ptr, d_off.ptr, d_off.ptr + 8, d_best.ptr], max_n, value=501)
    with pytest.raises(TypeError, match="takes value= \\(the segments, int64\\)"):
        h.launch([d_x.ptr, d_off.ptr, d_off.ptr + 8, d_best.ptr], max_n)


def test_a_prepared_segmented_sort_takes_each_calls_segment_count(gpu):
    e = gpuk.default_engine()
    max_n, max_segments = 30_011, 64
    h = e.prepare_sizes("sort", "segmented_sort", "float32", max_n, segments=max_segments, order="descending")
    assert h.scalar == {"name": "segments", "dtype": "int64", "count": 1}
    assert [a["name"] for a in h.arrays] == ["keys_in", "keys_out", "begin_offsets", "end_offsets"]
    x = RNG.integers(-30, 30, max_n).astype(np.float32)
    d_x, d_out = upload(e, x), _gpuk.DeviceMemory(e.device, max_n * 4)
    for n, segments in ((max_n, 64), (5, 9), (4097, 1), (30_000, 63)):  # (5, 9): more segments than keys
        offsets = np.concatenate(([0], np.sort(RNG.integers(0, n + 1, segments - 1)), [n])).astype(np.int64)
        d_off = upload(e, offsets)
        h.launch([d_x.ptr, d_out.ptr, d_off.ptr, d_off.ptr + 8], n, value=segments)
        got = download(e, d_out, np.float32, n)
        for b, end in zip(offsets[:-1], offsets[1:]):
            want = x[b:end][np.argsort(-x[b:end], kind="stable")]
            np.testing.assert_array_equal(got[b:end], want, err_msg=f"n={n} segments={segments} [{b}, {end})")
    with pytest.raises(gpuk.ConfigError, match="prepared for 1 to 64 segments"):
        h.launch([d_x.ptr, d_out.ptr, d_off.ptr, d_off.ptr + 8], 100, value=65)


def test_a_prepared_per_channel_argmax_with_step_channels(gpu):
    e = gpu
    channels, max_pixels = 17, 480 * 640
    image = RNG.uniform(-1, 1, (max_pixels, channels)).astype(np.float32)
    d_x = upload(e, image)
    d_best = _gpuk.DeviceMemory(e.device, channels * 16)
    h = e.prepare_sizes("reduce", "argmax", "float32", max_pixels * channels, step=channels, channels=channels)
    for pixels in (max_pixels, 1, 1000):
        h.launch([d_x.ptr, d_best.ptr], pixels * channels)
        got = download(e, d_best, np.uint8, channels * 16).view(RECORD)
        assert np.array_equal(got["index"], np.argmax(image[:pixels], axis=0))
        answers = h.launch_and_read([d_x.ptr, 0], pixels * channels)  # one Best per channel, waited for
        assert [a.index for a in answers] == list(np.argmax(image[:pixels], axis=0))
