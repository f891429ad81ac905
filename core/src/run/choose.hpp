// Which variant runs. A config or a library call that names a kernel runs exactly that (with
// the parameters it names, the others at the metadata's defaults), so that every figure stays
// reproducible. One that names none gets the fastest variant known, from the first of four
// sources that has one (README.md, "Config reference"):
//
//   1. the user's tuning database (`gpuk tune` writes it; `tuning: FILE` / `--tuning FILE`
//      replace it): this GPU, the problem, n's size bucket or the nearest within a factor 4;
//   2. the tuning file shipped for this GPU's architecture, `tuned/<arch>.json` in a kernel
//      directory (the built-in one first): the same format and rule, matched by architecture;
//   3. the family's own choice by size (FamilyPlugin::choose_kernel);
//   4. the family's default kernel with its metadata's defaults.
//
// A pick that cannot run here (its kernel or a parameter value is gone, a constraint fails for
// this n) gives one warning and the next source is asked: a stale tuning file never stops a run.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_file.hpp"
#include "plugin/problem.hpp"
#include "tuning/tuning_sources.hpp"

namespace gpuk {

class FamilyPlugin;
struct DeviceInfo;

struct VariantRequest {
  enum class Mode {
    lookup,    // names no kernel: the fastest known, from the four sources
    named,     // runs `kernel` with `params` exactly
    defaults,  // the family's default kernel with its metadata's defaults (`variant: default`)
  };
  Mode mode = Mode::lookup;
  std::string kernel;                          // Mode::named
  std::map<std::string, std::int64_t> params;  // Mode::named
};

struct Choice {
  enum class Source { named, user_db, shipped, family, defaults };
  Source source = Source::defaults;
  std::shared_ptr<const KernelFile> file;
  std::shared_ptr<const Variant> variant;      // built once, when the choice was checked
  std::map<std::string, std::int64_t> params;  // as chosen; parameters not named take defaults
  std::string why;                             // the report's `chosen` line
  std::vector<std::string> warnings;           // picks passed over, and why
};

// The variant to run for `problem` on `device`. With `check_plans`, a pick must also plan (its
// constraints hold and its launches fit the device's limits) for problem.n and problem.max_n;
// `gpuk check` without a GPU turns that off. Throws ConfigError when what was named does not
// exist or cannot run, and when even the defaults cannot.
Choice choose_variant(const Problem& problem, const VariantRequest& request, const FamilyPlugin& plugin,
                      const KernelLibrary& kernels, const DeviceInfo& device, const TuningSources& tuning,
                      bool check_plans = true);

// The limits a variant's launches are checked against on this device, for problem.n elements.
LaunchLimits launch_limits(const Problem& problem, const DeviceInfo& info);

// A variant chosen and planned for one problem on one device: nothing compiled yet. The first
// stage of the prepare chain (run/prepare.hpp: planned, compiled, ready).
struct PlannedVariant {
  Choice choice;  // kernel file, parameters, and why
  std::shared_ptr<const Variant> variant;  // choice.variant
  LaunchPlan plan;      // for problem.n
  LaunchLimits limits;  // this device's, for problem.n: what the plan, and the compiled kernels, must fit
  std::string where;   // "variant onepass BLOCK=256 ... of kernels_src/reduce/onepass.cu"
  // A declared kernel's constant memory, written into its modules when loaded (module_constants).
  std::shared_ptr<const ConstantValues> constants;
};

// choose_variant, then the chosen variant's launches for problem.n. Throws ConfigError when what
// was asked for cannot run (an unknown kernel, a value the metadata does not allow, a broken
// constraint, a launch over the device's limits).
PlannedVariant plan_variant(const Problem& problem, const VariantRequest& request, const FamilyPlugin& plugin,
                            const KernelLibrary& kernels, const DeviceInfo& info, const TuningSources& tuning);

// The limits of some GPU with `sm_count` SMs, for problem.n elements: 1024 threads per block and
// the most shared memory any GPU gives. What no GPU can run is what no SM count from 1 to 1024
// runs (kAnyGpuSmCounts), with these.
LaunchLimits any_gpu_limits(const Problem& problem, int sm_count);
inline constexpr int kAnyGpuSmCounts[] = {1, 16, 132, 1024};

// What every run of `variant` refuses before its first launch, for problem.n and problem.max_n:
// its constraints, its launches' limits and the family's checks of the plan (its Launcher's
// scratch: a kernel without segments for a segmented layout, channels above the block size). On
// `device` with its limits; without one (nullptr), only what no GPU could run: a plan refused at
// every SM count from 1 to 1024, with 1024 threads and the most shared memory any GPU gives.
void check_plan(const Problem& problem, const FamilyPlugin& plugin, const Variant& variant, const DeviceInfo* device);

// A declared kernel's request checked with check_plan before any GPU is opened, so that a call
// without one gets the declaration's error (an integer scalar past its dtype, a `when` that holds
// at none of the sizes), not "no GPU": the named variant, or the defaults; for the lookup, the
// defaults unless some sample of the parameters plans (a tuned pick may be among them).
void check_declared_before_gpu(const Problem& problem, const VariantRequest& request, const FamilyPlugin& plugin,
                               const KernelLibrary& kernels);

// "2^24" for a power of two, else the number.
std::string size_text(std::uint64_t n);

}  // namespace gpuk
