// The declared-kernel family ("kernel"): kernels of any signature whose operation is declared in
// YAML (docs/declared.md), including plain kernel files written for other tuners. Core parses the
// declaration (kernel/declaration.hpp) and resolves each launch's arguments into its plan; this
// plugin passes them to the kernels and owns the run's data, its comparison and its report.
#include <algorithm>
#include <cstring>

#include "declared_workload.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"

namespace gpuk::declared {

std::uint64_t array_length(const Problem& problem, const DeclaredArg& arg) {
  const std::int64_t v = eval_sizes(arg.length, problem.sizes);
  if (v < 0) throw ConfigError("array " + arg.name + " has " + std::to_string(v) + " elements ('" + arg.length.text() + "')");
  return static_cast<std::uint64_t>(v);
}

namespace {

const Declaration& declaration_of(const Problem& problem) {
  if (!problem.declaration)
    throw ConfigError("the kernel family runs declared kernels: its configs give sizes: and a kernel with a declaration "
                      "(docs/declared.md)");
  return *problem.declaration;
}

// Enqueues a plan whose launches carry their own resolved arguments (ResolvedLaunch::args): the
// call's arrays by index, parts of the scratch by offset, values by their bytes. The scratch is
// zeroed before every run of the sequence (a pass's partial results start from zero).
class DeclaredLauncher final : public Launcher {
 public:
  explicit DeclaredLauncher(const Problem& problem) {
    for (const DeclaredArg* a : declaration_of(problem).arrays())
      arrays_.push_back({a->name, a->role != ArgRole::in, std::string(dtype_name(a->dtype)),
                         array_length(problem, *a) * dtype_size(a->dtype), false});
  }

  std::vector<ArraySlot> arrays() const override { return arrays_; }
  std::uint64_t scratch_bytes(const LaunchPlan& plan) const override { return plan.scratch_bytes; }
  void init_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) const override {
    GPUK_CU(driver().cuMemsetD8Async(scratch, 0, bytes, stream));
  }

  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    if (target.plan.scratch_bytes > call.scratch_bytes)
      throw Error(target.where + " needs " + std::to_string(target.plan.scratch_bytes) + " bytes of scratch; the call gives " +
                  std::to_string(call.scratch_bytes));
    if (target.plan.scratch_bytes > 0)
      GPUK_CU(driver().cuMemsetD8Async(call.scratch, 0, target.plan.scratch_bytes, target.stream),
              "zeroing the scratch of " + target.where);
    constexpr std::size_t kMostArgs = 64;
    CUdeviceptr pointers[kMostArgs];
    void* args[kMostArgs];
    for (std::size_t i = 0; i < target.plan.launches.size(); ++i) {
      const ResolvedLaunch& l = target.plan.launches[i];
      if (l.args.size() > kMostArgs) throw Error(target.where + ": more than 64 kernel arguments");
      for (std::size_t a = 0; a < l.args.size(); ++a) {
        const LaunchArg& arg = l.args[a];
        switch (arg.kind) {
          case LaunchArg::Kind::array:
            args[a] = const_cast<CUdeviceptr*>(&call.arrays[arg.index]);
            break;
          case LaunchArg::Kind::scratch:
            pointers[a] = call.scratch + arg.bits;
            args[a] = &pointers[a];
            break;
          case LaunchArg::Kind::value:
            args[a] = const_cast<std::uint64_t*>(&arg.bits);
            break;
        }
      }
      for (std::uint32_t r = 0; r < l.repeat; ++r) launch_kernel(target.functions[i], l, args, target.stream, target.where);
    }
  }

 private:
  std::vector<ArraySlot> arrays_;
};

class KernelPlugin final : public FamilyPlugin {
 public:
  std::string name() const override { return "kernel"; }
  std::string description() const override {
    return "any kernel whose operation is declared in YAML: sizes, arguments, launches, data and reference";
  }
  // A declared kernel is its own operation (the config's kernel:); the family lists none.
  std::vector<std::string> operations() const override { return {}; }
  std::vector<DType> dtypes() const override { return all_dtypes(); }
  std::vector<OptionSpec> options() const override { return {}; }
  std::string default_kernel() const override { return ""; }
  std::vector<std::string> template_args(const Problem&) const override { return {}; }
  std::vector<std::vector<std::string>> all_template_args(const KernelFile&) const override { return {{}}; }

  std::unique_ptr<Launcher> make_launcher(const Problem& problem) const override {
    return std::make_unique<DeclaredLauncher>(problem);
  }
  std::unique_ptr<Workload> make_workload(const Problem& problem, InputView input) const override {
    declaration_of(problem);
    return make_declared_workload(problem, std::move(input));
  }
  // Inputs, their pristine copies (in-out arrays), downloaded outputs and the expected ones.
  std::uint64_t host_bytes(const Problem& problem) const override {
    std::uint64_t bytes = 0;
    for (const DeclaredArg* a : declaration_of(problem).arrays())
      bytes += (a->role == ArgRole::in ? 1 : 3) * array_length(problem, *a) * dtype_size(a->dtype);
    return bytes;
  }
};

}  // namespace
}  // namespace gpuk::declared

GPUK_PLUGIN("kernel", gpuk::declared::KernelPlugin)
