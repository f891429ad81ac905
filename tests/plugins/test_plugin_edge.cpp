// The edge (plugin/edge.hpp): whatever a family, its Launcher or its Workload throws reaches core
// as one of gpuk's errors, its kind kept, and anything that is not a gpuk error named by family
// and call; the plugins the registry loads are behind it.
#include <doctest/doctest.h>

#include <new>
#include <stdexcept>
#include <typeinfo>

#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "plugin/edge.hpp"
#include "plugin/plugin.hpp"
#include "run/host_side.hpp"
#include "run/prepare.hpp"

using namespace gpuk;

namespace {

// A launcher whose every call throws something else.
struct ThrowingLauncher : Launcher {
  std::vector<ArraySlot> arrays() const override { throw std::out_of_range("slot 7 of 2"); }
  std::uint64_t scratch_bytes(const LaunchPlan&) const override { throw 42; }
  void init_scratch(CUdeviceptr, std::uint64_t, CUstream) const override {
    throw ConfigError("this plan needs a counter");
  }
  void launch(const LaunchTarget&, const DeviceCall&) const override { throw FaultError("the kernel trapped"); }
};

// A workload that is made, then fails in its CPU reference.
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

struct Throwing : FamilyPlugin {
  enum class Workloads { made, refused, bad_alloc, none };
  Workloads workloads = Workloads::made;
  std::string name() const override { return "throwing"; }
  std::string description() const override { return ""; }
  std::vector<std::string> operations() const override { return {"op"}; }
  std::vector<DType> dtypes() const override { return {DType::float32}; }
  std::vector<OptionSpec> options() const override { return {}; }
  std::string default_kernel() const override { return ""; }
  std::vector<std::string> template_args(const Problem&) const override { return {}; }
  std::vector<std::vector<std::string>> all_template_args(const KernelFile&) const override { return {}; }
  std::unique_ptr<Launcher> make_launcher(const Problem&) const override { return std::make_unique<ThrowingLauncher>(); }
  std::unique_ptr<Workload> make_workload(const Problem&, InputView) const override {
    switch (workloads) {
      case Workloads::made: return std::make_unique<ThrowingWorkload>();
      case Workloads::refused: throw ConfigError("n must be even");
      case Workloads::bad_alloc: throw std::bad_alloc();
      case Workloads::none: break;
    }
    return nullptr;
  }
};

RunSpec spec_of_throwing() {
  RunSpec spec;
  spec.path = "throwing.yaml";
  spec.family = "throwing";
  spec.operation = "op";
  spec.dtype = DType::float32;
  spec.size = 1000;
  return spec;
}

}  // namespace

TEST_CASE("a Launcher's exceptions reach core as gpuk errors, foreign ones named by family and call") {
  const Throwing family;
  const auto plugin = guard_plugin(family, "throwing");
  const auto launcher = plugin->make_launcher(problem_of(spec_of_throwing()));
  CHECK_THROWS_WITH_AS(launcher->arrays(), "the throwing plugin's Launcher::arrays failed: slot 7 of 2", Error);
  CHECK_THROWS_WITH_AS(launcher->scratch_bytes(LaunchPlan{}),
                       "the throwing plugin's Launcher::scratch_bytes threw something that is not a std::exception",
                       Error);
  // gpuk's own errors keep their kind and words: the CLI's exit status reads the kind.
  CHECK_THROWS_WITH_AS(launcher->init_scratch(0, 0, nullptr), "this plan needs a counter", ConfigError);
  const std::string where = "variant x";
  const LaunchPlan plan;
  CHECK_THROWS_WITH_AS(launcher->launch(LaunchTarget{plan, nullptr, nullptr, where}, DeviceCall{}),
                       "the kernel trapped", FaultError);
  // The fit check, which reads the Launcher's arrays, says the same.
  CHECK_THROWS_WITH_AS(run_device_bytes(spec_of_throwing(), *plugin),
                       "the throwing plugin's Launcher::arrays failed: slot 7 of 2", Error);
}

TEST_CASE("a Workload's exceptions reach core's host side as gpuk errors") {
  Throwing family;
  const auto guarded = guard_plugin(family, "throwing");
  const FamilyPlugin& plugin = *guarded;
  const RunSpec spec = spec_of_throwing();
  // The host side of a sweep (run/host_side.hpp) makes the workload and runs its CPU reference.
  CHECK_THROWS_WITH_AS(make_host_side(spec, plugin),
                       "the throwing plugin's Workload::cpu_reference failed: the reference's table is empty", Error);
  const auto workload = make_run_workload(spec, plugin);
  CHECK_THROWS_WITH_AS(workload->result(), "the throwing plugin's Workload::result failed: std::bad_alloc", Error);
  CHECK_THROWS_WITH_AS(workload->bytes_moved(), "no GPU here", NoDeviceError);
  // A ConfigError from make_workload gains the config's name, as before the edge.
  family.workloads = Throwing::Workloads::refused;
  CHECK_THROWS_WITH_AS(make_run_workload(spec, plugin), "throwing.yaml: n must be even", ConfigError);
  family.workloads = Throwing::Workloads::bad_alloc;
  CHECK_THROWS_WITH_AS(make_run_workload(spec, plugin), "the throwing plugin's make_workload failed: std::bad_alloc",
                       Error);
  family.workloads = Throwing::Workloads::none;
  CHECK_THROWS_WITH_AS(make_run_workload(spec, plugin), "the throwing plugin's make_workload made nothing", Error);
}

TEST_CASE("a plugin's exception crosses the edge as a value and is raised again with its kind") {
  const auto round_trip = [](auto thrown) {
    try {
      raise(fault_of(std::make_exception_ptr(thrown), "f", "Workload::verify"));
    } catch (const Error& e) {
      return std::string(typeid(e).name()) + " " + e.what();
    }
    return std::string("nothing thrown");
  };
  CHECK(round_trip(TimeLimitError("t")) == std::string(typeid(TimeLimitError).name()) + " t");
  CHECK(round_trip(NoDeviceError("n")) == std::string(typeid(NoDeviceError).name()) + " n");
  CHECK(round_trip(DeviceError("d")) == std::string(typeid(DeviceError).name()) + " d");
  CHECK(round_trip(CompileError("c")) == std::string(typeid(CompileError).name()) + " c");
  CHECK(round_trip(Error("e")) == std::string(typeid(Error).name()) + " e");
  CHECK(round_trip(std::runtime_error("r")) ==
        std::string(typeid(Error).name()) + " the f plugin's Workload::verify failed: r");
  const PluginFault fault = fault_of(std::make_exception_ptr(ConfigError("c")), "f", "check");
  CHECK(fault.kind == PluginFault::Kind::config);
  CHECK(fault.message == "c");
}

TEST_CASE("a loaded plugin's exceptions stop at the edge: core reports them as its own errors") {
  // libgpuk_family_throwing.so (tests/plugins/throwing_plugin.cpp), loaded with dlopen.
  const PluginRegistry registry({GPUK_THROWING_PLUGIN_DIR});
  REQUIRE(registry.errors().empty());
  const FamilyPlugin& plugin = registry.get("throwing");
  RunSpec spec = spec_of_throwing();
  CHECK_THROWS_WITH_AS(run_device_bytes(spec, plugin), "the throwing plugin's Launcher::arrays failed: slot 7 of 2",
                       Error);
  CHECK_THROWS_WITH_AS(make_host_side(spec, plugin),
                       "the throwing plugin's Workload::cpu_reference failed: the reference's table is empty", Error);
  const std::string where = "variant x";
  const LaunchPlan plan;
  CHECK_THROWS_WITH_AS(plugin.make_launcher(problem_of(spec))->launch(LaunchTarget{plan, nullptr, nullptr, where},
                                                                      DeviceCall{}),
                       "the throwing plugin's Launcher::launch threw something that is not a std::exception", Error);
  spec.size = 13;
  CHECK_THROWS_WITH_AS(plugin.check(problem_of(spec)),
                       "the throwing plugin's check threw something that is not a std::exception", Error);
  // The plugin's ConfigError keeps its kind, and the run's host side adds the config's name.
  CHECK_THROWS_WITH_AS(make_host_side(spec, plugin), "throwing.yaml: n must be even", ConfigError);
  CHECK(plugin.description() == "throws from its Launcher and Workload (a test)");
}
