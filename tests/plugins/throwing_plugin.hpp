// A family whose calls throw: a std::exception that is not a gpuk error, something that is not a
// std::exception at all, and gpuk errors of several kinds. The edge's test
// (test_plugin_edge.cpp) makes it in-process and loads it with dlopen, built alone as
// libgpuk_family_throwing.so (throwing_plugin.cpp; tests/CMakeLists.txt, never installed).
#pragma once
#include <new>
#include <stdexcept>
#include <string_view>

#include "gpuk/error.hpp"
#include "plugin/plugin.hpp"

namespace gpuk::test {

struct ThrowingLauncher : Launcher {
  std::vector<ArraySlot> arrays() const override { throw std::out_of_range("slot 7 of 2"); }
  std::uint64_t scratch_bytes(const LaunchPlan&) const override { throw 42; }
  void init_scratch(CUdeviceptr, std::uint64_t, CUstream) const override {
    throw ConfigError("this plan needs a counter");
  }
  void launch(const LaunchTarget&, const DeviceCall&) const override { throw FaultError("the kernel trapped"); }
};

struct ThrowingWorkload : Workload {
  std::uint64_t bytes_moved() const override { throw NoDeviceError("no GPU here"); }
  void upload(const Stream&) override {}
  std::vector<CUdeviceptr> device_arrays() const override { return {}; }
  void poison(const Stream&) override {}
  void download(const Stream&) override {}
  std::vector<CpuTiming> cpu_reference(int) override { throw std::logic_error("the reference's table is empty"); }
  Verification verify() const override { return {}; }
  std::optional<BaselineTiming> library_baseline(int, int, const Stream&) override { return std::nullopt; }
  std::vector<std::pair<std::string, std::string>> result() const override { throw std::bad_alloc(); }
  void write_result(const std::filesystem::path&) const override {}
};

struct ThrowingPlugin : FamilyPlugin {
  // What make_workload does for an even n (an odd one is refused with a ConfigError).
  enum class Workloads { made, bad_alloc, none };
  Workloads workloads = Workloads::made;

  std::string name() const override { return "throwing"; }
  std::string description() const override { return "throws from its Launcher and Workload (a test)"; }
  std::vector<std::string> operations() const override { return {"op"}; }
  std::vector<DType> dtypes() const override { return {DType::float32}; }
  std::vector<OptionSpec> options() const override { return {}; }
  std::string default_kernel() const override { return "none"; }
  void check(const Problem& problem) const override {
    if (problem.n == 13) throw 13;
  }
  // The functions FamilyPlugin gives defaults for, answered otherwise: the edge must forward them.
  std::optional<KernelChoice> choose_kernel(const Problem&) const override { return KernelChoice{"picked", {}, "n"}; }
  std::uint64_t host_bytes(const Problem&) const override { return 12345; }
  const void* interface(std::string_view name) const override { return name == "throwing" ? this : nullptr; }
  std::vector<std::string> template_args(const Problem&) const override { return {}; }
  std::vector<std::vector<std::string>> all_template_args(const KernelFile&) const override { return {}; }
  std::unique_ptr<Launcher> make_launcher(const Problem&) const override { return std::make_unique<ThrowingLauncher>(); }
  std::unique_ptr<Workload> make_workload(const Problem& problem, InputView) const override {
    if (problem.n % 2) throw ConfigError("n must be even");
    switch (workloads) {
      case Workloads::made: return std::make_unique<ThrowingWorkload>();
      case Workloads::bad_alloc: throw std::bad_alloc();
      case Workloads::none: break;
    }
    return nullptr;
  }
};

}  // namespace gpuk::test
