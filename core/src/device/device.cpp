#include "device/device.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

namespace gpuk {

namespace {

#define GPUK_STR2(x) #x
#define GPUK_STR(x) GPUK_STR2(x)

struct LoadedDriver {
  DriverApi api;
  std::string failure;  // empty when the driver loaded and cuInit succeeded
};

std::atomic<bool> g_initialised{false};

LoadedDriver load_driver() {
  LoadedDriver loaded;
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    loaded.failure =
        "no NVIDIA driver found (libcuda.so.1 could not be loaded): running a kernel needs an NVIDIA GPU";
    return loaded;
  }
  std::string missing;
#define GPUK_DRIVER_FN(name)                                                      \
  loaded.api.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, GPUK_STR(name))); \
  if (!loaded.api.name) missing += std::string(missing.empty() ? "" : ", ") + GPUK_STR(name);
#include "device/driver_functions.inc"
#undef GPUK_DRIVER_FN
  if (!missing.empty()) {
    loaded.failure = "the NVIDIA driver is too old for gpuk (libcuda.so.1 lacks " + missing +
                     "): install a driver for CUDA 12.8 or newer";
    return loaded;
  }
  const CUresult init = loaded.api.cuInit(0);
  if (init == CUDA_SUCCESS) g_initialised = true;
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    loaded.api.cuGetErrorName(init, &name);
    loaded.failure = std::string("the NVIDIA driver found no usable GPU (cuInit: ") +
                     (name ? name : "unknown error") + ")";
  }
  return loaded;
}

LoadedDriver& loaded_driver() {
  static LoadedDriver loaded = load_driver();  // written only by driver_for_tests()
  return loaded;
}

std::atomic<bool> g_hung{false};

// May a handle's destructor call the driver? Not while a kernel that was abandoned may still be
// running: cuMemFree and friends would wait for it.
bool alive() { return !g_hung.load(); }

std::string seconds_text(double s) {
  std::ostringstream out;
  out << std::setprecision(3) << s;
  return out.str();
}

int attribute(CUdevice device, CUdevice_attribute attr) {
  int value = 0;
  GPUK_CU(driver().cuDeviceGetAttribute(&value, attr, device));
  return value;
}

}  // namespace

const DriverApi& driver() {
  const LoadedDriver& loaded = loaded_driver();
  if (!loaded.failure.empty()) throw NoDeviceError(loaded.failure);
  return loaded.api;
}

DriverApi& driver_for_tests() {
  LoadedDriver& loaded = loaded_driver();
  if (!loaded.failure.empty()) throw NoDeviceError(loaded.failure);
  return loaded.api;
}

int device_count(std::string* why) {
  const LoadedDriver& loaded = loaded_driver();
  if (!loaded.failure.empty()) {
    if (why) *why = loaded.failure;
    return 0;
  }
  int count = 0;
  if (loaded.api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    if (why) *why = "the NVIDIA driver reports no GPU";
    return 0;
  }
  return count;
}

bool device_hung() { return g_hung.load(); }

bool cuda_initialised() { return g_initialised.load(); }

std::string describe(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  const LoadedDriver& loaded = loaded_driver();
  if (loaded.api.cuGetErrorName) loaded.api.cuGetErrorName(result, &name);
  if (loaded.api.cuGetErrorString) loaded.api.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

void wait_stream(CUstream stream, double limit_seconds, const std::string& where) {
  const DriverApi& api = driver();
  if (limit_seconds <= 0) {
    const CUresult r = api.cuStreamSynchronize(stream);
    if (r != CUDA_SUCCESS) throw_driver_error("cuStreamSynchronize", r, "after running " + where);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  for (int polls = 0;; ++polls) {
    const CUresult r = api.cuStreamQuery(stream);
    if (r == CUDA_SUCCESS) return;
    if (r != CUDA_ERROR_NOT_READY) throw_driver_error("cuStreamQuery", r, "after running " + where);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited >= limit_seconds) {
      g_hung = true;
      throw TimeLimitError(where + " ran past its time limit of " + seconds_text(limit_seconds) +
                           " s and was abandoned");
    }
    // Short kernels are met within microseconds; long ones are polled a thousand times a second.
    if (waited < 0.002) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.1 ? 50 : 1000));
  }
}

void throw_driver_error(std::string_view call, CUresult result, std::string_view context) {
  const char* name = nullptr;
  const char* text = nullptr;
  const LoadedDriver& loaded = loaded_driver();
  if (loaded.api.cuGetErrorName) loaded.api.cuGetErrorName(result, &name);
  if (loaded.api.cuGetErrorString) loaded.api.cuGetErrorString(result, &text);
  // `call` is the whole call expression; keep just the function name.
  std::string fn(call.substr(0, call.find('(')));
  if (const auto dot = fn.rfind('.'); dot != std::string::npos) fn = fn.substr(dot + 1);
  std::ostringstream out;
  out << fn << " failed: " << (name ? name : "CUDA error " + std::to_string(result));
  if (text) out << " (" << text << ")";
  if (!context.empty()) out << " [" << context << "]";
  throw DeviceError(out.str());
}

// --- DeviceBuffer ----------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const CUresult result = driver().cuMemAlloc(&ptr_, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    std::size_t free_bytes = 0, total = 0;
    driver().cuMemGetInfo(&free_bytes, &total);
    std::ostringstream out;
    out << "out of device memory: asked for " << bytes << " bytes, " << free_bytes << " of " << total
        << " bytes free";
    throw DeviceError(out.str());
  }
  if (result != CUDA_SUCCESS) throw_driver_error("cuMemAlloc", result);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ && alive()) driver().cuMemFree(ptr_);
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ && alive()) driver().cuMemFree(ptr_);
}

void DeviceBuffer::upload(const void* src, std::size_t bytes, const Stream& stream) {
  if (bytes > bytes_) throw Error("upload of " + std::to_string(bytes) + " bytes into a buffer of " +
                                  std::to_string(bytes_));
  if (bytes) GPUK_CU(driver().cuMemcpyHtoDAsync(ptr_, src, bytes, stream.get()));
}

void DeviceBuffer::download(void* dst, std::size_t bytes, const Stream& stream) const {
  if (bytes > bytes_) throw Error("download of " + std::to_string(bytes) + " bytes from a buffer of " +
                                  std::to_string(bytes_));
  if (bytes) GPUK_CU(driver().cuMemcpyDtoHAsync(dst, ptr_, bytes, stream.get()));
}

void DeviceBuffer::fill_bytes(unsigned char value, const Stream& stream) {
  if (bytes_) GPUK_CU(driver().cuMemsetD8Async(ptr_, value, bytes_, stream.get()));
}

// --- Stream, Event ---------------------------------------------------------------------------

Stream::Stream() { GPUK_CU(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING)); }
Stream::~Stream() {
  if (stream_ && alive()) driver().cuStreamDestroy(stream_);
}
void Stream::synchronize() const { GPUK_CU(driver().cuStreamSynchronize(stream_)); }

Event::Event() { GPUK_CU(driver().cuEventCreate(&event_, CU_EVENT_DEFAULT)); }
Event::~Event() {
  if (event_ && alive()) driver().cuEventDestroy(event_);
}
void Event::record(const Stream& stream) { GPUK_CU(driver().cuEventRecord(event_, stream.get())); }
float Event::elapsed_since(const Event& start) const {
  GPUK_CU(driver().cuEventSynchronize(event_));
  float ms = 0;
  GPUK_CU(driver().cuEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

// --- Module ----------------------------------------------------------------------------------

Module::Module(const std::vector<char>& image, std::string_view what) : what_(what) {
  GPUK_CU(driver().cuModuleLoadData(&module_, image.data()), what_);
}
Module::~Module() {
  if (module_ && alive()) driver().cuModuleUnload(module_);
}
CUfunction Module::function(const std::string& lowered_name) const {
  CUfunction fn = nullptr;
  GPUK_CU(driver().cuModuleGetFunction(&fn, module_, lowered_name.c_str()), what_);
  return fn;
}

// --- Device ----------------------------------------------------------------------------------

DeviceInfo device_info(int ordinal) {
  const DriverApi& api = driver();
  int count = 0;
  GPUK_CU(api.cuDeviceGetCount(&count));
  if (ordinal < 0 || ordinal >= count)
    throw NoDeviceError("GPU " + std::to_string(ordinal) + " does not exist (this machine has " +
                        std::to_string(count) + ")");
  CUdevice device = 0;
  GPUK_CU(api.cuDeviceGet(&device, ordinal));
  DeviceInfo info;
  char name[256] = {};
  GPUK_CU(api.cuDeviceGetName(name, sizeof name, device));
  info.ordinal = ordinal;
  info.name = name;
  char bus[64] = {};
  if (api.cuDeviceGetPCIBusId(bus, sizeof bus, device) == CUDA_SUCCESS) info.pci_bus_id = bus;
  info.cc_major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sm_count = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.max_threads_per_block = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_shared_per_block_optin = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.l2_bytes = attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  std::size_t total = 0;
  GPUK_CU(api.cuDeviceTotalMem(&total, device));
  info.total_memory = static_cast<std::int64_t>(total);
  const double clock_khz = attribute(device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  const double bus_bits = attribute(device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  info.peak_bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  GPUK_CU(api.cuDriverGetVersion(&info.driver_version));
  return info;
}

Device::Device(int ordinal) : info_(device_info(ordinal)) {
  const DriverApi& api = driver();
  GPUK_CU(api.cuDeviceGet(&device_, ordinal));
  GPUK_CU(api.cuDevicePrimaryCtxRetain(&context_, device_));
  GPUK_CU(api.cuCtxSetCurrent(context_));
}

Device::~Device() {
  // A kernel that was abandoned may still run: releasing the context would wait for it. The
  // process's exit tears it down instead.
  if (!context_ || g_hung.load()) return;
  driver().cuCtxSynchronize();
  driver().cuDevicePrimaryCtxRelease(device_);
}

void Device::make_current() const {
  CUcontext current = nullptr;
  GPUK_CU(driver().cuCtxGetCurrent(&current));
  if (current != context_) GPUK_CU(driver().cuCtxSetCurrent(context_));
}

DeviceInfo device_of_arch(const std::string& arch) {
  const auto bad = [&] { return ConfigError("'" + arch + "' is not a GPU architecture (sm_XX or sm_XXX, e.g. sm_90 or sm_100)"); };
  // Two or three digits (sm_90, sm_100): a longer number is no architecture, and would not fit an int.
  if (arch.size() < 5 || arch.size() > 6 || arch.compare(0, 3, "sm_") != 0) throw bad();
  const std::string digits = arch.substr(3);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) throw bad();
  DeviceInfo info;
  info.cc_major = std::stoi(digits.substr(0, digits.size() - 1));
  info.cc_minor = digits.back() - '0';
  return info;
}

std::size_t Device::free_memory() const {
  std::size_t free_bytes = 0, total = 0;
  GPUK_CU(driver().cuMemGetInfo(&free_bytes, &total));
  return free_bytes;
}

}  // namespace gpuk
