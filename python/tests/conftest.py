"""Shared fixtures: the repository's configs, and whether a GPU is here (GPU tests skip with the
reason when not)."""
import functools
from pathlib import Path

import pytest

import gpuk

REPO = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def no_gpu_reason():
    try:
        gpuk.device_info()
        return None
    except gpuk.NoDeviceError as e:
        return f"no GPU: {e}"


@pytest.fixture
def gpu():
    reason = no_gpu_reason()
    if reason:
        pytest.skip(reason)
    return gpuk.default_engine()


@pytest.fixture
def repo():
    return REPO
