#include "gpuk/runner.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/error.hpp"
#include "gpuk/timing.hpp"

namespace gpuk {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

// Milliseconds with enough digits for microsecond-scale kernels.
std::string ms(double value) { return value < 1 ? fixed(value, 4) : value < 100 ? fixed(value, 3) : fixed(value, 1); }

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

LaunchLimits launch_limits(const RunSpec& spec, const DeviceInfo& info) {
  // Dynamic shared memory up to the device's opt-in limit: launch_kernel opts in above 48 KiB.
  return {static_cast<std::int64_t>(spec.size), info.sm_count, static_cast<int>(dtype_size(spec.dtype)),
          info.max_threads_per_block, std::max(kSharedWithoutOptIn, info.max_shared_per_block_optin)};
}

namespace {

// What the family allocates for the run (FamilyPlugin::device_bytes) must fit in the device's
// free memory; scratch and the library baseline's buffers are checked when they are allocated
// (DeviceBuffer's error names the bytes asked for and free).
void refuse_if_run_does_not_fit(const RunSpec& spec, const FamilyPlugin& plugin, Device& device) {
  const std::uint64_t input_bytes = spec.size * dtype_size(spec.dtype);
  const std::uint64_t bytes = std::max(input_bytes, plugin.device_bytes(spec));
  const std::uint64_t free = device.free_memory();
  if (bytes <= free) return;
  std::string what = "the input needs " + std::to_string(input_bytes) + " bytes of device memory";
  if (bytes > input_bytes) what += " (" + std::to_string(bytes) + " with the " + spec.family + " run's other buffers)";
  throw DeviceError(what + "; " + device.info().name + " has " + std::to_string(free) + " bytes free");
}

}  // namespace

// --- Bench -----------------------------------------------------------------------------------

Bench::Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device)
    : spec_(spec), plugin_(plugin), device_(device) {
  make();
}

void Bench::make() {
  const RunSpec& spec = spec_;
  Device& device = device_;
  refuse_if_run_does_not_fit(spec, plugin_, device);
  HostArray input = spec.data.file ? load_file(spec.data) : generate(spec.data, spec.dtype, spec.size);
  if (input.dtype() != spec.dtype || input.size() != spec.size)
    throw ConfigError(spec.path.string() + ": the data file holds " + std::to_string(input.size()) + " " +
                      std::string(dtype_name(input.dtype())) + " elements, but the config asks for " +
                      std::to_string(spec.size) + " " + std::string(dtype_name(spec.dtype)));
  workload_ = plugin_.make_workload(spec, std::move(input));
  workload_has_reference_ = false;
  bytes_moved_ = workload_->bytes_moved();
  stream_ = std::make_unique<Stream>();
  start_ = std::make_unique<Event>();
  stop_ = std::make_unique<Event>();
  start_->record(*stream_);
  workload_->upload(*stream_);
  stop_->record(*stream_);
  upload_ms_ = stop_->elapsed_since(*start_);
}

double Bench::time_limit() const {
  return time_limit_base_ + static_cast<double>(bytes_moved_) / 1e9;
}

Bench::~Bench() = default;

bool Bench::input_fits_l2() const {
  return static_cast<std::int64_t>(spec_.size * dtype_size(spec_.dtype)) < 2 * device_.info().l2_bytes;
}

void Bench::synchronize(const std::string& where) const { wait_stream(stream_->get(), time_limit(), where); }

const std::vector<CpuTiming>& Bench::reference(int repeats) {
  if (!reference_done_) {
    reference_ = workload_->cpu_reference(repeats);
    reference_done_ = true;
    workload_has_reference_ = true;
  } else if (!workload_has_reference_) {
    (void)workload_->cpu_reference(1);  // a rebuilt workload needs the answer again, not the timings
    workload_has_reference_ = true;
  }
  return reference_;
}

Verification Bench::check(const LaunchTarget& target) {
  reference(1);
  workload_->poison(*stream_);
  workload_->launch(target);
  synchronize(target.where);
  workload_->download(*stream_);
  return workload_->verify();
}

std::vector<double> Bench::time(const LaunchTarget& target, int warmup, int repeats, bool flush_l2) {
  if (flush_l2 && !flush_ && device_.info().l2_bytes > 0)
    flush_.emplace(static_cast<std::size_t>(2 * device_.info().l2_bytes));
  // gpuk/timing.hpp: behind a stream gate, as the library baselines are timed.
  unsigned char fill = 0;
  return time_device(
             stream_->get(), warmup, repeats, [&] { workload_->launch(target); },
             [&] {
               workload_->poison(*stream_);
               if (flush_l2 && flush_) flush_->fill_bytes(fill++, *stream_);
             },
             target.where, time_limit())
      .ms;
}

double Bench::download() {
  start_->record(*stream_);
  workload_->download(*stream_);
  stop_->record(*stream_);
  return stop_->elapsed_since(*start_);
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

void print_report(std::ostream& out, const RunReport& r) {
  out << "gpuk run " << r.config << "\n";
  out << "  " << r.family << " " << r.operation;
  for (const auto& [k, v] : r.options) out << " " << k << "=" << v;
  out << "  dtype " << r.dtype << "  n " << r.size << "\n";
  out << "  variant  " << r.variant << "  (" << r.kernel_file << ")\n";
  if (!r.variant_source.empty()) out << "  chosen   " << r.variant_source << "\n";
  for (const auto& l : r.launches)
    out << "  launch   " << l.name_expression << "  grid " << l.grid << "  block " << l.block << "\n";
  out << "  device   " << r.gpu << " (" << r.arch << "), driver " << r.driver_version / 1000 << "."
      << (r.driver_version % 1000) / 10 << ", NVRTC " << r.nvrtc << "\n";
  out << "  compile  " << ms(r.compile_ms) << " ms" << (r.from_cache ? " (from the cache)" : "") << "\n\n";

  out << "  " << std::left << std::setw(44) << "time (ms)" << std::right << std::setw(11) << "median"
      << std::setw(11) << "min" << std::setw(11) << "max" << std::setw(8) << "runs" << "\n";
  const auto row = [&](const std::string& name, const Stats& s) {
    out << "  " << std::left << std::setw(44) << name << std::right << std::setw(11) << ms(s.median)
        << std::setw(11) << ms(s.min) << std::setw(11) << ms(s.max) << std::setw(8) << s.count << "\n";
  };
  row("upload (host to device)", {r.upload_ms, r.upload_ms, r.upload_ms, 1});
  row("kernel: " + r.variant, r.kernel);
  row("download (device to host)", {r.download_ms, r.download_ms, r.download_ms, 1});
  row("total (upload + kernel median + download)", {r.total_ms, r.total_ms, r.total_ms, 1});
  if (r.baseline) row("baseline: " + r.baseline->name, r.baseline->ms);
  for (const auto& c : r.cpu) row("CPU: " + c.name, c.ms);
  out << "\n";
  out << "  throughput  " << fixed(r.gbs, 1) << " GB/s effective (" << r.bytes_moved << " bytes), "
      << fixed(r.percent_of_peak, 1) << "% of the device's " << fixed(r.peak_gbs, 0) << " GB/s\n";
  if (!r.cpu.empty()) out << "  speed-up    " << fixed(r.speedup_over_cpu(), 1) << "x over the fastest CPU reference\n";
  if (r.baseline) {
    if (r.baseline->ms.count)
      out << "  speed-up    " << fixed(r.speedup_over_baseline(), 2) << "x over " << r.baseline->name << "\n";
    if (!r.baseline->note.empty()) out << "  baseline    " << r.baseline->note << "\n";
  }
  out << "  result     ";
  for (const auto& [k, v] : r.result) out << " " << k << " " << v;
  out << "\n";
  if (r.verified)
    out << "  verify      " << (r.verification.passed ? "PASS" : "FAIL") << "  " << r.verification.detail << "\n";
  else
    out << "  verify      skipped (verify: false)\n";
}

namespace {
nlohmann::json to_json(const Stats& s) {
  return {{"median_ms", s.median}, {"min_ms", s.min}, {"max_ms", s.max}, {"runs", s.count}};
}
}  // namespace

void write_json(const std::filesystem::path& path, const RunReport& r) {
  nlohmann::json j;
  j["config"] = r.config;
  j["family"] = r.family;
  j["operation"] = r.operation;
  j["options"] = nlohmann::json::object();
  for (const auto& [k, v] : r.options) j["options"][k] = v;
  j["dtype"] = r.dtype;
  j["size"] = r.size;
  j["kernel_file"] = r.kernel_file;
  j["variant"] = r.variant;
  if (!r.variant_source.empty()) j["variant_source"] = r.variant_source;
  j["launches"] = nlohmann::json::array();
  for (const auto& l : r.launches)
    j["launches"].push_back({{"name_expression", l.name_expression}, {"grid", l.grid}, {"block", l.block},
                             {"shared_bytes", l.shared_bytes}});
  j["device"] = {{"name", r.gpu}, {"arch", r.arch}, {"driver_version", r.driver_version},
                 {"peak_bandwidth_gbs", r.peak_gbs}};
  j["nvrtc_version"] = r.nvrtc;
  j["compile"] = {{"ms", r.compile_ms}, {"from_cache", r.from_cache}};
  j["upload_ms"] = r.upload_ms;
  j["kernel"] = to_json(r.kernel);
  j["download_ms"] = r.download_ms;
  j["total_ms"] = r.total_ms;
  j["bytes_moved"] = r.bytes_moved;
  j["gbs"] = r.gbs;
  j["percent_of_peak"] = r.percent_of_peak;
  j["cpu"] = nlohmann::json::array();
  for (const auto& c : r.cpu) j["cpu"].push_back({{"name", c.name}, {"time", to_json(c.ms)}});
  j["speedup_over_cpu"] = r.speedup_over_cpu();
  if (r.baseline) {
    j["baseline"] = {{"name", r.baseline->name}, {"time", to_json(r.baseline->ms)}, {"note", r.baseline->note}};
    j["speedup_over_baseline"] = r.speedup_over_baseline();
  }
  j["result"] = nlohmann::json::object();
  for (const auto& [k, v] : r.result) j["result"][k] = v;
  if (r.verified) j["verification"] = {{"passed", r.verification.passed}, {"detail", r.verification.detail}};
  std::ofstream out(path);
  if (!out) throw Error(path.string() + ": cannot write the JSON report");
  out << j.dump(2) << "\n";
}

void write_csv(const std::filesystem::path& path, const RunReport& r) {
  const auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string options;
  for (const auto& [k, v] : r.options) options += (options.empty() ? "" : " ") + k + "=" + v;
  std::string result;
  for (const auto& [k, v] : r.result) result += (result.empty() ? "" : " ") + k + "=" + v;
  std::ofstream out(path);
  if (!out) throw Error(path.string() + ": cannot write the CSV report");
  out << "config,family,operation,options,dtype,size,variant,gpu,arch,driver_version,nvrtc_version,"
         "upload_ms,kernel_median_ms,kernel_min_ms,kernel_max_ms,kernel_runs,download_ms,total_ms,"
         "bytes_moved,gbs,percent_of_peak,cpu_best_ms,baseline,baseline_median_ms,speedup_over_cpu,"
         "speedup_over_baseline,verified,result\n";
  double cpu_best = 0;
  for (const auto& c : r.cpu)
    if (cpu_best == 0 || c.ms.median < cpu_best) cpu_best = c.ms.median;
  out << quote(r.config) << ',' << r.family << ',' << r.operation << ',' << quote(options) << ',' << r.dtype << ','
      << r.size << ',' << quote(r.variant) << ',' << quote(r.gpu) << ',' << r.arch << ',' << r.driver_version << ','
      << r.nvrtc << ',' << r.upload_ms << ',' << r.kernel.median << ',' << r.kernel.min << ',' << r.kernel.max << ','
      << r.kernel.count << ',' << r.download_ms << ',' << r.total_ms << ',' << r.bytes_moved << ',' << r.gbs << ','
      << r.percent_of_peak << ',' << cpu_best << ',' << quote(r.baseline ? r.baseline->name : "") << ','
      << (r.baseline ? r.baseline->ms.median : 0) << ',' << r.speedup_over_cpu() << ',' << r.speedup_over_baseline()
      << ',' << (r.verified ? (r.verification.passed ? "pass" : "FAIL") : "skipped") << ',' << quote(result) << "\n";
}

}  // namespace gpuk
