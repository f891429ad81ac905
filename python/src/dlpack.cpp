#include "dlpack.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cuda_memory.hpp"
#include "gpuk/error.hpp"

namespace gpuk::python {

DLPackView::DLPackView(PyObject* capsule) {
  if (!PyCapsule_CheckExact(capsule))
    throw ConfigError("__dlpack__() returned something that is not a DLPack capsule");
  const char* name = PyCapsule_GetName(capsule);
  if (!name || std::strcmp(name, "dltensor") != 0)
    throw ConfigError(std::string("__dlpack__() returned a capsule named '") + (name ? name : "") +
                      "', not an unused 'dltensor' (was it consumed already?)");
  tensor_ = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (!tensor_) {
    PyErr_Clear();
    throw ConfigError("__dlpack__() returned an empty DLPack capsule");
  }
  // Ours now: the capsule's destructor must not free it again.
  PyCapsule_SetName(capsule, "used_dltensor");
  PyCapsule_SetDestructor(capsule, nullptr);
}

DLPackView::~DLPackView() {
  if (tensor_ && tensor_->deleter) tensor_->deleter(tensor_);
}

std::uintptr_t DLPackView::ptr() const {
  return reinterpret_cast<std::uintptr_t>(tensor_->dl_tensor.data) + tensor_->dl_tensor.byte_offset;
}

std::vector<std::int64_t> DLPackView::shape() const {
  const DLTensor& t = tensor_->dl_tensor;
  return std::vector<std::int64_t>(t.shape, t.shape + t.ndim);
}

std::vector<std::int64_t> DLPackView::strides() const {
  const DLTensor& t = tensor_->dl_tensor;
  if (!t.strides) return {};
  return std::vector<std::int64_t>(t.strides, t.strides + t.ndim);
}

namespace {

// The tensor, its shape and the reference that keeps its memory alive, in one allocation (a
// shape of up to kInline dimensions inside it, a longer one beside it).
constexpr std::size_t kInline = 4;
struct OwnedTensor {
  DLManagedTensor managed;
  std::int64_t inline_shape[kInline];
  std::vector<std::int64_t> long_shape;
  PyObject* owner;
};

void delete_tensor(DLManagedTensor* t) {
  auto* owned = static_cast<OwnedTensor*>(t->manager_ctx);
  // A consumer may call the deleter from any thread, with or without the GIL.
  const PyGILState_STATE gil = PyGILState_Ensure();
  Py_XDECREF(owned->owner);
  PyGILState_Release(gil);
  delete owned;
}

void capsule_destructor(PyObject* capsule) {
  // Still named "dltensor": no consumer took it, so it is the capsule's to free.
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (t && t->deleter) t->deleter(t);
  }
  PyErr_Clear();
}

}  // namespace

PyObject* make_capsule(std::uintptr_t ptr, int code, int bits, const std::int64_t* shape, int ndim, int device_type,
                       int device_id, PyObject* owner) {
  auto* owned = new OwnedTensor{};
  std::int64_t* dims = owned->inline_shape;
  if (ndim > static_cast<int>(kInline)) {
    owned->long_shape.assign(shape, shape + ndim);
    dims = owned->long_shape.data();
  } else {
    std::copy(shape, shape + ndim, dims);
  }
  Py_XINCREF(owner);
  owned->owner = owner;
  DLTensor& t = owned->managed.dl_tensor;
  t.data = reinterpret_cast<void*>(ptr);
  t.device = DLDevice{device_type, device_id};
  t.ndim = ndim;
  t.dtype = DLDataType{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), 1};
  t.shape = dims;
  t.strides = nullptr;
  t.byte_offset = 0;
  owned->managed.manager_ctx = owned;
  owned->managed.deleter = delete_tensor;
  PyObject* capsule = PyCapsule_New(&owned->managed, "dltensor", capsule_destructor);
  if (!capsule) delete_tensor(&owned->managed);
  return capsule;
}

DLPackArray::DLPackArray(PyObject* owner, std::uintptr_t ptr, int code, int bits, std::vector<std::int64_t> shape,
                         int device, std::uintptr_t stream, bool strided)
    : owner_(owner), ptr_(ptr), code_(code), bits_(bits), shape_(std::move(shape)), device_(device), stream_(stream),
      strided_(strided) {
  Py_XINCREF(owner_);
  where_ = Py_BuildValue("(ii)", 2, device_);  // kDLCUDA
}

DLPackArray::~DLPackArray() {
  Py_XDECREF(where_);
  Py_XDECREF(owner_);
}

PyObject* DLPackArray::device_tuple() const {
  Py_INCREF(where_);
  return where_;
}

PyObject* DLPackArray::capsule(PyObject* stream) const {
  if (strided_) {
    PyErr_SetString(PyExc_BufferError, "a strided view of gpuk records: use __cuda_array_interface__ or numpy()");
    return nullptr;
  }
  if (stream && stream != Py_None) {
    const long long s = PyLong_AsLongLong(stream);
    if (s == -1 && PyErr_Occurred()) return nullptr;
    // -1: the consumer asks for no synchronisation; 1: the legacy default stream (0 here).
    if (s != -1) {
      if (s < 0) {
        PyErr_Format(PyExc_ValueError, "__dlpack__(stream=%lld): not a CUDA stream", s);
        return nullptr;
      }
      const std::uintptr_t consumer = s == 1 ? 0 : static_cast<std::uintptr_t>(s);
      if (consumer != stream_) order_streams(device_, stream_, consumer);
    }
  }
  return make_capsule(ptr_, code_, bits_, shape_.data(), static_cast<int>(shape_.size()), 2, device_, owner_);
}

}  // namespace gpuk::python
