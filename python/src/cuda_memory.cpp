#include "cuda_memory.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "gpuk/error.hpp"

namespace gpuk::python {

namespace {

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, std::size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, std::size_t, CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuPointerGetAttribute)(void*, CUpointer_attribute, CUdeviceptr);
  CUresult (*cuGetErrorName)(CUresult, const char**);
};

const Driver& driver() {
  static Driver d{};
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      error = "no NVIDIA driver found (libcuda.so.1 could not be loaded): device memory needs an NVIDIA GPU";
      return;
    }
    bool ok = true;
    const auto get = [&](auto& f, const char* name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(::dlsym(lib, name));
      ok = ok && f;
    };
    get(d.cuInit, "cuInit");
    get(d.cuDeviceGet, "cuDeviceGet");
    get(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    get(d.cuCtxGetCurrent, "cuCtxGetCurrent");
    get(d.cuCtxSetCurrent, "cuCtxSetCurrent");
    get(d.cuMemAlloc, "cuMemAlloc_v2");
    get(d.cuMemFree, "cuMemFree_v2");
    get(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    get(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    get(d.cuStreamSynchronize, "cuStreamSynchronize");
    get(d.cuEventCreate, "cuEventCreate");
    get(d.cuEventRecord, "cuEventRecord");
    get(d.cuEventDestroy, "cuEventDestroy_v2");
    get(d.cuStreamWaitEvent, "cuStreamWaitEvent");
    get(d.cuPointerGetAttribute, "cuPointerGetAttribute");
    get(d.cuGetErrorName, "cuGetErrorName");
    if (!ok) error = "the NVIDIA driver lacks a function gpuk needs (too old a driver)";
    else if (const CUresult r = d.cuInit(0); r != CUDA_SUCCESS) error = "the NVIDIA driver found no usable GPU";
  });
  if (!error.empty()) throw NoDeviceError(error);
  return d;
}

void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (driver().cuGetErrorName(r, &name) != CUDA_SUCCESS || !name) name = "unknown CUDA error";
  throw DeviceError(std::string(call) + " failed: " + name);
}

CUstream stream_of(std::uintptr_t s) { return reinterpret_cast<CUstream>(s); }

}  // namespace

void make_current(int device) {
  const Driver& d = driver();
  CUdevice dev = 0;
  if (d.cuDeviceGet(&dev, device) != CUDA_SUCCESS)
    throw NoDeviceError("there is no GPU " + std::to_string(device) + " on this machine");
  // One retain per device for the life of the process: the primary context stays, as gpuk's does.
  static std::mutex mutex;
  static CUcontext contexts[64] = {};
  CUcontext context = nullptr;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (device < 0 || device >= 64) throw ConfigError("device " + std::to_string(device) + " is out of range");
    if (!contexts[device]) check(d.cuDevicePrimaryCtxRetain(&contexts[device], dev), "cuDevicePrimaryCtxRetain");
    context = contexts[device];
  }
  CUcontext current = nullptr;
  check(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != context) check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

int device_of_pointer(std::uintptr_t ptr) {
  int ordinal = -1;
  if (driver().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, static_cast<CUdeviceptr>(ptr)) !=
      CUDA_SUCCESS)
    return -1;
  return ordinal;
}

DeviceMemory::DeviceMemory(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
  make_current(device);
  check(driver().cuMemAlloc(&ptr_, bytes ? bytes : 1), "cuMemAlloc");
}

DeviceMemory::~DeviceMemory() {
  if (!ptr_) return;
  try {
    make_current(device_);
    driver().cuMemFree(ptr_);
  } catch (const Error&) {
  }
}

void DeviceMemory::upload(const void* host, std::size_t bytes, std::uintptr_t stream) {
  if (bytes > bytes_) throw ConfigError("upload of " + std::to_string(bytes) + " bytes into " + std::to_string(bytes_));
  make_current(device_);
  if (bytes) check(driver().cuMemcpyHtoDAsync(ptr_, host, bytes, stream_of(stream)), "cuMemcpyHtoDAsync");
}

void DeviceMemory::download(void* host, std::size_t bytes, std::uintptr_t stream) const {
  if (bytes > bytes_) throw ConfigError("download of " + std::to_string(bytes) + " bytes from " + std::to_string(bytes_));
  make_current(device_);
  if (bytes) check(driver().cuMemcpyDtoHAsync(host, ptr_, bytes, stream_of(stream)), "cuMemcpyDtoHAsync");
}

void synchronize(int device, std::uintptr_t stream) {
  make_current(device);
  check(driver().cuStreamSynchronize(stream_of(stream)), "cuStreamSynchronize");
}

void copy_to_host(int device, std::uintptr_t src, void* dst, std::size_t bytes, std::uintptr_t stream) {
  make_current(device);
  if (bytes)
    check(driver().cuMemcpyDtoHAsync(dst, static_cast<CUdeviceptr>(src), bytes, stream_of(stream)), "cuMemcpyDtoHAsync");
  check(driver().cuStreamSynchronize(stream_of(stream)), "cuStreamSynchronize");
}

void order_streams(int device, std::uintptr_t producer, std::uintptr_t consumer) {
  // One stream, or the legacy default stream by either of its names (1, CU_STREAM_LEGACY, and 0).
  if (producer == consumer || (producer == 1 && consumer == 0) || (producer == 0 && consumer == 1)) return;
  make_current(device);
  const Driver& d = driver();
  CUevent event = nullptr;
  check(d.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  const CUresult recorded = d.cuEventRecord(event, stream_of(producer));
  const CUresult waited = recorded == CUDA_SUCCESS ? d.cuStreamWaitEvent(stream_of(consumer), event, 0) : recorded;
  d.cuEventDestroy(event);  // released once the wait is done
  check(recorded, "cuEventRecord");
  check(waited, "cuStreamWaitEvent");
}

}  // namespace gpuk::python
