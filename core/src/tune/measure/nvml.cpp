// NVML through dlopen: the few functions the energy meter needs, declared here (nvml.h is not
// needed to build gpuk).
#include <dlfcn.h>

#include <mutex>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "tune/measure/energy.hpp"

namespace gpuk {

namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

struct Nvml {
  nvmlReturn_t (*init)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*by_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  std::string failure;  // empty when loaded and initialised
};

const Nvml& nvml() {
  static const Nvml loaded = [] {
    Nvml n;
    void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      n.failure = "NVML (libnvidia-ml.so.1, part of the NVIDIA driver) could not be loaded, so energy and power "
                  "cannot be measured";
      return n;
    }
    n.init = reinterpret_cast<decltype(n.init)>(dlsym(handle, "nvmlInit_v2"));
    n.error_string = reinterpret_cast<decltype(n.error_string)>(dlsym(handle, "nvmlErrorString"));
    n.by_bus_id = reinterpret_cast<decltype(n.by_bus_id)>(dlsym(handle, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.energy = reinterpret_cast<decltype(n.energy)>(dlsym(handle, "nvmlDeviceGetTotalEnergyConsumption"));
    n.power = reinterpret_cast<decltype(n.power)>(dlsym(handle, "nvmlDeviceGetPowerUsage"));
    n.clock = reinterpret_cast<decltype(n.clock)>(dlsym(handle, "nvmlDeviceGetClockInfo"));
    if (!n.init || !n.error_string || !n.by_bus_id || !n.energy || !n.power || !n.clock) {
      n.failure = "NVML (libnvidia-ml.so.1) lacks the energy functions gpuk needs; energy cannot be measured";
      return n;
    }
    if (const nvmlReturn_t r = n.init(); r != kNvmlSuccess)
      n.failure = std::string("NVML did not start (") + n.error_string(r) + "), so energy cannot be measured";
    return n;
  }();
  return loaded;
}

class NvmlMeter final : public EnergyMeter {
 public:
  explicit NvmlMeter(nvmlDevice_t device) : device_(device) {}
  std::uint64_t millijoules() override {
    unsigned long long mj = 0;
    check(nvml().energy(device_, &mj), "nvmlDeviceGetTotalEnergyConsumption");
    return mj;
  }
  double watts() override {
    unsigned int mw = 0;
    check(nvml().power(device_, &mw), "nvmlDeviceGetPowerUsage");
    return mw / 1000.0;
  }
  double sm_mhz() override {
    unsigned int mhz = 0;
    check(nvml().clock(device_, kNvmlClockSm, &mhz), "nvmlDeviceGetClockInfo");
    return mhz;
  }

 private:
  static void check(nvmlReturn_t r, const char* what) {
    if (r != kNvmlSuccess) throw Error(std::string(what) + " failed: " + nvml().error_string(r));
  }
  nvmlDevice_t device_;
};

}  // namespace

std::unique_ptr<EnergyMeter> open_energy_meter(const std::string& bus, std::string* why) {
  const Nvml& n = nvml();
  const auto fail = [&](const std::string& reason) -> std::unique_ptr<EnergyMeter> {
    if (why) *why = reason;
    return nullptr;
  };
  if (!n.failure.empty()) return fail(n.failure);
  nvmlDevice_t device = nullptr;
  if (const nvmlReturn_t r = n.by_bus_id(bus.c_str(), &device); r != kNvmlSuccess)
    return fail("NVML does not know the GPU at PCI bus id " + bus + " (" + n.error_string(r) +
                "), so energy cannot be measured");
  unsigned long long mj = 0;
  if (const nvmlReturn_t r = n.energy(device, &mj); r != kNvmlSuccess)
    return fail(std::string("the GPU has no energy counter NVML can read (") + n.error_string(r) +
                "), so energy cannot be measured");
  return std::make_unique<NvmlMeter>(device);
}

std::string pci_bus_id(int ordinal) {
  CUdevice device = 0;
  char bus[64] = {};
  GPUK_CU(driver().cuDeviceGet(&device, ordinal), "the PCI bus id");
  GPUK_CU(driver().cuDeviceGetPCIBusId(bus, sizeof bus, device), "the PCI bus id");
  return bus;
}

}  // namespace gpuk
