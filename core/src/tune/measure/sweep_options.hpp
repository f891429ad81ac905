// The options of one process's part of a sweep on the GPU (tune/sweep_on_gpu.hpp, or a pooled
// sweep's worker, tune/workers/pool.hpp), and what they derive from the sweep's TuneSpec: tune()'s
// options, the GPU measurer's, whether the L2 is flushed.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "tune/sweep/measurer.hpp"
#include "tune/sweep/sweep.hpp"

namespace gpuk {

struct DeviceInfo;

struct SweepOptions {
  int threads = 0;          // compile threads; 0: every core
  double time_limit_s = 0;  // per run of a variant; 0: the default
  std::vector<Evaluation> prior;  // measured before, taken as they are (with the journal's)
  std::function<void(const Progress&)> progress;
  bool baseline = false;  // also time the family's library baseline (the tuning matrix does)
  // The journal (tune/report/journal.hpp): its directory ("" for none); this sweep's run id
  // (every process of one `gpuk tune` shares it); fresh: entries of other runs are ignored.
  std::filesystem::path journal_dir;
  std::string run_id;
  bool fresh = false;
};

// The options of tune() for a sweep of `t`: its strategy, budget, seed and recheck, with the
// sweep's prior evaluations and progress.
TuneOptions tune_options(const TuneSpec& t, const SweepOptions& sweep);
// The GPU measurer's options for a sweep of `t` (warm-ups, repeats or auto, compile threads, the
// time limit), flushing the L2 before each timed run when `flush`.
GpuMeasurerOptions gpu_measurer_options(const TuneSpec& t, const SweepOptions& sweep, bool flush);

// Whether the sweep of `t` flushes the L2 before each timed run on `device` (flush_l2 on, or auto
// and the input fits in the L2).
bool flushes_l2(const TuneSpec& t, const DeviceInfo& device);

}  // namespace gpuk
