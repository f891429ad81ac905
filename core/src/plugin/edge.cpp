// The edge between core and a family's objects (plugin/edge.hpp).
#include "plugin/edge.hpp"

#include <utility>

#include "gpuk/error.hpp"

namespace gpuk {

PluginFault fault_of(const std::exception_ptr& thrown, const std::string& family, const std::string& call) {
  using Kind = PluginFault::Kind;
  try {
    std::rethrow_exception(thrown);
  } catch (const TimeLimitError& e) {
    return {Kind::time_limit, e.what()};
  } catch (const FaultError& e) {
    return {Kind::fault, e.what()};
  } catch (const NoDeviceError& e) {
    return {Kind::no_device, e.what()};
  } catch (const DeviceError& e) {
    return {Kind::device, e.what()};
  } catch (const CompileError& e) {
    return {Kind::compile, e.what()};
  } catch (const ConfigError& e) {
    return {Kind::config, e.what()};
  } catch (const Error& e) {
    return {Kind::error, e.what()};
  } catch (const std::exception& e) {
    return {Kind::error, "the " + family + " plugin's " + call + " failed: " + e.what()};
  } catch (...) {
    return {Kind::error, "the " + family + " plugin's " + call + " threw something that is not a std::exception"};
  }
}

void raise(const PluginFault& fault) {
  using Kind = PluginFault::Kind;
  switch (fault.kind) {
    case Kind::time_limit: throw TimeLimitError(fault.message);
    case Kind::fault: throw FaultError(fault.message);
    case Kind::no_device: throw NoDeviceError(fault.message);
    case Kind::device: throw DeviceError(fault.message);
    case Kind::compile: throw CompileError(fault.message);
    case Kind::config: throw ConfigError(fault.message);
    case Kind::error: break;
  }
  throw Error(fault.message);
}

namespace {

// Runs `call` of the family's object; what it throws crosses as a PluginFault.
template <class Call>
auto guarded(const std::string& family, const char* name, Call&& call) -> decltype(call()) {
  std::exception_ptr thrown;
  try {
    return call();
  } catch (...) {
    thrown = std::current_exception();
  }
  raise(fault_of(thrown, family, name));
}

class GuardedLauncher final : public Launcher {
 public:
  GuardedLauncher(std::string family, std::unique_ptr<Launcher> inner)
      : family_(std::move(family)), inner_(std::move(inner)) {}
  std::vector<ArraySlot> arrays() const override {
    return guarded(family_, "Launcher::arrays", [&] { return inner_->arrays(); });
  }
  std::optional<ScalarSlot> scalar() const override {
    return guarded(family_, "Launcher::scalar", [&] { return inner_->scalar(); });
  }
  std::uint64_t scratch_bytes(const LaunchPlan& plan) const override {
    return guarded(family_, "Launcher::scratch_bytes", [&] { return inner_->scratch_bytes(plan); });
  }
  void init_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) const override {
    guarded(family_, "Launcher::init_scratch", [&] { inner_->init_scratch(scratch, bytes, stream); });
  }
  // Written out, not through guarded(): every call of the library API passes here. The guard
  // costs Operation::launch 15 instructions so (callgrind over bench_api_host: 271 -> 286),
  // 26 through guarded().
  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    try {
      inner_->launch(target, call);
    } catch (...) {
      raise(fault_of(std::current_exception(), family_, "Launcher::launch"));
    }
  }

 private:
  std::string family_;
  std::unique_ptr<Launcher> inner_;
};

class GuardedWorkload final : public Workload {
 public:
  GuardedWorkload(std::string family, std::unique_ptr<Workload> inner)
      : family_(std::move(family)), inner_(std::move(inner)) {}
  std::uint64_t bytes_moved() const override {
    return guarded(family_, "Workload::bytes_moved", [&] { return inner_->bytes_moved(); });
  }
  void upload(const Stream& stream) override {
    guarded(family_, "Workload::upload", [&] { inner_->upload(stream); });
  }
  std::vector<CUdeviceptr> device_arrays() const override {
    return guarded(family_, "Workload::device_arrays", [&] { return inner_->device_arrays(); });
  }
  const void* scalar() const override {
    return guarded(family_, "Workload::scalar", [&] { return inner_->scalar(); });
  }
  void poison(const Stream& stream) override {
    guarded(family_, "Workload::poison", [&] { inner_->poison(stream); });
  }
  void download(const Stream& stream) override {
    guarded(family_, "Workload::download", [&] { inner_->download(stream); });
  }
  std::vector<CpuTiming> cpu_reference(int repeats) override {
    return guarded(family_, "Workload::cpu_reference", [&] { return inner_->cpu_reference(repeats); });
  }
  Verification verify() const override {
    return guarded(family_, "Workload::verify", [&] { return inner_->verify(); });
  }
  std::optional<BaselineTiming> library_baseline(int warmup, int repeats, const Stream& stream) override {
    return guarded(family_, "Workload::library_baseline",
                   [&] { return inner_->library_baseline(warmup, repeats, stream); });
  }
  std::vector<std::pair<std::string, std::string>> result() const override {
    return guarded(family_, "Workload::result", [&] { return inner_->result(); });
  }
  void write_result(const std::filesystem::path& path) const override {
    guarded(family_, "Workload::write_result", [&] { inner_->write_result(path); });
  }
  void known_good(const std::vector<bool>& arrays) override {
    guarded(family_, "Workload::known_good", [&] { inner_->known_good(arrays); });
  }
  void keep_as_reference() override {
    guarded(family_, "Workload::keep_as_reference", [&] { inner_->keep_as_reference(); });
  }
  std::optional<std::vector<ExpectedOutput>> expected_outputs() const override {
    return guarded(family_, "Workload::expected_outputs", [&] { return inner_->expected_outputs(); });
  }
  std::vector<CUdeviceptr> restore_sources() const override {
    return guarded(family_, "Workload::restore_sources", [&] { return inner_->restore_sources(); });
  }
  void leave_unrestored(const std::vector<bool>& arrays) override {
    guarded(family_, "Workload::leave_unrestored", [&] { inner_->leave_unrestored(arrays); });
  }

 private:
  std::string family_;
  std::unique_ptr<Workload> inner_;
};

// A family that makes nothing is a plugin bug, said as one.
template <class T>
std::unique_ptr<T> made(std::unique_ptr<T> object, const std::string& family, const char* call) {
  if (!object) throw Error("the " + family + " plugin's " + call + " made nothing");
  return object;
}

// Every virtual of FamilyPlugin is forwarded here, the defaulted ones too: one left out would
// answer with FamilyPlugin's default instead of the family's.
class GuardedPlugin final : public FamilyPlugin {
 public:
  GuardedPlugin(const FamilyPlugin& inner, std::string family) : inner_(inner), family_(std::move(family)) {}
  std::string name() const override {
    return guarded(family_, "name", [&] { return inner_.name(); });
  }
  std::string description() const override {
    return guarded(family_, "description", [&] { return inner_.description(); });
  }
  std::vector<std::string> operations() const override {
    return guarded(family_, "operations", [&] { return inner_.operations(); });
  }
  std::vector<DType> dtypes() const override {
    return guarded(family_, "dtypes", [&] { return inner_.dtypes(); });
  }
  std::vector<OptionSpec> options() const override {
    return guarded(family_, "options", [&] { return inner_.options(); });
  }
  std::string default_kernel() const override {
    return guarded(family_, "default_kernel", [&] { return inner_.default_kernel(); });
  }
  void check(const Problem& problem) const override {
    guarded(family_, "check", [&] { inner_.check(problem); });
  }
  std::vector<std::string> template_args(const Problem& problem) const override {
    return guarded(family_, "template_args", [&] { return inner_.template_args(problem); });
  }
  std::vector<std::vector<std::string>> all_template_args(const KernelFile& file) const override {
    return guarded(family_, "all_template_args", [&] { return inner_.all_template_args(file); });
  }
  std::optional<KernelChoice> choose_kernel(const Problem& problem) const override {
    return guarded(family_, "choose_kernel", [&] { return inner_.choose_kernel(problem); });
  }
  std::unique_ptr<Launcher> make_launcher(const Problem& problem) const override {
    auto inner = guarded(family_, "make_launcher", [&] { return inner_.make_launcher(problem); });
    return std::make_unique<GuardedLauncher>(family_, made(std::move(inner), family_, "make_launcher"));
  }
  std::unique_ptr<Workload> make_workload(const Problem& problem, InputView input) const override {
    auto inner = guarded(family_, "make_workload", [&] { return inner_.make_workload(problem, std::move(input)); });
    return std::make_unique<GuardedWorkload>(family_, made(std::move(inner), family_, "make_workload"));
  }
  std::uint64_t host_bytes(const Problem& problem) const override {
    return guarded(family_, "host_bytes", [&] { return inner_.host_bytes(problem); });
  }
  const void* interface(std::string_view name) const override {
    return guarded(family_, "interface", [&] { return inner_.interface(name); });
  }

 private:
  const FamilyPlugin& inner_;
  std::string family_;
};

}  // namespace

std::unique_ptr<FamilyPlugin> guard_plugin(const FamilyPlugin& plugin, const std::string& family) {
  return std::make_unique<GuardedPlugin>(plugin, family);
}

FamilyParts family_parts(const FamilyPlugin& plugin, const Problem& problem) {
  FamilyParts parts;
  parts.launcher = plugin.make_launcher(problem);
  parts.host_bytes = plugin.host_bytes(problem);
  return parts;
}

}  // namespace gpuk
