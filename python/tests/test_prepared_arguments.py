"""Prepared handles (gpuk.Engine.prepare_sizes, gpuk::PreparedSizes) without a GPU: what is
checked before the GPU (test_prepared_gpu.py runs them on one)."""
import pytest

import gpuk


def test_a_handle_of_max_n_0_prepares_nothing_and_serves_n_0_only():
    e = gpuk.Engine()
    h = e.prepare_sizes("sort", "sort_pairs", "float32", 0, scratch="caller")
    assert h.max_n == 0 and h.step == 1 and h.variants == [] and h.arrays is None
    assert h.scratch_bytes == 0 and h.held_bytes == 0
    h.use_scratch(0, 0)  # serves n = 0 only: needs none
    h.launch([1, 2, 3, 4], 0)  # nothing
    with pytest.raises(gpuk.ConfigError, match="prepared for n up to 0; n = 5 needs a handle prepared for it"):
        h.launch([1, 2, 3, 4], 5)
    assert e.prepare_sizes("reduce", "argmax", "float32", 0).launch_and_read([1, 0], 0) is None


def test_the_spec_is_checked_before_the_gpu_with_the_configs_words():
    e = gpuk.Engine()
    with pytest.raises(gpuk.ConfigError, match="has no operation 'argmx'"):
        e.prepare_sizes("reduce", "argmx", "float32", 1000)
    with pytest.raises(gpuk.ConfigError, match="channels must be between 1 and 1024, not 0"):
        e.prepare_sizes("reduce", "argmax", "float32", 1000, channels=0)
    with pytest.raises(gpuk.ConfigError, match="not a multiple of channels: 17"):
        e.prepare_sizes("reduce", "argmax", "float32", 1700, channels=17)  # step must be the channels
    with pytest.raises(gpuk.ConfigError, match="step must be at least 1, not 0"):
        e.prepare_sizes("reduce", "argmax", "float32", 1000, step=0)
    with pytest.raises(gpuk.ConfigError, match="scratch='mine': 'owned' or 'caller'"):
        e.prepare_sizes("reduce", "argmax", "float32", 1000, scratch="mine")
    with pytest.raises(gpuk.ConfigError, match="max_n=-1: a count"):
        e.prepare_sizes("reduce", "argmax", "float32", -1)


def test_a_step_above_max_n_prepares_nothing_and_refuses_other_sizes():
    e = gpuk.Engine()
    h = e.prepare_sizes("reduce", "argmax", "float32", 16, step=17, channels=17)
    assert h.step == 17 and h.variants == []
    with pytest.raises(gpuk.ConfigError, match="prepared for n up to 16; n = 17"):
        h.launch([1, 2], 17)


def test_without_a_gpu_a_valid_handle_fails_with_the_one_sentence():
    try:
        gpuk.device_info()
    except gpuk.NoDeviceError:
        with pytest.raises(gpuk.NoDeviceError):
            gpuk.Engine().prepare_sizes("reduce", "argmax", "float32", 1 << 20, segments=1000)
        return
    pytest.skip("a GPU is here: test_prepared_gpu.py runs the handles")
