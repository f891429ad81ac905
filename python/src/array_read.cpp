// Reading a call's device arrays with the C API (array_read.hpp).
#include "array_read.hpp"

#include <cstring>
#include <optional>
#include <string_view>

#include "cuda_memory.hpp"

namespace gpuk::python {

const Names& names() {
  static const Names* n = new Names();  // never freed: lives as long as the module
  return *n;
}

namespace {

std::optional<DType> dtype_of_typestr(PyObject* typestr) {
  if (!typestr || !PyUnicode_Check(typestr)) return std::nullopt;
  Py_ssize_t len = 0;
  const char* s = PyUnicode_AsUTF8AndSize(typestr, &len);
  if (!s) {
    PyErr_Clear();
    return std::nullopt;
  }
  // Little-endian only ('<', or '=' on this little-endian machine): '>f4' is the general path's
  // to refuse.
  if (len != 3 || (s[0] != '<' && s[0] != '=')) return std::nullopt;
  const bool four = s[2] == '4', eight = s[2] == '8';
  if (!four && !eight) return std::nullopt;
  switch (s[1]) {
    case 'f': return four ? DType::float32 : DType::float64;
    case 'i': return four ? DType::int32 : DType::int64;
    case 'u': return four ? DType::uint32 : DType::uint64;
    default: return std::nullopt;
  }
}

std::optional<long long> int_of(PyObject* o) {
  if (!o || !PyLong_Check(o)) return std::nullopt;
  const long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  return v;
}

// The element count of a shape tuple, its extents into a.shape; nullopt for anything else (an
// overflow, more than kMaxDims dimensions).
std::optional<std::uint64_t> size_of_shape(PyObject* shape, Arg& a) {
  if (!shape || !PyTuple_Check(shape)) return std::nullopt;
  const Py_ssize_t ndim = PyTuple_Size(shape);
  if (ndim > kMaxDims) return std::nullopt;
  std::uint64_t size = 1;
  for (Py_ssize_t i = 0; i < ndim; ++i) {
    const auto e = int_of(PyTuple_GetItem(shape, i));
    if (!e || *e < 0) return std::nullopt;
    if (__builtin_mul_overflow(size, static_cast<std::uint64_t>(*e), &size)) return std::nullopt;
    a.shape[i] = *e;
  }
  a.ndim = static_cast<int>(ndim);
  return size;
}

// C order: strides (in units of `unit`) are those of a dense row-major array of `extents`.
template <class Stride>
bool c_contiguous(const std::int64_t* extents, int ndim, Stride stride_at, long long unit) {
  long long expected = unit;
  for (int k = ndim; k-- > 0;) {
    if (extents[k] != 1 && stride_at(k) != expected) return false;
    expected *= extents[k];
  }
  return true;
}

// __cuda_array_interface__ (v2/v3). False: not one the fast path takes as it is.
bool read_cai(PyObject* cai, Arg& a) {
  if (!PyDict_Check(cai)) return false;
  const Names& n = names();
  const auto dtype = dtype_of_typestr(PyDict_GetItem(cai, n.typestr));
  if (!dtype) return false;
  PyObject* strides = PyDict_GetItem(cai, n.strides);
  const auto size = size_of_shape(PyDict_GetItem(cai, n.shape), a);
  if (!size || *size == 0) return false;
  if (strides && strides != Py_None) {
    if (!PyTuple_Check(strides) || PyTuple_Size(strides) != a.ndim) return false;
    bool ok = true;
    const bool dense = c_contiguous(
        a.shape, a.ndim,
        [&](int k) {
          const auto s = int_of(PyTuple_GetItem(strides, static_cast<Py_ssize_t>(k)));
          ok = ok && s.has_value();
          return s.value_or(0);
        },
        static_cast<long long>(dtype_size(*dtype)));
    if (!ok || !dense) return false;
  }
  PyObject* data = PyDict_GetItem(cai, n.data);
  if (!data || !PyTuple_Check(data) || PyTuple_Size(data) != 2) return false;
  PyObject* ptr = PyTuple_GetItem(data, 0);
  if (!ptr || !PyLong_Check(ptr)) return false;
  a.ptr = static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(ptr));
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  const int readonly = PyObject_IsTrue(PyTuple_GetItem(data, 1));
  if (readonly < 0) {
    PyErr_Clear();
    return false;
  }
  PyObject* stream = PyDict_GetItem(cai, n.stream);
  if (stream && stream != Py_None) {
    const auto s = int_of(stream);
    if (!s || *s <= 0) return false;  // 0 is not allowed by the protocol: the general path says so
    a.producer = static_cast<std::uintptr_t>(*s);
  }
  a.dtype = *dtype;
  a.size = *size;
  a.readonly = readonly != 0;
  a.from_cai = true;
  return true;
}

std::optional<DType> dtype_of_dlpack(const DLDataType& t) {
  if (t.lanes != 1 || (t.bits != 32 && t.bits != 64)) return std::nullopt;
  const bool four = t.bits == 32;
  switch (t.code) {
    case 0: return four ? DType::int32 : DType::int64;
    case 1: return four ? DType::uint32 : DType::uint64;
    case 2: return four ? DType::float32 : DType::float64;
    default: return std::nullopt;
  }
}

constexpr int kDLCUDA = 2, kDLCUDAManaged = 13;

// The stream= handed to __dlpack__, as a Python int: the last one of this thread is kept, so a
// loop on one stream makes no int per call. A borrowed reference; null with an error set.
PyObject* stream_object(std::uintptr_t stream) {
  struct Last {
    std::uintptr_t value = 0;
    PyObject* object = nullptr;  // owned; never freed at thread exit (an int)
  };
  thread_local Last last;
  if (last.object && last.value == stream) return last.object;
  PyObject* o = PyLong_FromUnsignedLongLong(stream);
  if (!o) return nullptr;
  Py_XDECREF(last.object);
  last = Last{stream, o};
  return o;
}

// DLPack: __dlpack_device__, then __dlpack__(stream=...) (the producer orders its work before
// `stream`). False: not one the fast path takes; nothing is kept.
bool read_dlpack(PyObject* x, int device, std::uintptr_t stream, Arg& a) {
  const Names& n = names();
  // args[-1] is free for the call to use (PY_VECTORCALL_ARGUMENTS_OFFSET).
  PyObject* self[2] = {nullptr, x};
  PyObject* where = PyObject_VectorcallMethod(n.dlpack_device, self + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  if (!where) {
    PyErr_Clear();
    return false;
  }
  std::optional<long long> kind, ordinal;
  if (PyTuple_Check(where) && PyTuple_Size(where) == 2) {
    kind = int_of(PyTuple_GetItem(where, 0));
    ordinal = int_of(PyTuple_GetItem(where, 1));
  }
  Py_DECREF(where);
  if (!kind || (*kind != kDLCUDA && *kind != kDLCUDAManaged) || ordinal != device) return false;
  // DLPack's CUDA streams: 1 is the legacy default stream (0 is not allowed).
  PyObject* s = stream_object(stream == 0 ? 1 : stream);
  if (!s) {
    PyErr_Clear();
    return false;
  }
  PyObject* call[3] = {nullptr, x, s};
  PyObject* capsule = PyObject_VectorcallMethod(n.dlpack, call + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, n.stream_kwnames);
  if (!capsule) {
    PyErr_Clear();
    return false;
  }
  DLManagedTensor* t = nullptr;
  if (PyCapsule_CheckExact(capsule) && PyCapsule_IsValid(capsule, "dltensor")) {
    t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (t) {  // ours now, as the protocol says: the capsule must not free it again
      PyCapsule_SetName(capsule, "used_dltensor");
      PyCapsule_SetDestructor(capsule, nullptr);
    }
  }
  if (PyErr_Occurred()) PyErr_Clear();
  Py_DECREF(capsule);
  if (!t) return false;
  a.dl = t;  // released by Args, or below
  const DLTensor& d = t->dl_tensor;
  const auto dtype = dtype_of_dlpack(d.dtype);
  std::uint64_t size = 1;
  bool ok = dtype.has_value() && d.ndim >= 0 && d.ndim <= kMaxDims && d.device.device_type == *kind &&
            d.device.device_id == device;
  for (int k = 0; ok && k < d.ndim; ++k) {
    const std::int64_t e = d.shape[k];
    ok = e >= 0 && !__builtin_mul_overflow(size, static_cast<std::uint64_t>(e), &size);
    a.shape[k] = e;
  }
  if (ok && d.strides) ok = c_contiguous(a.shape, d.ndim, [&](int k) { return static_cast<long long>(d.strides[k]); }, 1);
  if (!ok || size == 0) return false;  // the caller releases a.dl
  a.ndim = d.ndim;
  a.ptr = reinterpret_cast<std::uintptr_t>(d.data) + d.byte_offset;
  a.dtype = *dtype;
  a.size = size;
  return true;
}

// Whether objects of this type are read through DLPack at once: the type has __dlpack__ and no
// __cuda_array_interface__ (JAX, NumPy, a DLPack-only producer). Asked once per type: asking an
// instance for an attribute it lacks raises (and clears) an AttributeError, about 1.5 us per call.
bool dlpack_only(PyTypeObject* type) {
  struct Known {
    PyObject* type;  // a strong reference: the address stays this type's
    bool dlpack_only;
  };
  static std::vector<Known> known;  // read and written under the GIL
  for (const Known& k : known)
    if (k.type == reinterpret_cast<PyObject*>(type)) return k.dlpack_only;
  PyObject* t = reinterpret_cast<PyObject*>(type);
  const auto has = [t](PyObject* name) {
    PyObject* attribute = PyObject_GetAttr(t, name);
    if (!attribute) {
      PyErr_Clear();
      return false;
    }
    Py_DECREF(attribute);
    return true;
  };
  const bool answer = !has(names().cai) && has(names().dlpack);
  if (known.size() < 64) {
    Py_INCREF(t);
    known.push_back(Known{t, answer});
  }
  return answer;
}

}  // namespace

// A device array of this call, or false: the general path's turn (host arrays, anything to
// refuse or explain).
bool read_array(PyObject* x, int device, std::uintptr_t stream, Arg& a) {
  if (dlpack_only(Py_TYPE(x))) return read_dlpack(x, device, stream, a);
  PyObject* cai = PyObject_GetAttr(x, names().cai);
  if (cai) {
    const bool ok = read_cai(cai, a);
    Py_DECREF(cai);
    return ok;
  }
  PyErr_Clear();
  return read_dlpack(x, device, stream, a);
}

// A __cuda_array_interface__ pointer must be device memory of the engine's GPU. The driver's
// answer is remembered for the last few pointers of this thread: a call on the same arrays asks
// it once.
bool on_device(std::uintptr_t ptr, int device) {
  struct Known {
    std::uintptr_t ptr = 0;
    int device = -1;
  };
  thread_local Known known[8];
  thread_local unsigned next = 0;
  for (const Known& k : known)
    if (k.ptr == ptr && k.device == device) return true;
  if (device_of_pointer(ptr) != device) return false;
  known[next++ % 8] = Known{ptr, device};
  return true;
}

}  // namespace gpuk::python
