// Verification on the device for a sweep: the first variant's answer that passes the host's
// verification is kept on the GPU, and each later variant's outputs are compared with it there,
// byte for byte, by a small NVRTC kernel. Identical bytes get the same verdict as the kept
// answer (the host's verify() is a function of the bytes it downloads), so no family rule is
// needed and nothing crosses PCIe; any difference (a wrong answer, or a correct one that differs
// in bits: a float sum's order, another argmax tie, an unstable sort) goes to the host's
// verification as before, which decides and reports the first differing positions.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "jit/jit.hpp"
#include "plugin/plugin.hpp"
#include "run/prepare.hpp"

namespace gpuk {

class DeviceAnswer {
 public:
  // The compare and copy kernels' source (an NVRTC program of its own; tests compile it).
  static const char* source();
  static std::vector<std::string> kernel_names();  // the name expressions to compile

  // Compiles them (or takes them from the cache); any thread, no CUDA context needed.
  // `processes`: in one of them (jit/nvrtc_processes.hpp).
  static CompiledKernels compile(const Jit& jit, NvrtcProcesses* processes = nullptr);
  // Loads the compiled kernels in the current context.
  DeviceAnswer(const CompiledKernels& compiled, const DeviceInfo& info);
  // Compiles (or takes from the cache) and loads the kernels in the current context.
  DeviceAnswer(const Jit& jit, const DeviceInfo& info) : DeviceAnswer(compile(jit), info) {}
  // The compare rule's kernels (gpuk_within<T>), a program of their own: compiled beside the
  // sweep and loaded when ready, before keep_expected().
  static const char* within_source();
  static std::vector<std::string> within_kernel_names();
  static CompiledKernels compile_within(const Jit& jit, NvrtcProcesses* processes = nullptr);
  void load_within(const CompiledKernels& compiled);

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
  // After same(): the in-out arrays (device_arrays() order) that the variant left with their
  // input's bytes: identical to the kept answer, which keep() found equal to the input
  // (Workload::restore_sources). A sweep need not restore them before the variant's timed runs.
  std::vector<bool> unchanged_inputs() const;

  // After keep() and load_within(): the workload's expected outputs (Workload::expected_outputs) copied to the
  // device, so that within() can apply verify()'s rule there; the rule's kernel is checked on them
  // first (the kept answer passes, the outputs poisoned (left so) fail). False, with `why`, when they do not
  // fit beside the kept answer (the room keep() leaves) or the check fails: then within() has
  // nothing to apply.
  bool keep_expected(Workload& workload, const std::vector<ExpectedOutput>& expected, const Stream& stream,
                     std::string* why);
  bool has_expected() const { return !expected_.empty(); }
  // Each kept expected output against the variant's on the device by its rule: the passed
  // Verification verify() would give (its numbers, "compared on the GPU"), or nullopt when an
  // output fails (the host's verification then decides and says where). Waits for the stream.
  std::optional<Verification> within(const Workload& workload, const Stream& stream);

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
  // within() on the arrays array_at gives by their index in device_arrays() (0: none).
  std::optional<Verification> within_at(const std::function<CUdeviceptr(std::size_t)>& array_at, const Stream& stream);

  int blocks_ = 0;
  LoadedKernels kernels_;
  CUfunction compare_ = nullptr, copy_ = nullptr;
  DeviceBuffer first_;  // 8 bytes: the compare kernel's answer
  std::vector<DeviceBuffer> copies_;
  std::vector<std::size_t> copy_arrays_;  // each copy's index in device_arrays()
  std::vector<bool> identical_;
  std::vector<bool> leaves_input_;  // per array: an in-out array the kept answer left as its input
  struct Expected {
    ExpectedOutput output;  // its `expected` pointer is not kept: the values are in `values`
    DeviceBuffer values;
  };
  std::vector<Expected> expected_;
  LoadedKernels within_kernels_;
  CUfunction within_[6] = {};  // gpuk_within<T> by DType
  DeviceBuffer counts_;        // 3 x 8 bytes: gpuk_within's answer
};

}  // namespace gpuk
