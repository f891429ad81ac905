#include "dlpack.hpp"

#include <cstring>
#include <string>

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

// The tensor, its shape and the reference that keeps its memory alive, in one allocation.
struct OwnedTensor {
  DLManagedTensor managed;
  std::vector<std::int64_t> shape;
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

PyObject* make_capsule(std::uintptr_t ptr, int code, int bits, const std::vector<std::int64_t>& shape, int device_type,
                       int device_id, PyObject* owner) {
  auto* owned = new OwnedTensor{};
  owned->shape = shape;
  Py_XINCREF(owner);
  owned->owner = owner;
  DLTensor& t = owned->managed.dl_tensor;
  t.data = reinterpret_cast<void*>(ptr);
  t.device = DLDevice{device_type, device_id};
  t.ndim = static_cast<std::int32_t>(owned->shape.size());
  t.dtype = DLDataType{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), 1};
  t.shape = owned->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  owned->managed.manager_ctx = owned;
  owned->managed.deleter = delete_tensor;
  PyObject* capsule = PyCapsule_New(&owned->managed, "dltensor", capsule_destructor);
  if (!capsule) delete_tensor(&owned->managed);
  return capsule;
}

}  // namespace gpuk::python
