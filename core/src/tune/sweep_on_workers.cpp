// A sweep on worker processes, one per GPU (tune/sweep_on_workers.hpp).
#include "tune/sweep_on_workers.hpp"

#include <algorithm>
#include <set>
#include <thread>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "jit/nvrtc_processes.hpp"
#include "run/declared_run.hpp"
#include "run/host_side.hpp"
#include "run/runner.hpp"
#include "tune/report/journal.hpp"
#include "tune/measure/bulk_compiler.hpp"
#include "tune/workers/pool.hpp"
#include "util/timeline.hpp"

namespace gpuk {

std::vector<ModelSweep> sweep_on_workers(const Runtime& runtime, const TuneSpec& t, const Space& space,
                                         const WorkerSweepOptions& how,
                                         std::chrono::steady_clock::time_point wall_start) {
  const auto say = [&](const std::string& note) {
    if (how.note) how.note(note);
  };
  if (t.objective != TuneObjective::time || t.energy)
    throw ConfigError("--devices measures time only; energy and edp sweeps run on one GPU (--device N)");
  // The GPUs are counted in a child process (CUDA's start: most of a second on a host of several
  // GPUs) while this one makes the input and the reference.
  timeline("sweep: counting the GPUs");
  DeviceCounting counting;
  int count = -1;
  std::vector<int> ordinals;
  std::vector<DeviceInfo> devices;  // what each GPU is, as the counting child asked the driver
  const auto take_count = [&] {
    std::string why;
    count = counting.wait(&why, &devices);
    timeline("sweep: GPUs counted");
    if (count == 0) throw NoDeviceError(why);
    ordinals = parse_device_list(how.devices, count);
    if (std::set<int>(ordinals.begin(), ordinals.end()).size() < ordinals.size())
      say("--devices " + how.devices + " names a GPU more than once: its workers share it and disturb each other's "
          "timings (a test of the pool, not a way to tune)");
  };
  if (counting.answered()) take_count();  // no GPU (the answer comes at once): nothing is made
  const PluginRegistry& plugins = runtime.plugins();
  const RunContext context{runtime};
  SweepOptions sweep;
  sweep.time_limit_s = how.time_limit_s;
  const WaveOptions wave = how.parent_compiles ? gpu_compile_wave(runtime, how.threads) : WaveOptions{};
  // The input and the CPU reference once for every worker, before the fork: each worker inherits
  // them and only uploads (a worker restarted after a fault too).
  if (count < 0 && counting.answered()) take_count();
  HostSide host = make_host_side(t.run, plugins.get(t.run.family));
  timeline("sweep: input and reference made");
  if (count < 0) take_count();
  // With the wave the workers only load from the cache (two threads each); without one they
  // compile side by side, the cores shared among them.
  const int share = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / static_cast<int>(ordinals.size()));
  sweep.threads = wave.compiler ? 2 : how.threads > 0 ? how.threads : share;
  WorkerPool pool(
      space, ordinals, [&](int ordinal) { return make_gpu_worker(t, context, ordinal, sweep, &host); }, wave,
      plan_gpu_workers(t, plugins, devices, ordinals));
  const double pool_start = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  timeline("sweep: workers started");
  // While the workers start CUDA (planned for, they are not waited for): their reference kernel
  // compiled here, into the cache they read.
  if (static_cast<std::size_t>(ordinals.front()) < devices.size() && t.run.verify && !t.run.reference_kernel.empty()) {
    compile_reference_ahead(t.run, runtime, devices[static_cast<std::size_t>(ordinals.front())],
                            nvrtc_processes(2, BulkCompiler::kCompileNice).get());
    timeline("sweep: reference kernel compiled");
  }

  const auto groups = pool.group_by_model();
  if (groups.size() > 1) {
    std::string text = "these GPUs are of " + std::to_string(groups.size()) +
                       " models; each model is swept and ranked on its own GPUs:";
    for (const auto& group : groups) {
      text += " " + pool.workers()[group.front()].device.name + " (GPU";
      for (std::size_t w : group) text += " " + std::to_string(pool.workers()[w].ordinal);
      text += ")";
    }
    say(text);
  }
  std::vector<ModelSweep> out;
  for (const auto& group : groups) {
    TuneOptions options = tune_options(t, sweep);
    options.progress = [&](const Progress& p) {
      if (!how.progress) return;
      Progress shown = p;
      shown.current = pool.progress_text() + (p.current.empty() ? "" : "  " + p.current);
      how.progress(shown);
    };
    const WorkerInfo& first = pool.workers()[group.front()];
    // The journal of this model's GPUs: a sweep cut short or run again goes on from it.
    const auto journal =
        attach_journal(how.journal_dir, how.run_id, how.fresh, t, first.device, first.flushed, space, options);
    const auto measurer = pool.measurer(group);
    TuneResult result = tune(space, *measurer, options);
    timeline("sweep: tuned");
    // A leader that faulted in the recheck took its worker's context down: the worker was
    // replaced; the sweep goes on from what it measured, without that leader. Each round takes
    // at least one point out of the recheck, so the rounds end; the bound is a guard.
    constexpr int kMostRechecks = 100;
    for (int again = 0; result.context_lost && again < kMostRechecks; ++again) {
      options.prior = result.evaluations;
      result = tune(space, *measurer, options);
    }
    TuneReport report = make_tune_report(t, options, std::move(result), first.device, first.bytes_moved,
                                         first.flushed, pool.compile_stats());
    for (std::size_t w : group) {
      const WorkerInfo& info = pool.workers()[w];
      report.devices.push_back("GPU " + std::to_string(info.ordinal) +
                               (info.restarts ? " (" + std::to_string(info.restarts) + " fresh process" +
                                                    (info.restarts == 1 ? "" : "es") + " after faults)"
                                              : ""));
    }
    if (journal) report.journal = journal->path().string();
    // The parent's input and reference, then the workers' processes, devices and uploads.
    report.times.data = host.data_seconds;
    report.times.reference = host.reference_seconds;
    report.times.start = std::max(0.0, pool_start - host.data_seconds - host.reference_seconds);
    for (const auto& note : pool.notes()) report.notes.push_back(note);
    const auto worker_times = pool.worker_times();
    for (std::size_t w : group)
      report.worker_times.emplace_back("GPU " + std::to_string(pool.workers()[w].ordinal), worker_times[w]);
    out.push_back({std::move(report), first.ordinal});
  }
  return out;
}

}  // namespace gpuk
