// The reference and baseline kernels and the metrics of a declared kernel's run (run/declared_run.hpp).
#include "run/declared_run.hpp"

#include "gpuk/error.hpp"
#include "jit/jit.hpp"
#include "kernel/declaration.hpp"
#include "run/prepare.hpp"
#include "run/runtime.hpp"
#include "util/timeline.hpp"

namespace gpuk {

// The reference or baseline kernel: the run's own road (prepare_run: variant_request, plan, fit,
// ready_variant) with the run's problem and data, that kernel named instead of the run's.
PreparedRun prepare_other_kernel(const RunSpec& spec, const std::string& kernel,
                                 const std::map<std::string, std::int64_t>& params, const Runtime& runtime,
                                 Device& device) {
  const Declaration* theirs = runtime.kernels().find(spec.family, kernel)->declaration.get();
  const Declaration& ours = *spec.declared->declaration;
  if (!theirs || !ours.same_arrays(*theirs))
    throw ConfigError(spec.path.string() + ": kernel " + kernel + " takes the arrays " +
                      (theirs ? theirs->arrays_text() : std::string("(none declared)")) + ", but " + spec.kernel +
                      " takes " + ours.arrays_text() + "; a reference or baseline kernel takes the same arrays");
  RunSpec other = spec;
  other.kernel = kernel;
  other.params = params;
  other.pick = RunSpec::Pick::named;
  return prepare_run(other, runtime.plugins().get(spec.family), TuningSources{}, runtime, device);
}

namespace {

PreparedRun prepare_reference(const RunSpec& spec, const Runtime& runtime, Device& device) {
  try {
    return prepare_other_kernel(spec, spec.reference_kernel, spec.reference_params, runtime, device);
  } catch (const CompileError&) {
    for (const auto& params : spec.reference_fallbacks) {
      try {
        return prepare_other_kernel(spec, spec.reference_kernel, params, runtime, device);
      } catch (const CompileError&) {
      }
    }
    throw;
  }
}

}  // namespace

void compile_reference_ahead(const RunSpec& spec, const Runtime& runtime, const DeviceInfo& info,
                             NvrtcProcesses* processes) {
  if (!spec.verify || spec.reference_kernel.empty() || !spec.declared || !runtime.cache().enabled() || !processes)
    return;
  try {
    RunSpec other = spec;
    other.kernel = spec.reference_kernel;
    other.params = spec.reference_params;
    other.pick = RunSpec::Pick::named;
    const PlannedVariant planned = plan_variant(problem_of(other), variant_request(other),
                                                runtime.plugins().get(spec.family), runtime.kernels(), info, TuningSources{});
    const Jit& jit = runtime.jit(info.arch());
    for (const auto& program : programs_by_defines(kernel_names(planned.plan)))
      timeline(jit.compile(planned.variant->file(), program, processes).from_cache ? "reference ahead: in the cache already"
                                                                                  : "reference ahead: compiled");
  } catch (const std::exception& e) {
    timeline(std::string("reference ahead: not compiled: ") + e.what());
  }
}

void run_reference_kernel(const RunSpec& spec, const Runtime& runtime, Device& device, Bench& bench) {
  const PreparedRun reference = prepare_reference(spec, runtime, device);
  timeline(reference.ready.compiled.from_cache ? "reference: loaded from the cache" : "reference: compiled and loaded");
  const LaunchTarget target{reference.planned.plan, reference.ready.functions.data(), bench.stream().get(),
                            reference.planned.where};
  // Its own scratch, if it needs one; the run's variant (or a sweep's next point) binds its own again.
  if (reference.planned.plan.scratch_bytes > 0) bench.bind(reference.planned.plan);
  (void)bench.check(target);
  bench.workload().keep_as_reference();
  timeline("reference: run, its outputs kept");
  if (reference.planned.plan.scratch_bytes > 0 && bench.has_prepared()) bench.bind(bench.prepared().planned.plan);
}

BaselineTiming baseline_kernel_times(const RunSpec& spec, const Runtime& runtime, Device& device, Bench& bench,
                                     bool flush_l2) {
  const PreparedRun baseline = prepare_other_kernel(spec, spec.baseline_kernel, {}, runtime, device);
  const LaunchTarget target{baseline.planned.plan, baseline.ready.functions.data(), bench.stream().get(),
                            baseline.planned.where};
  if (baseline.planned.plan.scratch_bytes > 0) bench.bind(baseline.planned.plan);  // the run's last use of the Bench
  return {"kernel " + baseline.planned.variant->label(), bench.time(target, spec.warmup, spec.repeats, flush_l2), {}};
}

NamedStats time_baseline_kernel(const RunSpec& spec, const Runtime& runtime, Device& device, Bench& bench) {
  BaselineTiming b = baseline_kernel_times(spec, runtime, device, bench);
  return {b.name, Stats::of(std::move(b.ms)), b.note};
}

DataSummary run_data_summary(const RunSpec& spec) {
  if (!spec.declared) return summarize_data(spec.data, spec.dtype, spec.size);
  std::vector<DataSummary> inputs;
  for (const DeclaredArg* a : spec.declared->declaration->arrays())
    if (const auto it = spec.arg_data.find(a->name); it != spec.arg_data.end()) {
      inputs.push_back(summarize_data(it->second, a->dtype, static_cast<std::uint64_t>(eval_sizes(a->length, spec.sizes))));
      inputs.back().array = a->name;
    }
  if (inputs.empty()) return summarize_data(spec.data, spec.dtype, spec.size);  // no input array
  DataSummary first = inputs.front();
  first.others.assign(inputs.begin() + 1, inputs.end());
  return first;
}

std::vector<std::pair<std::string, double>> declared_metrics(const RunSpec& spec, const Variant& variant,
                                                             double median_ms) {
  std::vector<std::pair<std::string, double>> out;
  if (!spec.declared || median_ms <= 0) return out;
  std::map<std::string, double> values = {{"seconds", median_ms * 1e-3}};
  for (const auto& [name, v] : spec.sizes) values[name] = static_cast<double>(v);
  for (const auto& [name, v] : variant.params()) values[name] = static_cast<double>(v);
  for (const auto& m : spec.declared->declaration->metrics) out.emplace_back(m.name, m.expression.eval(values));
  return out;
}

}  // namespace gpuk
