// Energy and power of a GPU through NVML, loaded at run time (dlopen libnvidia-ml.so.1; gpuk
// neither links it nor needs it to run): the energy counter, the power draw and the SM clock of
// the NVML device that is the CUDA device (matched by PCI bus id). docs/tuning.md, "Energy".
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace gpuk {

class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  virtual std::uint64_t millijoules() = 0;  // since the driver loaded (a counter; mJ)
  virtual double watts() = 0;               // the power draw now (NVML's, averaged by the device)
  virtual double sm_mhz() = 0;              // the SM clock now
};

// The meter of the GPU at PCI bus id `bus` (cuDeviceGetPCIBusId's form, "0000:65:00.0"), or
// nullptr with `why` set to one sentence: NVML is not installed, or does not know the GPU, or
// the GPU has no energy counter (before Volta).
std::unique_ptr<EnergyMeter> open_energy_meter(const std::string& bus, std::string* why);

// The PCI bus id of CUDA device `ordinal` (the driver must be loaded).
std::string pci_bus_id(int ordinal);

}  // namespace gpuk
