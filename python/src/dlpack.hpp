// A DLPack capsule ("dltensor", from any __dlpack__) opened for one call: its pointer, device,
// dtype, shape and strides, kept alive until the view is dropped (then the producer's deleter
// runs). The layout of the structs is DLPack's (dlpack.h, stable since 0.6).
#pragma once
#include <Python.h>

#include <cstdint>
#include <vector>

namespace gpuk::python {

struct DLDevice {
  std::int32_t device_type;  // 1 CPU, 2 CUDA, 3 CUDA host, 13 CUDA managed, ...
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: C-contiguous
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

class DLPackView {
 public:
  // Takes the tensor out of the capsule (renamed "used_dltensor", as the protocol asks).
  // Throws ConfigError for anything else than an unused "dltensor" capsule.
  explicit DLPackView(PyObject* capsule);
  ~DLPackView();
  DLPackView(const DLPackView&) = delete;
  DLPackView& operator=(const DLPackView&) = delete;

  std::uintptr_t ptr() const;
  int device_type() const { return tensor_->dl_tensor.device.device_type; }
  int device_id() const { return tensor_->dl_tensor.device.device_id; }
  int dtype_code() const { return tensor_->dl_tensor.dtype.code; }
  int dtype_bits() const { return tensor_->dl_tensor.dtype.bits; }
  int dtype_lanes() const { return tensor_->dl_tensor.dtype.lanes; }
  std::vector<std::int64_t> shape() const;
  // Empty when the producer gave none (C-contiguous by the protocol).
  std::vector<std::int64_t> strides() const;

 private:
  DLManagedTensor* tensor_ = nullptr;
};

// A new "dltensor" capsule over device memory that `owner` keeps alive: C order, `shape` (ndim
// extents) copied into the tensor; it holds a reference to `owner` until the consumer's deleter
// call, or the capsule's end when no one consumed it. dtype: DLPack's (code, bits).
PyObject* make_capsule(std::uintptr_t ptr, int code, int bits, const std::int64_t* shape, int ndim, int device_type,
                       int device_id, PyObject* owner);

// A C-ordered device array that speaks DLPack from C++ (`__dlpack__`, `__dlpack_device__`):
// _gpuk.DLPackArray, the base of gpuk.DeviceArray, and on its own a producer of DLPack alone (what
// tools/bench/bench_api.py measures the protocol with). Written on `stream`: a consumer's other
// stream waits for it (an event, no host wait). A strided view has no capsule (BufferError).
class DLPackArray {
 public:
  DLPackArray(PyObject* owner, std::uintptr_t ptr, int code, int bits, std::vector<std::int64_t> shape, int device,
              std::uintptr_t stream, bool strided);
  ~DLPackArray();
  DLPackArray(const DLPackArray&) = delete;
  DLPackArray& operator=(const DLPackArray&) = delete;
  // __dlpack_device__: (kDLCUDA, device), one tuple made once. A new reference.
  PyObject* device_tuple() const;
  // __dlpack__(stream=...): a new reference, or null with a Python error set.
  PyObject* capsule(PyObject* stream) const;

 private:
  PyObject* owner_;  // a strong reference: the memory
  std::uintptr_t ptr_;
  int code_, bits_;
  std::vector<std::int64_t> shape_;
  int device_;
  std::uintptr_t stream_;
  bool strided_;
  PyObject* where_ = nullptr;
};

}  // namespace gpuk::python
