// The CUDA driver, loaded at run time (dlopen), so that gpuk starts on machines with no GPU and
// no driver; plus RAII owners for the handles it hands out.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuk/error.hpp"

namespace gpuk {

// The driver entry points gpuk uses, resolved from libcuda.so.1.
struct DriverApi {
#define GPUK_DRIVER_FN(name) decltype(&::name) name = nullptr;
#include "device/driver_functions.inc"
#undef GPUK_DRIVER_FN
};

// Loads libcuda.so.1 and calls cuInit once. Throws NoDeviceError, with one sentence saying why,
// when there is no driver or no GPU.
const DriverApi& driver();
// The same table, writable: a test replaces entries with counting wrappers to check what a call
// does (no allocation, module load or wait in a prepared handle's call). Nothing else writes it.
DriverApi& driver_for_tests();

// "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" plus `context` when given.
[[noreturn]] void throw_driver_error(std::string_view call, CUresult result, std::string_view context = {});

// A kernel ran past its time limit and was abandoned; it may still be running, so nothing may
// wait on the device again in this process (it dies with the process: leave with _Exit).
class TimeLimitError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// A variant's kernel faulted (illegal address, trap, ...) and took the CUDA context with it.
class FaultError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string describe(CUresult result);

// Waits for `stream` by polling cuStreamQuery. Throws the driver's error (naming `where`) when the
// stream failed, and TimeLimitError when it has not finished after `limit_seconds` (then the
// device counts as hung: see device_hung()). limit_seconds <= 0 waits as long as it takes.
void wait_stream(CUstream stream, double limit_seconds, const std::string& where);

// True after a TimeLimitError: a kernel may still be running, and the handles' destructors skip
// the driver calls that would wait for it.
bool device_hung();

// Whether this process has initialised CUDA (cuInit succeeded). A child forked after that cannot
// use the GPU: what forks GPU workers checks it first (tune/workers/pool.hpp).
bool cuda_initialised();

#define GPUK_CU(call_expr, ...)                                                        \
  do {                                                                                 \
    const CUresult gpuk_cu_result_ = (call_expr);                                      \
    if (gpuk_cu_result_ != CUDA_SUCCESS)                                               \
      ::gpuk::throw_driver_error(#call_expr, gpuk_cu_result_ __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_shared_per_block_optin = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t total_memory = 0;
  double peak_bandwidth_gbs = 0;  // 2 x memory clock x bus width: the datasheet figure
  int driver_version = 0;         // e.g. 13000
  std::string pci_bus_id;         // "0000:1B:00.0": which GPU of several of one model
  std::string arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};

// What GPU `ordinal` is, asked of the driver without making a context (so no GPU memory and
// little time). Throws NoDeviceError for an ordinal that does not exist.
DeviceInfo device_info(int ordinal);

// A GPU of architecture `arch` ("sm_90") known by nothing else: no name, no limits (sm_count 0).
// What `gpuk check` chooses a variant for without a GPU. Throws ConfigError for a malformed arch.
DeviceInfo device_of_arch(const std::string& arch);

class Stream;

// Device memory, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  CUdeviceptr get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t bytes, const Stream& stream);
  void download(void* dst, std::size_t bytes, const Stream& stream) const;
  void fill_bytes(unsigned char value, const Stream& stream);

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return stream_; }
  void synchronize() const;

 private:
  CUstream stream_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& stream);
  CUevent get() const { return event_; }
  // Milliseconds from `start` to this event; both must have completed.
  float elapsed_since(const Event& start) const;

 private:
  CUevent event_ = nullptr;
};

// A loaded CUBIN, unloaded on destruction.
class Module {
 public:
  explicit Module(const std::vector<char>& image, std::string_view what);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUfunction function(const std::string& lowered_name) const;
  // The module's global `name` (a __constant__ symbol at global scope): its address and bytes
  // (cuModuleGetGlobal). Throws ConfigError when the module has none of that name.
  std::pair<CUdeviceptr, std::size_t> global(const std::string& name) const;
  // Writes `bytes` into the global `name` (cuMemcpyHtoD). Throws ConfigError when the module has
  // no such symbol or its size is not `bytes` (naming both sizes).
  void write_global(const std::string& name, const void* data, std::size_t bytes) const;

 private:
  CUmodule module_ = nullptr;
  std::string what_;
};

// The device's primary context, current on the calling thread for the Device's lifetime (the
// CUDA runtime, which CUB's baselines use, shares it).
class Device {
 public:
  explicit Device(int ordinal = 0);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  const DeviceInfo& info() const { return info_; }
  // The number this GPU has where the caller counts them: a pooled sweep's worker that makes only
  // its own GPU visible to CUDA opens it as 0 but reports the parent's number.
  void renumber(int ordinal) { info_.ordinal = ordinal; }
  std::size_t free_memory() const;
  CUcontext context() const { return context_; }
  // Makes the device's context current on the calling thread, if it is not already.
  void make_current() const;


 private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  DeviceInfo info_;
};

// Number of CUDA devices, or 0 with `why` set when there is no driver or no GPU.
int device_count(std::string* why = nullptr);

}  // namespace gpuk
