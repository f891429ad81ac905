// Reading a call's device arrays with the C API (array_call.cpp's first step): from
// __cuda_array_interface__ or DLPack, into fixed slots (no allocation per call). Each reader says
// false where the general path in Python must take over (host arrays, anything to refuse or
// explain).
#pragma once
#include <Python.h>

#include <cstdint>
#include <optional>

#include "dlpack.hpp"
#include "gpuk/dtype.hpp"

namespace gpuk::python {

// The names looked up per call, interned once.
struct Names {
  PyObject* cai = PyUnicode_InternFromString("__cuda_array_interface__");
  PyObject* dlpack = PyUnicode_InternFromString("__dlpack__");
  PyObject* dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
  PyObject* typestr = PyUnicode_InternFromString("typestr");
  PyObject* shape = PyUnicode_InternFromString("shape");
  PyObject* strides = PyUnicode_InternFromString("strides");
  PyObject* data = PyUnicode_InternFromString("data");
  PyObject* stream = PyUnicode_InternFromString("stream");
  PyObject* stream_kwnames = Py_BuildValue("(s)", "stream");
};
const Names& names();

constexpr int kMaxArrays = 16;
constexpr int kMaxDims = 8;  // more: the general path's

// One array of a call, read from its protocol.
struct Arg {
  std::uintptr_t ptr = 0;
  DType dtype = DType::float32;
  std::uint64_t size = 0;  // elements
  std::int64_t shape[kMaxDims] = {};
  int ndim = 0;
  bool readonly = false;
  bool from_cai = false;
  std::optional<std::uintptr_t> producer;  // __cuda_array_interface__'s stream
  DLManagedTensor* dl = nullptr;           // the DLPack tensor, released when the call is done
};

// The call's arrays; the DLPack tensors go back to their producers (the deleter) at the end.
struct Args {
  Arg v[kMaxArrays];
  int count = 0;
  Args() = default;
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;
  ~Args() {
    for (int i = 0; i < count; ++i)
      if (v[i].dl && v[i].dl->deleter) v[i].dl->deleter(v[i].dl);
  }
};

// A device array of this call, or false: the general path's turn.
bool read_array(PyObject* x, int device, std::uintptr_t stream, Arg& a);
// Whether a __cuda_array_interface__ pointer is device memory of GPU `device` (the driver's answer
// remembered for the last few pointers of this thread).
bool on_device(std::uintptr_t ptr, int device);

}  // namespace gpuk::python
