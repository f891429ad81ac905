// Which variant runs: the one named, else the first of four sources that knows one that runs
// here (run/choose.hpp).
#include "kernel/default_kernel.hpp"
#include "run/choose.hpp"

#include <cmath>
#include <optional>
#include <sstream>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "kernel/constants.hpp"
#include "plugin/plugin.hpp"
#include "tuning/tuning_db.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

std::string size_text(std::uint64_t n) {
  if (n > 0 && (n & (n - 1)) == 0) return "2^" + std::to_string(size_bucket(n));
  return std::to_string(n);
}

namespace {

std::string problem_text(const Problem& p) {
  std::string out = p.family + " " + p.operation;
  for (const auto& [k, v] : p.options) out += " " + k + "=" + v;
  return out + " " + std::string(dtype_name(p.dtype)) + " n = " + std::to_string(p.n);
}

std::string params_text(const std::map<std::string, std::int64_t>& params) {
  std::string out;
  for (const auto& [k, v] : params) out += " " + k + "=" + std::to_string(v);
  return out;
}

// The kernel file `kernel` of the problem's family, when it implements the problem; else
// ConfigError with the config reader's words.
std::shared_ptr<const KernelFile> kernel_for(const Problem& p, const std::string& kernel, const KernelLibrary& kernels) {
  auto file = kernels.find(p.family, kernel);
  if (!file->supports(p.operation))
    throw ConfigError("kernel " + file->name + " does not implement '" + p.operation + "' (it implements " +
                      join(file->operations) + ")");
  if (!file->supports(p.dtype))
    throw ConfigError("kernel " + file->name + " does not support dtype " + std::string(dtype_name(p.dtype)));
  return file;
}

// The variant of `file` with `params`; throws ConfigError when it cannot serve the problem on
// this device: a value the metadata no longer allows, or (with check_plans) a constraint or a
// launch limit broken for n or max_n.
std::shared_ptr<const Variant> usable(const Problem& p, std::shared_ptr<const KernelFile> file,
                                      const std::map<std::string, std::int64_t>& params,
                                      const std::vector<std::string>& leading, const DeviceInfo& device,
                                      bool check_plans) {
  auto variant = std::make_shared<const Variant>(std::move(file), leading, params);
  if (check_plans) {
    Problem at = p;
    for (const std::uint64_t n : {p.n, p.max_n}) {
      at.n = n;
      plan_launches(*variant, launch_limits(at, device));
    }
  }
  return variant;
}

// False when a tuned entry's variant breaks one of its kernel's constraints for the problem's n
// (or max_n): an entry tuned at 2^12 is offered for its whole bucket and its neighbours, where a
// variant such as rank_bucket (n <= BLOCK * ITEMS) may not reach. Such an entry is not stale, it
// just does not serve this n: the lookup passes it by without a warning. Anything else wrong
// with it (a kernel gone, a value no longer allowed) is left for `usable` to report.
bool serves_size(const Problem& p, const std::string& kernel, const std::map<std::string, std::int64_t>& params,
                 const std::vector<std::string>& leading, const KernelLibrary& kernels, const DeviceInfo& device) {
  try {
    const Variant variant(kernel_for(p, kernel, kernels), leading, params);
    for (const std::uint64_t n : {p.n, p.max_n}) {
      Problem at = p;
      at.n = n;
      if (broken_constraint(variant, launch_limits(at, device))) return false;
    }
  } catch (const ConfigError&) {
  }
  return true;
}

// "n within 2x of the tuned 2^24" / "n's size bucket, 2^24".
std::string nearness(const TuningEntry& e, bool exact, std::uint64_t n) {
  const std::uint64_t tuned = e.size ? e.size : std::uint64_t{1} << e.key.bucket;
  if (exact) return "tuned at n = " + size_text(tuned) + ", n's size bucket";
  const double ratio = static_cast<double>(std::max(n, tuned)) / static_cast<double>(std::min(n, tuned));
  return "n within " + std::to_string(static_cast<long long>(std::ceil(ratio - 1e-9))) + "x of the tuned " +
         size_text(tuned);
}

std::string entry_text(const TuningEntry& e) {
  std::ostringstream out;
  out << "the fastest of " << e.evaluated << (e.evaluated == 1 ? " variant" : " variants");
  if (!e.tuned_at.empty()) out << " tuned " << e.tuned_at;
  if (!e.key.gpu.empty()) out << " on " << e.key.gpu;
  if (!e.strategy.empty() || e.median_ms > 0) out << " (" << e.strategy << (e.strategy.empty() ? "" : ", ") << e.median_ms << " ms)";
  if (!e.ties.empty()) out << "; tied within the noise with " << e.ties.size() << " other(s)";
  return out.str();
}

}  // namespace

LaunchLimits launch_limits(const Problem& problem, const DeviceInfo& info) {
  // Dynamic shared memory up to the device's opt-in limit: launch_kernel opts in above 48 KiB.
  LaunchLimits limits{static_cast<std::int64_t>(problem.n), info.sm_count, static_cast<int>(dtype_size(problem.dtype)),
                      info.max_threads_per_block, std::max(kSharedWithoutOptIn, info.max_shared_per_block_optin),
                      problem.sizes};  // a declared kernel's sizes
  return limits;
}

Choice choose_variant(const Problem& problem, const VariantRequest& request, const FamilyPlugin& plugin,
                      const KernelLibrary& kernels, const DeviceInfo& device, const TuningSources& tuning,
                      bool check_plans) {
  Choice c;
  // The family's leading template arguments: one list for every variant this problem may run.
  const std::vector<std::string> leading = plugin.template_args(problem);
  if (request.mode == VariantRequest::Mode::named) {
    c.source = Choice::Source::named;
    c.file = kernel_for(problem, request.kernel, kernels);
    c.variant = std::make_shared<const Variant>(c.file, leading, request.params);  // words a bad value's error
    c.params = request.params;
    c.why = "named: " + c.file->name + params_text(request.params) + " as given (other parameters at the metadata's defaults)";
    return c;
  }
  // A declared kernel is its own operation: the lookup falls back to it.
  const std::string fallback =
      problem.declaration ? problem.operation : default_kernel_for(kernels, problem.family, problem.operation, plugin.default_kernel());
  if (request.mode == VariantRequest::Mode::defaults) {
    c.file = kernel_for(problem, fallback, kernels);
    c.variant = std::make_shared<const Variant>(c.file, leading, std::map<std::string, std::int64_t>{});
    c.why = "variant: default: " + fallback + ", the " + problem.family + " family's default kernel, with its metadata's defaults";
    return c;
  }

  // The lookup. `misses` says why each source before the one that answers had nothing.
  std::vector<std::string> misses;
  const auto try_pick = [&](const std::string& who, const std::string& kernel,
                            const std::map<std::string, std::int64_t>& params) -> bool {
    try {
      auto file = kernel_for(problem, kernel, kernels);
      c.variant = usable(problem, file, params, leading, device, check_plans);
      c.file = std::move(file);
      c.params = params;
      return true;
    } catch (const ConfigError& e) {
      c.warnings.push_back(who + " names " + kernel + params_text(params) + " for " + problem_text(problem) +
                           ", which cannot run here: " + e.what() + "; the next source is asked");
      misses.push_back(who + "'s pick cannot run here");
      return false;
    }
  };
  const TuningKey key{device.name, device.arch(), problem.family, problem.operation, options_key(problem.options),
                      std::string(dtype_name(problem.dtype)), size_bucket(problem.n)};

  // 1. The user's tuning database (or the file given instead).
  if (tuning.user) {
    const std::string who = (tuning.user_file_given ? "tuning file " : "user tuning database ") + tuning.user->path.string();
    const auto pick = tuning.user->db->pick(key);
    if (pick.entry && !serves_size(problem, pick.entry->kernel, pick.entry->params, leading, kernels, device)) {
      misses.push_back("the tuned entry nearest n does not serve n = " + size_text(problem.n));
    } else if (!pick.entry) {
      misses.push_back(tuning.user_file_given ? "no entry for this GPU in " + tuning.user->path.string()
                                              : "no tuned entry for this GPU");
    } else if (try_pick(who, pick.entry->kernel, pick.entry->params)) {
      c.source = Choice::Source::user_db;
      c.why = who + " (" + nearness(*pick.entry, pick.exact, problem.n) + "): " + entry_text(*pick.entry);
      return c;
    }
  } else {
    misses.push_back(tuning.user_off ? "the TuningPolicy leaves the user's tuning database out" : "no tuned entry for this GPU");
  }

  // 2. The tuning files shipped for this architecture, the built-in directory's first; in each,
  // an entry of this GPU model first (models of one architecture differ: an H200 has 1.4x an
  // H100's bandwidth), else of any model of the architecture.
  if (tuning.shipped.empty())
    misses.push_back(tuning.shipped_off ? "the TuningPolicy leaves the tuning files shipped for " + device.arch() + " out"
                                        : "no shipped defaults for " + device.arch());
  bool shipped_entry = false;
  for (const auto& file : tuning.shipped) {
    auto pick = file.db->pick(key, /*same_gpu=*/true);
    const bool same_model = pick.entry != nullptr;
    if (!same_model) pick = file.db->pick(key, /*same_gpu=*/false);
    if (!pick.entry) continue;
    shipped_entry = true;
    if (!serves_size(problem, pick.entry->kernel, pick.entry->params, leading, kernels, device)) {
      misses.push_back("the shipped entry nearest n does not serve n = " + size_text(problem.n));
      continue;
    }
    const std::string who = "shipped defaults for " + device.arch() + " (" + file.path.string() + ")";
    if (try_pick(who, pick.entry->kernel, pick.entry->params)) {
      c.source = Choice::Source::shipped;
      c.why = "shipped defaults for " + device.arch() + " (" + file.path.string() + "; " +
              (same_model ? "this GPU model's entry, " : "") + nearness(*pick.entry, pick.exact, problem.n) +
              "): " + entry_text(*pick.entry);
      return c;
    }
  }
  if (!tuning.shipped.empty() && !shipped_entry) misses.push_back("no shipped entry for " + device.arch());
  const std::string because = misses.empty() ? "" : ": " + join(misses);

  // 3. The family's own choice by size.
  if (const auto choice = plugin.choose_kernel(problem)) {
    if (try_pick("the " + problem.family + " family's choice", choice->kernel, choice->params)) {
      c.source = Choice::Source::family;
      c.why = "the " + problem.family + " family's choice " + choice->why + ", " + choice->kernel +
              params_text(choice->params) + because;
      return c;
    }
  }

  // 4. The default kernel with its metadata's defaults: what is left when nothing else runs. Its
  // errors are the problem's own.
  c.source = Choice::Source::defaults;
  c.file = kernel_for(problem, fallback, kernels);
  c.params.clear();
  c.variant = std::make_shared<const Variant>(c.file, leading, std::map<std::string, std::int64_t>{});
  c.why = "kernel file defaults of " + fallback +
          (problem.declaration ? std::string(", the declared kernel") : ", the " + problem.family + " family's default kernel") +
          because;
  return c;
}

LaunchLimits any_gpu_limits(const Problem& problem, int sm_count) {
  constexpr int kMostSharedAnyGpu = 232448;  // 227 KiB with opt-in (sm_90, sm_100)
  LaunchLimits limits = launch_limits(problem, DeviceInfo{});
  limits.sm_count = sm_count;
  limits.max_threads_per_block = 1024;  // every GPU gpuk runs on
  limits.max_shared_bytes = kMostSharedAnyGpu;
  return limits;
}

void check_plan(const Problem& problem, const FamilyPlugin& plugin, const Variant& variant, const DeviceInfo* device) {
  const auto launcher = plugin.make_launcher(problem);
  Problem at = problem;
  for (const std::uint64_t n : {problem.n, problem.max_n}) {
    at.n = n;
    if (device) {
      (void)launcher->scratch_bytes(plan_launches(variant, launch_limits(at, *device)));
      continue;
    }
    std::optional<ConfigError> first;
    bool planned = false;
    for (const int sm_count : kAnyGpuSmCounts) {
      try {
        (void)launcher->scratch_bytes(plan_launches(variant, any_gpu_limits(at, sm_count)));
        planned = true;
        break;
      } catch (const ConfigError& e) {
        if (!first) first = e;
      }
    }
    if (!planned) throw *first;
  }
}

void check_declared_before_gpu(const Problem& problem, const VariantRequest& request, const FamilyPlugin& plugin,
                               const KernelLibrary& kernels) {
  VariantRequest asked = request;
  if (asked.mode == VariantRequest::Mode::lookup) asked.mode = VariantRequest::Mode::defaults;
  const Choice choice = choose_variant(problem, asked, plugin, kernels, DeviceInfo{}, {}, false);
  try {
    check_plan(problem, plugin, *choice.variant, nullptr);
  } catch (const ConfigError&) {
    if (request.mode != VariantRequest::Mode::lookup) throw;
    const std::vector<std::string> leading = plugin.template_args(problem);
    for (const auto& params : parameter_samples(*choice.file)) {
      try {
        check_plan(problem, plugin, Variant(choice.file, leading, params), nullptr);
        return;  // some variant runs at these sizes: the lookup may pick it
      } catch (const ConfigError&) {
      }
    }
    throw;
  }
}

PlannedVariant plan_variant(const Problem& problem, const VariantRequest& request, const FamilyPlugin& plugin,
                            const KernelLibrary& kernels, const DeviceInfo& info, const TuningSources& tuning) {
  PlannedVariant p;
  p.choice = choose_variant(problem, request, plugin, kernels, info, tuning);
  p.variant = p.choice.variant;
  p.limits = launch_limits(problem, info);
  p.plan = plan_launches(*p.variant, p.limits);
  p.where = "variant " + p.variant->label() + " of " + p.choice.file->path.string();
  p.constants = module_constants(*p.choice.file, problem.sizes, problem.constants.get());
  return p;
}

}  // namespace gpuk
