// A CUDA driver that has no GPU behind it, built as libcuda.so.1 for the host-path test
// (tests/api/test_host_path.cpp) and tools/bench_api_host: one device that says it is an sm_90,
// memory that is only addresses, modules and functions that are only handles, and launches that
// are only counted. Engine::prepare runs on it as on a GPU (NVRTC compiles the kernels for
// real), so that a prepared handle's call can be counted and timed on any machine: everything
// gpuk does on the host, nothing that the driver or the GPU does.
//
// Every entry point gpuk loads (core/src/device/driver_functions.inc) exists, under its versioned
// name; those this file does not write out answer CUDA_ERROR_NOT_SUPPORTED.
//
// Built with GPUK_FAKE_HOST_MEMORY (tests/declared/test_declared_runs.cpp's driver), its device
// memory is host memory: allocations, copies, memsets and page-locked buffers are real, events
// say 0.01 ms, and launches still do nothing. `gpuk run` and `gpuk tune` then take every step of
// their road but the kernels' own work (an output keeps its poison, which the reference's run
// keeps too, so every variant verifies).
#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#define FAKE_STR2(x) #x
#define FAKE_STR(x) FAKE_STR2(x)

namespace {

std::atomic<std::uint64_t> g_next_address{std::uint64_t{1} << 40};
std::atomic<std::uint64_t> g_launches{0};
int g_context_storage, g_function_storage, g_stream_storage;
thread_local CUcontext t_current = nullptr;

CUcontext fake_context() { return reinterpret_cast<CUcontext>(&g_context_storage); }

// A module: the globals of its CUBIN (an ELF file: each symbol of a data section with its size),
// each given memory of its size (host memory with GPUK_FAKE_HOST_MEMORY, else an address), so
// that cuModuleGetGlobal answers as the driver does and a write to a __constant__ lands.
struct FakeModule {
  std::map<std::string, std::pair<CUdeviceptr, std::size_t>> globals;
};

template <class T> T read_at(const char* image, std::size_t offset) {
  T v;
  std::memcpy(&v, image + offset, sizeof v);
  return v;
}

void read_globals(const char* image, FakeModule& m) {
  if (std::memcmp(image, "\x7f" "ELF", 4) != 0 || image[4] != 2) return;  // ELF64 only
  const auto shoff = read_at<std::uint64_t>(image, 0x28);
  const auto shentsize = read_at<std::uint16_t>(image, 0x3A), shnum = read_at<std::uint16_t>(image, 0x3C);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::size_t sh = shoff + std::size_t{i} * shentsize;
    if (read_at<std::uint32_t>(image, sh + 4) != 2) continue;  // SHT_SYMTAB
    const auto offset = read_at<std::uint64_t>(image, sh + 0x18), size = read_at<std::uint64_t>(image, sh + 0x20);
    const auto entsize = read_at<std::uint64_t>(image, sh + 0x38);
    const std::size_t strtab = shoff + std::size_t{read_at<std::uint32_t>(image, sh + 0x28)} * shentsize;
    const auto strings = read_at<std::uint64_t>(image, strtab + 0x18);
    for (std::uint64_t s = 0; entsize && s < size / entsize; ++s) {
      const std::size_t sym = offset + s * entsize;
      const auto info = static_cast<unsigned char>(image[sym + 4]);
      const auto bytes = read_at<std::uint64_t>(image, sym + 16);
      if ((info & 0xf) != 1 || bytes == 0) continue;  // STT_OBJECT
      const std::string name(image + strings + read_at<std::uint32_t>(image, sym));
#if GPUK_FAKE_HOST_MEMORY
      const auto address = reinterpret_cast<CUdeviceptr>(std::calloc(1, bytes));
#else
      const auto address = g_next_address.fetch_add((bytes + 4095) / 4096 * 4096 + 4096);
#endif
      m.globals[name] = {address, bytes};
    }
  }
}

int attribute_of(CUdevice_attribute a) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
    default: return 1;
  }
}

}  // namespace

extern "C" {

// How many kernel launches this driver has been asked for (the tests read it through dlsym).
std::uint64_t gpuk_fake_driver_launches() { return g_launches.load(); }

// As the real driver: a context call before cuInit says CUDA_ERROR_NOT_INITIALIZED (the library's
// tuning call asks so whether this process started CUDA).
std::atomic<bool> g_init{false};
CUresult CUDAAPI cuInit(unsigned) {
  g_init = true;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDriverGetVersion(int* v) { *v = 13000; return CUDA_SUCCESS; }
CUresult CUDAAPI cuGetErrorName(CUresult, const char** s) { *s = "CUDA_ERROR_NOT_SUPPORTED"; return CUDA_SUCCESS; }
CUresult CUDAAPI cuGetErrorString(CUresult, const char** s) { *s = "not supported by the fake driver"; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGetCount(int* n) { *n = 1; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "fake sm_90 (no GPU: tests/api/fake_driver.cpp)", static_cast<std::size_t>(len) - 1);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) { *v = attribute_of(a); return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice) { *bytes = std::size_t{80} << 30; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) { *c = fake_context(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) { t_current = c; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* c) {
  if (!g_init) return CUDA_ERROR_NOT_INITIALIZED;
  *c = t_current;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSynchronize() { return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) {
  *free = *total = std::size_t{80} << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemAlloc(CUdeviceptr* p, size_t bytes) {
#if GPUK_FAKE_HOST_MEMORY
  *p = reinterpret_cast<CUdeviceptr>(std::calloc(1, bytes ? bytes : 1));
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
#endif
  *p = g_next_address.fetch_add((bytes + 4095) / 4096 * 4096 + 4096);
  return CUDA_SUCCESS;
}
#if GPUK_FAKE_HOST_MEMORY
void* host(CUdeviceptr p) { return reinterpret_cast<void*>(p); }
int g_event_storage;
CUresult CUDAAPI cuMemFree(CUdeviceptr p) { std::free(host(p)); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream) { std::memset(host(p), v, n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream) { std::memmove(host(d), host(s), n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void* s, size_t n, CUstream) { std::memcpy(host(d), s, n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr d, const void* s, size_t n) { std::memcpy(host(d), s, n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyDtoHAsync(void* d, CUdeviceptr s, size_t n, CUstream) { std::memcpy(d, host(s), n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamWaitValue32(CUstream, CUdeviceptr, cuuint32_t, unsigned) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemHostAlloc(void** p, size_t n, unsigned) { *p = std::calloc(1, n ? n : 1); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemFreeHost(void* p) { std::free(p); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr* d, void* p, unsigned) { *d = reinterpret_cast<CUdeviceptr>(p); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemHostRegister(void*, size_t, unsigned) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemHostUnregister(void*) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventCreate(CUevent* e, unsigned) { *e = reinterpret_cast<CUevent>(&g_event_storage); return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventDestroy(CUevent) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventQuery(CUevent) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent, CUevent) { *ms = 0.01f; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGetPCIBusId(char* id, int len, CUdevice) { std::strncpy(id, "0000:00:00.0", len); return CUDA_SUCCESS; }
#else
CUresult CUDAAPI cuMemFree(CUdeviceptr) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr, CUdeviceptr, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr, const void*, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr, const void*, size_t) { return CUDA_SUCCESS; }
#endif
CUresult CUDAAPI cuStreamCreate(CUstream* s, unsigned) { *s = reinterpret_cast<CUstream>(&g_stream_storage); return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamDestroy(CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamQuery(CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamGetCtx(CUstream, CUcontext* c) { *c = fake_context(); return CUDA_SUCCESS; }
// gpuk's Python module (python/src/cuda_memory.cpp) loads these two as well: a stream waits for
// nothing here, and no pointer is the driver's (a caller's array is host memory, as it says).
CUresult CUDAAPI cuStreamWaitEvent(CUstream, CUevent, unsigned) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuPointerGetAttribute(void*, CUpointer_attribute, CUdeviceptr) { return CUDA_ERROR_INVALID_VALUE; }
CUresult CUDAAPI cuModuleLoadData(CUmodule* m, const void* image) {
  auto* module = new FakeModule;
  read_globals(static_cast<const char*>(image), *module);
  *m = reinterpret_cast<CUmodule>(module);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleUnload(CUmodule m) {
  auto* module = reinterpret_cast<FakeModule*>(m);
#if GPUK_FAKE_HOST_MEMORY
  for (const auto& [name, global] : module->globals) std::free(reinterpret_cast<void*>(global.first));
#endif
  delete module;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* p, size_t* bytes, CUmodule m, const char* name) {
  const auto& globals = reinterpret_cast<FakeModule*>(m)->globals;
  const auto it = globals.find(name);
  if (it == globals.end()) return CUDA_ERROR_NOT_FOUND;
  if (p) *p = it->second.first;
  if (bytes) *bytes = it->second.second;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule, const char*) {
  *f = reinterpret_cast<CUfunction>(&g_function_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction) {
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 32; break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**) {
  g_launches.fetch_add(1, std::memory_order_relaxed);
  return CUDA_SUCCESS;
}

// NVRTC looks for the driver's private tables when a libcuda is loaded: there are none here.
CUresult CUDAAPI cuGetExportTable(const void** table, const CUuuid*) {
  *table = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // extern "C"

// The rest of gpuk's table: present (so that the driver loads), never asked for by a prepare or
// a call. Each under its versioned symbol (cuda.h's macros), with a name of its own in C++.
#define FAKE_UNWRITTEN(symbol, tag)                                                   \
  extern "C" CUresult fake_unwritten_##tag(...) __asm__(FAKE_STR(symbol));          \
  extern "C" CUresult fake_unwritten_##tag(...) { return CUDA_ERROR_NOT_SUPPORTED; }
#if !GPUK_FAKE_HOST_MEMORY
FAKE_UNWRITTEN(cuMemcpyDtoHAsync, 2)
FAKE_UNWRITTEN(cuStreamWaitValue32, 3)
FAKE_UNWRITTEN(cuMemHostAlloc, 4)
FAKE_UNWRITTEN(cuMemFreeHost, 5)
FAKE_UNWRITTEN(cuMemHostGetDevicePointer, 6)
FAKE_UNWRITTEN(cuMemHostRegister, 7)
FAKE_UNWRITTEN(cuMemHostUnregister, 8)
FAKE_UNWRITTEN(cuEventCreate, 9)
FAKE_UNWRITTEN(cuEventDestroy, 10)
FAKE_UNWRITTEN(cuEventRecord, 11)
FAKE_UNWRITTEN(cuEventSynchronize, 12)
FAKE_UNWRITTEN(cuEventQuery, 13)
FAKE_UNWRITTEN(cuEventElapsedTime, 14)
FAKE_UNWRITTEN(cuDeviceGetPCIBusId, 15)
#endif
