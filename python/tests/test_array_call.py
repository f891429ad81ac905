"""The array path's one call into C++ (_gpuk.Dispatch, Operation.call_arrays) without a GPU: what
it reads of either protocol, and that a DLPack tensor it took is given back to its producer when
it hands the call to the general path. The launches themselves: test_prepared_gpu.py."""
import sys

import numpy as np

import gpuk
from gpuk import _gpuk
from producers import CaiArray, DLPackArray

FAKE_POINTER = 0x7F0000000000


def test_a_dispatch_with_nothing_prepared_hands_the_call_back_and_releases_the_dlpack_tensor():
    dispatch = _gpuk.Dispatch(0)
    assert len(dispatch) == 0
    x = DLPackArray(FAKE_POINTER, np.float32, (100,))
    before = DLPackArray.deleted
    assert dispatch.call((x,), None, 5) is NotImplemented
    assert x.streams == [5] and DLPackArray.deleted == before + 1  # consumed once, given back once
    assert dispatch.call((x,), None, 0) is NotImplemented
    assert x.streams == [5, 1]  # DLPack's legacy default stream is 1 (0 is not allowed)
    for arg in (CaiArray(FAKE_POINTER, np.float32, (100,)), CaiArray(FAKE_POINTER, ">f4", (100,)),
                np.zeros(4, np.float32), [1.0, 2.0], object()):
        assert dispatch.call((arg,), None, 0) is NotImplemented
    assert dispatch.call((), None, 0) is NotImplemented


def test_a_dlpack_array_on_the_cpu_or_another_gpu_is_not_consumed():
    dispatch = _gpuk.Dispatch(0)
    for device in ((1, 0), (2, 1)):
        x = DLPackArray(FAKE_POINTER, np.float32, (100,), device=device)
        assert dispatch.call((x,), None, 0) is NotImplemented
        assert x.streams == []  # __dlpack__ not called: the general path says what is wrong


def test_a_capsule_keeps_its_owner_until_the_consumer_or_the_capsule_lets_go():
    owner = object()
    base = sys.getrefcount(owner)
    capsule = _gpuk.dlpack_capsule(FAKE_POINTER, 2, 32, [3, 4], 2, 0, owner)
    assert sys.getrefcount(owner) == base + 1
    del capsule  # nobody consumed it: the capsule frees the tensor
    assert sys.getrefcount(owner) == base

    class Producer:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None):
            return _gpuk.dlpack_capsule(FAKE_POINTER, 2, 32, [3, 4], 2, 0, owner)

    assert _gpuk.Dispatch(0).call((Producer(),), None, 0) is NotImplemented  # consumed, then released
    assert sys.getrefcount(owner) == base
    view = _gpuk.DLPackView(Producer().__dlpack__())  # the general path's reader sees the same tensor
    assert view.ptr == FAKE_POINTER and view.shape == [3, 4] and view.dtype == (2, 32, 1) and view.device == (2, 0)
    del view
    assert sys.getrefcount(owner) == base
