"""Minimal array producers the tests build: what a framework hands gpuk, with nothing else.

CaiArray speaks __cuda_array_interface__ (version 3), DLPackArray speaks __dlpack__ with a real
DLPack capsule made with ctypes. Both describe whatever pointer, dtype, shape, strides and device
they are given, so that the argument checks can be tested on a machine without a GPU (the
pointer is never touched there), and on a GPU they wrap device memory the tests upload.
"""
import ctypes

import numpy as np


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

_DL_CODES = {"i": 0, "u": 1, "f": 2, "b": 6, "c": 5}


class DLPackArray:
    """An array that only speaks DLPack. `strides` in elements (None: C order)."""

    deleted = 0  # how many capsules the consumer has released

    def __init__(self, ptr, dtype, shape, strides=None, device=(2, 0)):
        self.ptr, self.dtype, self.shape, self.strides, self.device = ptr, np.dtype(dtype), tuple(shape), strides, device
        self.streams = []  # the stream= of each __dlpack__ call

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, **kwargs):
        self.streams.append(stream)
        ndim = len(self.shape)
        self._shape = (ctypes.c_int64 * max(1, ndim))(*self.shape)
        self._strides = (ctypes.c_int64 * max(1, ndim))(*self.strides) if self.strides is not None else None
        self._deleter = DELETER(self._delete)
        t = DLManagedTensor()
        t.dl_tensor.data = self.ptr
        t.dl_tensor.device = DLDevice(*self.device)
        t.dl_tensor.ndim = ndim
        t.dl_tensor.dtype = DLDataType(_DL_CODES[self.dtype.kind], self.dtype.itemsize * 8, 1)
        t.dl_tensor.shape = self._shape
        t.dl_tensor.strides = self._strides
        t.dl_tensor.byte_offset = 0
        t.manager_ctx = None
        t.deleter = self._deleter
        self._managed = t  # alive as long as this producer
        return _capsule_new(ctypes.addressof(t), b"dltensor", None)

    def _delete(self, _):
        DLPackArray.deleted += 1


class CaiArray:
    """An array that only speaks __cuda_array_interface__. `strides` in bytes (None: C order)."""

    def __init__(self, ptr, dtype, shape, strides=None, readonly=False, stream=None):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": np.dtype(dtype).str,
                                         "data": (ptr, readonly), "strides": strides, "version": 3,
                                         "stream": stream}


class DeviceCopy:
    """A NumPy array uploaded to the GPU (gpuk's own device memory), seen through either protocol."""

    def __init__(self, host, device=0):
        import gpuk
        self.host = np.ascontiguousarray(host)
        self.memory = gpuk._gpuk.DeviceMemory(device, max(1, self.host.nbytes))
        self.memory.upload_from(self.host.ctypes.data, self.host.nbytes, 0)
        gpuk._gpuk.synchronize(device, 0)
        self.device = device

    @classmethod
    def empty(cls, dtype, shape, device=0):
        return cls(np.zeros(shape, dtype), device)

    def cai(self):
        return CaiArray(self.memory.ptr, self.host.dtype, self.host.shape)

    def dlpack(self):
        return DLPackArray(self.memory.ptr, self.host.dtype, self.host.shape, device=(2, self.device))

    def numpy(self):
        import gpuk
        out = np.empty_like(self.host)
        gpuk._gpuk.copy_to_host(self.device, self.memory.ptr, out.ctypes.data, out.nbytes, 0)
        return out
