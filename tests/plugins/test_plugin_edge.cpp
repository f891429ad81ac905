// The edge (plugin/edge.hpp): whatever a family, its Launcher or its Workload throws reaches core
// as one of gpuk's errors, its kind kept, and anything that is not a gpuk error named by family
// and call; the plugins the registry loads are behind it.
#include <doctest/doctest.h>

#include <stdexcept>
#include <typeinfo>

#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "plugin/edge.hpp"
#include "plugin/plugin.hpp"
#include "run/host_side.hpp"
#include "run/prepare.hpp"
#include "throwing_plugin.hpp"

using namespace gpuk;

namespace {

using test::ThrowingPlugin;

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
  const ThrowingPlugin family;
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
  ThrowingPlugin family;
  const auto guarded = guard_plugin(family, "throwing");
  const FamilyPlugin& plugin = *guarded;
  const RunSpec spec = spec_of_throwing();
  // The host side of a sweep (run/host_side.hpp) makes the workload and runs its CPU reference.
  CHECK_THROWS_WITH_AS(make_host_side(spec, plugin),
                       "the throwing plugin's Workload::cpu_reference failed: the reference's table is empty", Error);
  const auto workload = make_run_workload(spec, plugin);
  CHECK_THROWS_WITH_AS(workload->result(), "the throwing plugin's Workload::result failed: std::bad_alloc", Error);
  CHECK_THROWS_WITH_AS(workload->bytes_moved(), "no GPU here", NoDeviceError);
  family.workloads = ThrowingPlugin::Workloads::bad_alloc;
  CHECK_THROWS_WITH_AS(make_run_workload(spec, plugin), "the throwing plugin's make_workload failed: std::bad_alloc",
                       Error);
  family.workloads = ThrowingPlugin::Workloads::none;
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
  // A gpuk error keeps its kind across dlopen: the CLI reads a fault's exit status from it.
  CHECK_THROWS_WITH_AS(plugin.make_launcher(problem_of(spec))->launch(LaunchTarget{plan, nullptr, nullptr, where},
                                                                      DeviceCall{}),
                       "the kernel trapped", FaultError);
  CHECK_THROWS_WITH_AS(plugin.make_launcher(problem_of(spec))->scratch_bytes(plan),
                       "the throwing plugin's Launcher::scratch_bytes threw something that is not a std::exception",
                       Error);
  spec.size = 13;
  CHECK_THROWS_WITH_AS(plugin.check(problem_of(spec)),
                       "the throwing plugin's check threw something that is not a std::exception", Error);
  // The plugin's ConfigError keeps its kind, and the run's host side adds the config's name, as
  // before the edge.
  CHECK_THROWS_WITH_AS(make_host_side(spec, plugin), "throwing.yaml: n must be even", ConfigError);
  CHECK(plugin.description() == "throws from its Launcher and Workload (a test)");
}

TEST_CASE("the edge forwards the functions FamilyPlugin gives defaults for, not the defaults") {
  const ThrowingPlugin family;
  const auto plugin = guard_plugin(family, "throwing");
  const Problem problem = problem_of(spec_of_throwing());
  CHECK(plugin->host_bytes(problem) == 12345);
  REQUIRE(plugin->choose_kernel(problem).has_value());
  CHECK(plugin->choose_kernel(problem)->kernel == "picked");
  CHECK(plugin->interface("throwing") == &family);
  CHECK_NOTHROW(plugin->check(problem));
  Problem thirteen = problem;
  thirteen.n = 13;
  CHECK_THROWS_AS(plugin->check(thirteen), Error);
}
