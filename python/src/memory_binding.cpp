// gpuk._gpuk's memory and DLPack helpers for the Python layer (python/gpuk/_arrays.py): DLPack
// capsules opened and made, device memory in a GPU's primary context, copies and stream ordering,
// each long wait with the GIL released.
#include "memory_binding.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <vector>

#include "cuda_memory.hpp"
#include "dlpack.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace gpuk::python {

void bind_memory(nb::module_& m) {
  nb::class_<DLPackView>(m, "DLPackView", "A DLPack capsule opened for one call (kept alive while referenced).")
      .def("__init__", [](DLPackView* self, nb::handle capsule) { new (self) DLPackView(capsule.ptr()); })
      .def_prop_ro("ptr", &DLPackView::ptr)
      .def_prop_ro("device", [](const DLPackView& v) { return nb::make_tuple(v.device_type(), v.device_id()); })
      .def_prop_ro("dtype",
                   [](const DLPackView& v) { return nb::make_tuple(v.dtype_code(), v.dtype_bits(), v.dtype_lanes()); })
      .def_prop_ro("shape", &DLPackView::shape)
      .def_prop_ro("strides", &DLPackView::strides);

  m.def(
      "dlpack_capsule",
      [](std::uintptr_t ptr, int code, int bits, const std::vector<std::int64_t>& shape, int device_type,
         int device_id, nb::handle owner) {
        PyObject* capsule = make_capsule(ptr, code, bits, shape.data(), static_cast<int>(shape.size()), device_type,
                                         device_id, owner.ptr());
        if (!capsule) throw nb::python_error();
        return nb::steal(capsule);
      },
      "ptr"_a, "code"_a, "bits"_a, "shape"_a, "device_type"_a, "device_id"_a, "owner"_a,
      "A DLPack capsule over C-ordered memory that `owner` keeps alive, referenced until the consumer's "
      "tensor goes.");

  nb::class_<DLPackArray>(m, "DLPackArray",
                          "C-ordered device memory that speaks DLPack from C++ (__dlpack__, __dlpack_device__): the "
                          "base of gpuk.DeviceArray, and alone a producer of DLPack only.")
      .def(
          "__init__",
          [](DLPackArray* self, nb::handle owner, std::uintptr_t ptr, int code, int bits,
             const std::vector<std::int64_t>& shape, int device, std::uintptr_t stream, bool strided) {
            new (self) DLPackArray(owner.ptr(), ptr, code, bits, shape, device, stream, strided);
          },
          "owner"_a.none(), "ptr"_a, "code"_a, "bits"_a, "shape"_a, "device"_a, "stream"_a = 0, "strided"_a = false,
          "`owner` keeps the memory alive; (code, bits) is DLPack's dtype; written on `stream`.")
      .def("__dlpack_device__", [](const DLPackArray& a) { return nb::steal(a.device_tuple()); })
      .def(
          "__dlpack__",
          [](const DLPackArray& a, nb::handle stream, nb::handle, nb::handle, nb::handle) {
            PyObject* capsule = a.capsule(stream.ptr());
            if (!capsule) throw nb::python_error();
            return nb::steal(capsule);
          },
          "stream"_a.none() = nb::none(), "max_version"_a.none() = nb::none(), "dl_device"_a.none() = nb::none(),
          "copy"_a.none() = nb::none(),
          "A DLPack capsule (torch.from_dlpack, cupy.from_dlpack, jax.dlpack), zero-copy; the memory stays alive "
          "while the consumer's tensor is. Work on the stream it was written on comes before the consumer's "
          "`stream` (1: the legacy default stream; -1: no ordering).");

  nb::class_<DeviceMemory>(m, "DeviceMemory", "Device memory in a GPU's primary context, freed when dropped.")
      .def(nb::init<int, std::size_t>(), "device"_a, "bytes"_a)
      .def_prop_ro("ptr", &DeviceMemory::ptr)
      .def_prop_ro("bytes", &DeviceMemory::bytes)
      .def_prop_ro("device", &DeviceMemory::device)
      .def(
          "upload_from",
          [](DeviceMemory& d, std::uintptr_t host, std::size_t bytes, std::uintptr_t stream) {
            nb::gil_scoped_release release;
            d.upload(reinterpret_cast<const void*>(host), bytes, stream);
          },
          "host"_a, "bytes"_a, "stream"_a = 0, "Asynchronous copy from host address `host` (kept alive by the caller).")
      .def(
          "download_to",
          [](const DeviceMemory& d, std::uintptr_t host, std::size_t bytes, std::uintptr_t stream) {
            nb::gil_scoped_release release;
            d.download(reinterpret_cast<void*>(host), bytes, stream);
          },
          "host"_a, "bytes"_a, "stream"_a = 0, "Asynchronous copy to host address `host` (kept alive by the caller).");

  m.def(
      "synchronize",
      [](int device, std::uintptr_t stream) {
        nb::gil_scoped_release release;
        synchronize(device, stream);
      },
      "device"_a, "stream"_a = 0, "Waits for `stream` (GIL released).");
  m.def(
      "copy_to_host",
      [](int device, std::uintptr_t src, std::uintptr_t dst, std::size_t bytes, std::uintptr_t stream) {
        nb::gil_scoped_release release;
        copy_to_host(device, src, reinterpret_cast<void*>(dst), bytes, stream);
      },
      "device"_a, "src"_a, "dst"_a, "bytes"_a, "stream"_a = 0,
      "Copies device memory to a host address and waits (GIL released).");
  m.def("order_streams", &order_streams, "device"_a, "producer"_a, "consumer"_a,
        "Makes `consumer` wait for what `producer` has enqueued so far (an event; the host does not wait).");
  m.def("device_of_pointer", &device_of_pointer, "ptr"_a,
        "The GPU ordinal of a device pointer, or -1 when the driver does not know it.");
}

}  // namespace gpuk::python
