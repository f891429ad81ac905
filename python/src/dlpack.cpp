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

}  // namespace gpuk::python
