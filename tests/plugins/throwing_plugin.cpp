// A family plugin, loaded with dlopen by the edge's test (tests/plugins/test_plugin_edge.cpp),
// whose calls throw what core does not know: a std::exception that is not a gpuk error, and
// something that is not a std::exception at all. Built as libgpuk_family_throwing.so in a
// directory of its own (tests/CMakeLists.txt), never installed.
#include <stdexcept>

#include "plugin/plugin.hpp"

namespace {

using namespace gpuk;

struct ThrowingLauncher : Launcher {
  std::vector<ArraySlot> arrays() const override { throw std::out_of_range("slot 7 of 2"); }
  std::uint64_t scratch_bytes(const LaunchPlan&) const override { return 0; }
  void init_scratch(CUdeviceptr, std::uint64_t, CUstream) const override {}
  void launch(const LaunchTarget&, const DeviceCall&) const override { throw 42; }
};

struct ThrowingWorkload : Workload {
  std::uint64_t bytes_moved() const override { return 0; }
  void upload(const Stream&) override {}
  std::vector<CUdeviceptr> device_arrays() const override { return {}; }
  void poison(const Stream&) override {}
  void download(const Stream&) override {}
  std::vector<CpuTiming> cpu_reference(int) override { throw std::logic_error("the reference's table is empty"); }
  Verification verify() const override { return {}; }
  std::optional<BaselineTiming> library_baseline(int, int, const Stream&) override { return std::nullopt; }
  std::vector<std::pair<std::string, std::string>> result() const override { return {}; }
  void write_result(const std::filesystem::path&) const override {}
};

struct ThrowingPlugin : FamilyPlugin {
  std::string name() const override { return "throwing"; }
  std::string description() const override { return "throws from its Launcher and Workload (a test)"; }
  std::vector<std::string> operations() const override { return {"op"}; }
  std::vector<DType> dtypes() const override { return {DType::float32}; }
  std::vector<OptionSpec> options() const override { return {}; }
  std::string default_kernel() const override { return "none"; }
  void check(const Problem& problem) const override {
    if (problem.n == 13) throw 13;
  }
  std::vector<std::string> template_args(const Problem&) const override { return {}; }
  std::vector<std::vector<std::string>> all_template_args(const KernelFile&) const override { return {}; }
  std::unique_ptr<Launcher> make_launcher(const Problem&) const override { return std::make_unique<ThrowingLauncher>(); }
  std::unique_ptr<Workload> make_workload(const Problem& problem, InputView) const override {
    if (problem.n % 2) throw ConfigError("n must be even");
    return std::make_unique<ThrowingWorkload>();
  }
};

}  // namespace

GPUK_PLUGIN("throwing", ThrowingPlugin)
