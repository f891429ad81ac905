// One process's part of a sweep on the GPU (tune/sweep_on_gpu.hpp): the fit check, the data
// uploaded once, the GPU measurer, the journal, and the report.
#include "tune/sweep_on_gpu.hpp"

#include <chrono>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "run/declared_run.hpp"
#include "run/runner.hpp"
#include "tune/measure/energy.hpp"
#include "tune/report/journal.hpp"
#include "tune/sweep/sweep.hpp"
#include "util/text.hpp"
#include "tune/workers/pool.hpp"

namespace gpuk {

TuneReport sweep_on_gpu(const TuneSpec& t, const Space& space, const RunContext& context, Device& device,
                        const SweepOptions& sweep) {
  const FamilyPlugin& plugin = context.runtime.plugins().get(t.run.family);
  const DeviceInfo& info = device.info();
  const bool flush = flushes_l2(t, info);
  // Each variant's scratch is checked when it is bound (the sweep records a variant that does not
  // fit); what every variant shares is checked here, before any data exists.
  refuse_if_run_does_not_fit(t.run, plugin, 0, flush, device);
  wait_for_exiting_workers();  // an earlier pooled sweep's workers, still ending on this GPU

  // Energy: required by the objective, or asked for (`energy: true`), when NVML is there.
  std::shared_ptr<EnergyMeter> meter;
  std::string no_energy;
  if (needs_energy(t.objective) || t.energy) {
    meter = open_energy_meter(info.pci_bus_id.empty() ? pci_bus_id(info.ordinal) : info.pci_bus_id, &no_energy);
    if (!meter && needs_energy(t.objective))
      throw Error(no_energy + "; the objective '" + objective_name(t.objective) + "' needs it (use objective: time)");
  }

  const auto data_start = std::chrono::steady_clock::now();
  Bench bench(t.run, plugin, device);
  const auto data_end = std::chrono::steady_clock::now();
  CompileStats stats;
  GpuMeasurerOptions mo = gpu_measurer_options(t, sweep, flush);
  mo.energy = meter;
  auto measurer = make_gpu_measurer(context, device, bench, mo, &stats);

  TuneOptions options = tune_options(t, sweep);
  options.measure_energy = meter != nullptr;
  const auto journal =
      attach_journal(sweep.journal_dir, sweep.run_id, sweep.fresh, t, info, flush, space, options);
  const int damaged = journal ? journal->damaged() : 0;
  // An exhaustive sweep with nothing from a journal measures every runnable point, in order: its
  // compiles start now, on the (lower-priority) compile threads, while the CPU reference runs. The
  // strategy's own prepare() later finds them prepared; the measurer skips what does not fit.
  if (options.strategy == TuneStrategy::exhaustive && !options.evaluations && options.prior.empty() &&
      space.size() <= 1000000) {
    std::vector<Candidate> every;
    for (std::uint64_t i = 0; i < space.size(); ++i) every.push_back(space.at(i));
    measurer->prepare(space, every);
  }
  const auto reference_start = std::chrono::steady_clock::now();
  bench.reference(1);  // once, before the sweep (each variant's check compares with it)
  // A declared kernel's reference kernel, run once on the same inputs: its outputs are the answer.
  if (t.run.verify && !t.run.reference_kernel.empty()) run_reference_kernel(t.run, context.runtime, device, bench);
  const auto reference_end = std::chrono::steady_clock::now();
  TuneResult result = tune(space, *measurer, options);
  const std::vector<std::string> notes = measurer->notes();
  measurer.reset();  // its compiles and its copy of the answer, before the baseline's memory
  std::optional<BaselineTiming> baseline;
  const bool finished = !result.aborted && !result.context_lost;
  if (sweep.baseline && finished)
    baseline = bench.workload().library_baseline(t.run.warmup, t.run.repeats, bench.stream());
  // A declared kernel's `baseline:` kernel, timed on the same inputs whenever the config names
  // one (a tuning matrix's cell takes its speed-up from it, as from a library baseline).
  if (!baseline && finished && !t.run.baseline_kernel.empty())
    baseline = baseline_kernel_times(t.run, context.runtime, device, bench, flush);  // timed as the variants were
  TuneReport report = make_tune_report(t, options, std::move(result), info, bench.bytes_moved(), flush, stats);
  if (baseline && !t.run.baseline_kernel.empty()) {
    const double median = Stats::of(baseline->ms).median;
    const auto* best = report.result.winner();
    std::string note = "baseline " + baseline->name + ": " + ms_text(median) + " ms";
    if (best && best->time.median > 0 && median > 0) note += "; the best " + fixed(median / best->time.median, 2) + "x its speed";
    report.notes.push_back(note);
  }
  report.baseline = std::move(baseline);
  report.times.data = std::chrono::duration<double>(data_end - data_start).count();
  report.times.reference = std::chrono::duration<double>(reference_end - reference_start).count();
  if (journal) {
    report.journal = journal->path().string();
    if (damaged > 0)
      report.notes.push_back(std::to_string(damaged) + " damaged line" + (damaged == 1 ? "" : "s") +
                             " of the journal (a writer killed mid-line) ignored; those points were measured again");
  }
  if (!meter && t.energy) report.notes.push_back("energy not measured: " + no_energy);
  for (const auto& note : notes) report.notes.push_back(note);
  return report;
}

}  // namespace gpuk
