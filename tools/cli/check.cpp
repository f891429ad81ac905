// `gpuk check [TARGETS]`: compiles kernel files and the variants configs would choose with NVRTC,
// and reads tune configs and tuning matrices as `gpuk tune` reads them. No GPU needed.
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "tune/matrix/matrix.hpp"
#include "tune/sweep/space.hpp"
#include "util/text.hpp"

namespace fs = std::filesystem;

namespace gpuk::cli {

namespace {

// The GPU's description when there is one (`check` then compiles for it and plans for it).
std::optional<DeviceInfo> gpu_info() {
  std::string why;
  if (device_count(&why) > 0) {
    try {
      return Device(0).info();
    } catch (const Error&) {
    }
  }
  return std::nullopt;
}

class Checker {
 public:
  Checker(const RuntimeOptions& g, const std::string& arch_option)
      : runtime_(g),
        plugins_(runtime_.plugins()),
        kernels_(runtime_.kernels()),
        gpu_(gpu_info()),
        jit_(runtime_.jit(!arch_option.empty() ? arch_option : gpu_ ? gpu_->arch() : "sm_90")),
        arch_(jit_.options().arch) {
    (void)device_of_arch(arch_);  // a wrong --arch is refused before anything is compiled for it
  }

  // Every kernel file when `targets` is empty; the status `gpuk check` exits with.
  int check_all(const std::vector<std::string>& targets) {
    std::vector<std::string> todo = targets;
    if (todo.empty()) {
      for (const auto& f : kernels_.files()) todo.push_back(f->path.string());
      for (const auto& e : kernels_.errors()) {
        ++failures_, ++bad_input_;
        std::cerr << "FAIL  " << terminal_text(e, 4096) << "\n";
      }
    }
    for (const auto& target : todo) guarded(target);
    std::cout << (failures_ ? std::to_string(failures_) + " failed" : "all passed") << "\n";
    // A bad config or kernel file is 2, as `run` says of it; a compile error 1.
    return bad_input_ ? kBadInput : failures_ ? kError : kOk;
  }

 private:
  void guarded(const std::string& target) {
    try {
      check(fs::path(target));
    } catch (const ConfigError& e) {
      ++bad_input_;
      fail(target, e);
    } catch (const Error& e) {
      fail(target, e);
    }
  }

  void fail(const std::string& what, const Error& e) {
    ++failures_;
    std::cout.flush();  // failures go to stderr, in order with the ok lines
    std::cerr << "FAIL  " << terminal_text(what, 400) << "\n" << terminal_text(e.what(), 4096) << "\n";
  }

  void check(const fs::path& path) {
    if (path.extension() == ".yaml" || path.extension() == ".yml") {
      const ConfigKind kind = config_kind_of_file(path);
      if (kind == ConfigKind::run) check_run_config(path);
      else check_tune_config(path, kind);
      return;
    }
    std::error_code ec;
    if (fs::is_directory(path, ec))  // once "not a file without an extension"
      throw ConfigError(path.string() + ": a directory; gpuk check takes configs (.yaml, .yml) and kernel files (.cu) "
                                        "(every kernel file of a directory: gpuk --kernels DIR check)");
    if (path.extension() != ".cu")
      throw ConfigError(path.string() + ": gpuk check takes configs (.yaml, .yml) and kernel files (.cu), not " +
                        (path.extension().empty() ? std::string("a file without an extension")
                                                  : "a " + printable(path.extension().string()) + " file"));
    const KernelFile file = KernelFile::load(path);
    if (file.plain) {
      // Plain CUDA without a declaration: nothing says how to launch or compile it yet.
      std::cout << "ok    " << path.string() << ": a plain kernel file without a declaration; a config's declare: "
                << "(or " << sidecar_of(path).filename().string() << " beside it) runs it (docs/declared.md)\n";
      return;
    }
    const FamilyPlugin& plugin = plugins_.get(file.family);
    check_operations(file, plugin.operations());
    compile(file, plugin.all_template_args(file), {});
  }

  // A tune config or tuning matrix: read as `gpuk tune` reads it, each space's points counted
  // (and, on a GPU of this architecture, planned); `gpuk tune` compiles them.
  void check_tune_config(const fs::path& path, ConfigKind kind) {
    std::vector<TuneSpec> specs;
    if (kind == ConfigKind::matrix)
      for (auto& cell : load_tune_matrix(path, plugins_, kernels_).cells) specs.push_back(std::move(cell.spec));
    else
      specs.push_back(load_tune_spec(path, plugins_, kernels_));
    std::uint64_t points = 0, runnable = 0;
    const bool plan = gpu_ && gpu_->arch() == arch_;
    for (const auto& spec : specs) {
      const Space space = Space::from_spec(spec, kernels_);
      const Problem problem = problem_of(spec.run);
      const std::vector<std::string> args = plugins_.get(spec.run.family).template_args(problem);
      const std::string which = specs.size() > 1 ? " of cell " + std::to_string(&spec - specs.data() + 1) : "";
      std::uint64_t here = 0;
      if (plan) {
        std::optional<std::string> first;
        for (std::uint64_t i = 0; i < space.size(); ++i) {
          const auto why = space.prune(space.at(i), args, launch_limits(problem, *gpu_));
          here += !why;
          if (why && !first) first = why;
        }
        if (here == 0)
          throw ConfigError(path.string() + ": no point of the space" + which + " can run on this " + arch_ +
                            " GPU (every one breaks a constraint or limit): " + first.value_or("the space is empty"));
      } else {
        // Without a GPU: what no GPU runs at the config's sizes (an integer past its dtype, a
        // `when` that never holds) fails every point of every tune: refused, as a run's check is.
        if (const auto why = space.why_no_gpu_runs(args, problem))
          throw ConfigError(path.string() + ": no point of the space" + which + " can run on any GPU: " + *why);
        here = space.size();
      }
      points += space.size();
      runnable += here;
    }
    std::cout << "ok    " << path.string() << ": "
              << (kind == ConfigKind::matrix ? "tuning matrix of " + std::to_string(specs.size()) + " cells, "
                                             : std::string("tune config, "))
              << points << " points" << (plan ? " (" + std::to_string(runnable) + " run on this GPU)" : "")
              << "; gpuk tune compiles them\n";
  }

  // The variant a run would choose: on this GPU, or (no GPU) by the architecture alone.
  void check_run_config(const fs::path& path) {
    const RunSpec spec = load_run_spec(path, plugins_, kernels_);
    const FamilyPlugin& plugin = plugins_.get(spec.family);
    const Problem problem = problem_of(spec);
    const DeviceInfo info = gpu_ && gpu_->arch() == arch_ ? *gpu_ : device_of_arch(arch_);
    const TuningSources tuning = tuning_sources(spec, kernels_, runtime_.tuning_db(), arch_);
    const Choice choice = choose_variant(problem, variant_request(spec), plugin, kernels_, info, tuning,
                                         /*check_plans=*/info.sm_count > 0);
    for (const auto& w : tuning.warnings) std::cerr << "gpuk: warning: " << terminal_text(w, 4096) << "\n";
    for (const auto& w : choice.warnings) std::cerr << "gpuk: warning: " << terminal_text(w, 4096) << "\n";
    // What every run refuses before its first launch (check once said ok for them): on this GPU
    // with its limits; without one, what no GPU could run (run/choose.hpp).
    check_plan(problem, plugin, *choice.variant, gpu_ && gpu_->arch() == arch_ ? &*gpu_ : nullptr);
    compile(*choice.file, {plugin.template_args(problem)}, choice.params);
  }

  void compile(const KernelFile& file, const std::vector<std::vector<std::string>>& arg_sets,
               const std::map<std::string, std::int64_t>& params) {
    std::vector<std::string> names;
    const auto shared = std::make_shared<const KernelFile>(file);
    for (const auto& args : arg_sets)
      for (const auto& name : kernel_names(Variant(shared, args, params))) names.push_back(name);
    const CompiledVariant c = compile_variant(file, names, jit_);
    std::cout << "ok    " << file.path.string() << ": " << names.size() << (names.size() == 1 ? " kernel" : " kernels")
              << " for " << arch_ << " (" << (c.from_cache ? "cached" : std::to_string(static_cast<int>(c.ms)) + " ms")
              << ")\n";
    if (!c.kernels->log.empty()) std::cout << c.kernels->log << "\n";
  }

  const Runtime runtime_;
  const PluginRegistry& plugins_;
  const KernelLibrary& kernels_;
  const std::optional<DeviceInfo> gpu_;
  const Jit& jit_;
  const std::string arch_;
  int failures_ = 0, bad_input_ = 0;
};

}  // namespace

int cmd_check(const RuntimeOptions& g, const std::vector<std::string>& targets, const std::string& arch_option) {
  Checker checker(g, arch_option);
  return checker.check_all(targets);
}

}  // namespace gpuk::cli
