// run(): one config, end to end.
#include "run/runner.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "device/host_memory.hpp"
#include "device/timing.hpp"
#include "gpuk/error.hpp"
#include "run/declared_run.hpp"
#include "tuning/tuning_db.hpp"
#include "util/text.hpp"

namespace gpuk {

Stats Stats::of(std::vector<double> samples) {
  Stats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min = samples.front();
  s.max = samples.back();
  const auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(n - 1);
    const std::size_t lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, n - 1);
    return samples[lo] + (pos - static_cast<double>(lo)) * (samples[hi] - samples[lo]);
  };
  s.q1 = quantile(0.25);
  s.q3 = quantile(0.75);
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

TuningSources tuning_sources(const RunSpec& spec, const KernelLibrary& kernels,
                             const std::optional<std::filesystem::path>& tuning_db, const std::string& arch) {
  TuningSources t;
  if (spec.pick != RunSpec::Pick::lookup) return t;
  if (spec.tuning_file) add_user_tuning(t, *spec.tuning_file, true);
  else add_user_tuning(t, tuning_db.value_or(TuningDb::default_path()), false);
  add_shipped_tuning(t, kernels, arch);
  return t;
}

namespace {

// What ran and where: the config, the variant the bench was prepared with and why, the device,
// the compile, and the data's upload.
RunReport report_head(const RunSpec& spec, const TuningSources& tuning, const DeviceInfo& info, const Bench& bench) {
  const PreparedRun& prepared = bench.prepared();
  const PlannedVariant& planned = prepared.planned;
  RunReport report;
  report.config = spec.path.string();
  report.family = spec.family;
  report.operation = spec.operation;
  report.kernel_file = planned.choice.file->path.string();
  report.variant = planned.variant->label();
  report.variant_source = planned.choice.why;
  report.warnings = tuning.warnings;
  report.warnings.insert(report.warnings.end(), planned.choice.warnings.begin(), planned.choice.warnings.end());
  report.dtype = std::string(dtype_name(spec.dtype));
  report.options.assign(spec.options.begin(), spec.options.end());
  report.size = spec.size;
  report.sizes.assign(spec.sizes.begin(), spec.sizes.end());
  report.data = run_data_summary(spec);
  report.gpu = info.name;
  report.arch = info.arch();
  report.nvrtc = nvrtc_version();
  report.driver_version = info.driver_version;
  report.peak_gbs = info.peak_bandwidth_gbs;
  report.launches = planned.plan.launches;
  report.compile_ms = prepared.ready.compiled.ms;
  report.from_cache = prepared.ready.compiled.from_cache;
  report.bytes_moved = bench.bytes_moved();
  report.upload_ms = bench.upload_ms();
  report.upload_bytes = bench.upload_bytes();
  report.download_bytes = bench.download_bytes();
  report.pin_note = bench.pin_note();
  if (!report.pin_note.empty())
    report.warnings.push_back("the input is not page-locked, so its upload runs from pageable memory: " +
                              report.pin_note);
  return report;
}

}  // namespace

// config -> prepare (the family's Launcher, choose, plan, fit, compile, load, check, bind) ->
// the Bench of the prepared variant (data, upload, scratch) -> time -> verify -> report.
RunReport run(const RunSpec& spec, const RunContext& context, Device& device, const CompiledKernels* precompiled) {
  const Runtime& runtime = context.runtime;
  const FamilyPlugin& plugin = runtime.plugins().get(spec.family);
  const DeviceInfo& info = device.info();
  const TuningSources tuning = tuning_sources(spec, runtime.kernels(), runtime.tuning_db(), info.arch());
  PreparedRun prepared = prepare_run(spec, plugin, tuning, runtime, device, precompiled);

  // Data, uploaded once. One thread of the process measures at a time (see run() in runner.hpp).
  static std::mutex measuring;
  const std::lock_guard measuring_lock(measuring);
  Bench bench(spec, plugin, device, std::move(prepared));
  bench.set_time_limit(context.time_limit_s);
  RunReport report = report_head(spec, tuning, info, bench);
  const std::string& where = bench.prepared().planned.where;
  try {
    if (spec.verify && !spec.reference_kernel.empty()) run_reference_kernel(spec, runtime, device, bench);
    report.kernel = Stats::of(bench.time(spec.warmup, spec.repeats, false));
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
  if (spec.baseline && !spec.baseline_kernel.empty()) {
    report.baseline = time_baseline_kernel(spec, runtime, device, bench);
  } else if (spec.baseline) {
    if (auto b = workload.library_baseline(spec.warmup, spec.repeats, bench.stream()))
      report.baseline = NamedStats{b->name, Stats::of(b->ms), b->note};
  }
  report.metrics = declared_metrics(spec, *bench.prepared().planned.variant, report.kernel.median);
  if (spec.output) workload.write_result(*spec.output);

  if (report.kernel.median > 0) {
    report.gbs = static_cast<double>(report.bytes_moved) / (report.kernel.median * 1e-3) / 1e9;
    report.percent_of_peak = report.peak_gbs > 0 ? 100.0 * report.gbs / report.peak_gbs : 0;
  }
  return report;
}

}  // namespace gpuk
