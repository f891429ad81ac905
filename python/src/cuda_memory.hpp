// The few CUDA driver calls the Python package needs besides gpuk's API: device memory for NumPy
// arrays (upload, download), and ordering a producer's stream before gpuk's. The driver is
// opened at run time, as core opens it: the module imports on a machine without one.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace gpuk::python {

// Makes `device`'s primary context (the one gpuk and the CUDA runtime use) current on this
// thread. Throws NoDeviceError when there is no driver or no such GPU.
void make_current(int device);

// The device ordinal that `ptr` belongs to, or -1 when the driver does not know the pointer
// (host memory, a freed pointer).
int device_of_pointer(std::uintptr_t ptr);

// Device memory in `device`'s primary context, freed on destruction.
class DeviceMemory {
 public:
  DeviceMemory(int device, std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  std::uintptr_t ptr() const { return static_cast<std::uintptr_t>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  // Asynchronous copies on `stream` (the host side must stay alive until it is synchronised).
  void upload(const void* host, std::size_t bytes, std::uintptr_t stream);
  void download(void* host, std::size_t bytes, std::uintptr_t stream) const;

 private:
  int device_;
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

void synchronize(int device, std::uintptr_t stream);
// Copies `bytes` from device pointer `src` to host `dst` on `stream` and waits for it.
void copy_to_host(int device, std::uintptr_t src, void* dst, std::size_t bytes, std::uintptr_t stream);
// Makes `consumer` wait for the work enqueued on `producer` so far (an event), without blocking
// the host.
void order_streams(int device, std::uintptr_t producer, std::uintptr_t consumer);

}  // namespace gpuk::python
