// Verification on the device for a sweep: the first variant's answer that passes the host's
// verification is kept on the GPU, and each later variant's outputs are compared with it there,
// byte for byte, by a small NVRTC kernel. Identical bytes get the same verdict as the kept
// answer (the host's verify() is a function of the bytes it downloads), so no family rule is
// needed and nothing crosses PCIe; any difference (a wrong answer, or a correct one that differs
// in bits: a float sum's order, another argmax tie, an unstable sort) goes to the host's
// verification as before, which decides and reports the first differing positions.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "jit/jit.hpp"
#include "run/prepare.hpp"

namespace gpuk {

class Workload;
class Launcher;

class DeviceAnswer {
 public:
  // The compare and copy kernels' source (an NVRTC program of its own; tests compile it).
  static const char* source();
  static std::vector<std::string> kernel_names();  // the name expressions to compile

  // Compiles them (or takes them from the cache); any thread, no CUDA context needed.
  static CompiledKernels compile(const Jit& jit);
  // Loads the compiled kernels in the current context.
  DeviceAnswer(const CompiledKernels& compiled, const DeviceInfo& info);
  // Compiles (or takes from the cache) and loads the kernels in the current context.
  DeviceAnswer(const Jit& jit, const DeviceInfo& info) : DeviceAnswer(compile(jit), info) {}

  // Keeps a copy of the outputs (the caller has just verified them on the host), then checks the
  // compare kernel on the device with them: the copy must equal the outputs, and the outputs
  // poisoned must differ from it (so the outputs are left poisoned). False, with `why`, when the
  // copy does not fit in free memory or the check fails: then nothing is kept.
  bool keep(Workload& workload, const Launcher& launcher, const Stream& stream, std::string* why);
  bool kept() const { return !copies_.empty(); }
  // Whether the outputs are byte for byte the kept answer (waits for the stream).
  bool same(const Workload& workload, const Launcher& launcher, const Stream& stream);
  // After same(): the arrays (device_arrays() order) that were outputs with the kept answer's
  // bytes (Workload::known_good); all false before any comparison.
  const std::vector<bool>& identical() const { return identical_; }

 private:
  struct Output {
    CUdeviceptr ptr = 0;
    std::uint64_t bytes = 0;
    std::size_t array = 0;  // its index in device_arrays()
  };
  static std::vector<Output> outputs(const Workload& workload, const Launcher& launcher);
  // The first differing byte offset of a and b over `bytes`, or none (UINT64_MAX).
  std::uint64_t first_difference(CUdeviceptr a, CUdeviceptr b, std::uint64_t bytes, const Stream& stream);
  void copy(CUdeviceptr to, CUdeviceptr from, std::uint64_t bytes, const Stream& stream);
  void launch(CUfunction f, void** args, const Stream& stream);

  int blocks_ = 0;
  LoadedKernels kernels_;
  CUfunction compare_ = nullptr, copy_ = nullptr;
  DeviceBuffer first_;  // 8 bytes: the compare kernel's answer
  std::vector<DeviceBuffer> copies_;
  std::vector<bool> identical_;
};

}  // namespace gpuk
