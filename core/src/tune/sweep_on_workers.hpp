// A sweep on worker processes, one per GPU (tune/workers/pool.hpp): the tuner's road for every
// caller that wants its result as a value (the library's tuning call, gpuk/tuning.hpp; `gpuk
// tune`, which prints it). This process runs the strategy and never touches CUDA: a variant that
// faults or hangs ends only its worker, which is replaced, and the sweep goes on.
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tune/sweep/space.hpp"
#include "tune/sweep/sweep.hpp"

namespace gpuk {

class Runtime;

struct WorkerSweepOptions {
  std::string devices = "0";  // "all" or "0,1,...": a worker per GPU (parse_device_list)
  int threads = 0;            // compile threads; 0: every core
  // Compile waves in this process, once for every worker (tune/measure/compile_wave.hpp); false:
  // each worker compiles its own points. NVRTC starts CUDA in the process that compiles, and no
  // worker forked later from a process with CUDA can use the GPU: a caller that sweeps again
  // (the library's tune_kernel) compiles in its workers.
  bool parent_compiles = true;
  double time_limit_s = 0;    // per run of a variant; 0: the default
  // The journal (tune/report/journal.hpp): its directory ("" for none), this sweep's run id,
  // fresh: entries of other runs ignored.
  std::filesystem::path journal_dir;
  std::string run_id;
  bool fresh = false;
  std::function<void(const Progress&)> progress;  // `current` begins with the workers' counts
  std::function<void(const std::string&)> note;   // said as it happens ("these GPUs are of 2 models")
};

// One sweep's result on the GPUs of one model (ranked on those GPUs alone).
struct ModelSweep {
  TuneReport report;
  int first_ordinal = 0;  // the model's first GPU
};

// Sweeps `space` for `t` on the GPUs `options.devices` names: the input and the reference made once
// here (run/host_side.hpp), a worker process per GPU, the compile waves here, a ranking and report
// per GPU model. Throws NoDeviceError without a GPU, ConfigError for what `t` cannot do on workers
// (energy: one GPU in one process, sweep_on_gpu).
std::vector<ModelSweep> sweep_on_workers(const Runtime& runtime, const TuneSpec& t, const Space& space,
                                         const WorkerSweepOptions& options,
                                         std::chrono::steady_clock::time_point wall_start);

}  // namespace gpuk
