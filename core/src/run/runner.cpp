// run(): one config, end to end.
#include "gpuk/runner.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/error.hpp"
#include "gpuk/host_memory.hpp"
#include "gpuk/text.hpp"
#include "gpuk/timing.hpp"

namespace gpuk {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}


}  // namespace

Stats Stats::of(std::vector<double> samples) {
  Stats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

double RunReport::speedup_over_cpu() const {
  double best = 0;
  for (const auto& c : cpu)
    if (best == 0 || c.ms.median < best) best = c.ms.median;
  return kernel.median > 0 ? best / kernel.median : 0;
}

double RunReport::speedup_over_baseline() const {
  return baseline && kernel.median > 0 && baseline->ms.count ? baseline->ms.median / kernel.median : 0;
}

// --- run -------------------------------------------------------------------------------------

void throw_if_faulted(const std::string& where, const Error& /*error*/) {
  // A launch error (bad configuration, out of resources) leaves the context alive; a fault
  // (illegal address, trap, assert, ...) does not, and every later call returns its error.
  const CUresult r = driver().cuCtxSynchronize();
  if (r == CUDA_SUCCESS) return;
  throw FaultError(where + " faulted: " + describe(r) + "; the CUDA context is unusable, so nothing after it ran");
}

RunReport run(const RunSpec& spec, const RunContext& context, Device& device, const CompiledKernels* precompiled) {
  const FamilyPlugin& plugin = context.plugins.get(spec.family);
  const auto file = context.kernels.find(spec.family, spec.kernel);
  const Variant variant(file, plugin.template_args(spec), spec.params);
  const DeviceInfo& info = device.info();

  RunReport report;
  report.config = spec.path.string();
  report.family = spec.family;
  report.operation = spec.operation;
  report.kernel_file = file->path.string();
  report.variant = variant.label();
  report.dtype = std::string(dtype_name(spec.dtype));
  report.options.assign(spec.options.begin(), spec.options.end());
  report.size = spec.size;
  report.gpu = info.name;
  report.arch = info.arch();
  report.nvrtc = nvrtc_version();
  report.driver_version = info.driver_version;
  report.peak_gbs = info.peak_bandwidth_gbs;

  // Refuse up front what cannot fit (before compiling), rather than failing halfway.
  refuse_if_run_does_not_fit(spec, plugin, device);
  refuse_if_host_memory_short(spec, plugin);

  const LaunchPlan plan = plan_launches(variant, launch_limits(spec, info));
  report.launches = plan.launches;

  // JIT (or the cache).
  JitOptions jit_options;
  jit_options.arch = info.arch();
  jit_options.include_dirs = context.kernels.include_dirs();
  const Jit jit(jit_options, context.cache);
  std::vector<std::string> names;
  for (const auto& l : plan.launches)
    if (std::find(names.begin(), names.end(), l.name_expression) == names.end()) names.push_back(l.name_expression);
  const auto compile_start = std::chrono::steady_clock::now();
  const bool reuse = precompiled && std::all_of(names.begin(), names.end(), [&](const std::string& name) {
    return std::find(precompiled->name_expressions.begin(), precompiled->name_expressions.end(), name) !=
           precompiled->name_expressions.end();
  });
  std::optional<CompiledKernels> own;
  if (!reuse) own = jit.compile(*file, names);
  const CompiledKernels& compiled = reuse ? *precompiled : *own;
  report.compile_ms = ms_since(compile_start);
  report.from_cache = compiled.from_cache || reuse;
  const Module module(compiled.cubin, file->path.string() + " " + variant.label());
  std::vector<CUfunction> functions;
  for (const auto& l : plan.launches) functions.push_back(module.function(compiled.lowered(l.name_expression)));

  // Data, uploaded once.
  Bench bench(spec, plugin, device);
  report.bytes_moved = bench.bytes_moved();
  report.upload_ms = bench.upload_ms();

  bench.set_time_limit(context.time_limit_s);
  bench.bind(plan);
  const std::string where = "variant " + variant.label() + " of " + file->path.string();
  const LaunchTarget target{plan, functions, bench.stream(), where};
  try {
    report.kernel = Stats::of(bench.time(target, spec.warmup, spec.repeats, false));
    report.download_ms = bench.download();
  } catch (const TimeLimitError&) {
    throw;
  } catch (const DeviceError& e) {
    throw_if_faulted(where, e);
    throw;
  }
  report.total_ms = report.upload_ms + report.kernel.median + report.download_ms;
  Workload& workload = bench.workload();
  report.result = workload.result();

  if (spec.verify) {
    for (const auto& c : bench.reference(spec.cpu_repeats)) report.cpu.push_back({c.name, Stats::of(c.ms), {}});
    report.verification = workload.verify();
    report.verified = true;
  }
  if (spec.baseline) {
    if (auto b = workload.library_baseline(spec.warmup, spec.repeats, bench.stream()))
      report.baseline = NamedStats{b->name, Stats::of(b->ms), b->note};
  }
  if (spec.output) workload.write_result(*spec.output);

  if (report.kernel.median > 0) {
    report.gbs = static_cast<double>(report.bytes_moved) / (report.kernel.median * 1e-3) / 1e9;
    report.percent_of_peak = report.peak_gbs > 0 ? 100.0 * report.gbs / report.peak_gbs : 0;
  }
  return report;
}

}  // namespace gpuk
