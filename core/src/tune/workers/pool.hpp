// Several GPUs for one sweep (`gpuk tune --devices all|0,1,...`): one worker process per GPU
// measures points of the space, and the process that runs the strategy never touches CUDA.
//
//   parent (strategy, ranking, report)            workers (one per GPU, forked before any CUDA)
//     tune(space, PoolMeasurer) --- point ---->     WorkerSession: Device, Bench, GPU measurer
//                               <-- outcome ---     (the variant's outcome, or "context lost")
//
// With a compile wave (WaveOptions), the parent compiles the points a strategy announces
// (Measurer::prepare) once, on all cores, into the compile cache the workers share
// (tune/measure/compile_wave.hpp); each program, once compiled, goes to every worker of the group
// ("adopt": its CUBINs loaded from the cache, not compiled again) and its points are dealt out
// round-robin, one queue per worker. Without one, the points are dealt as they are announced and
// each worker compiles its own share. An idle worker takes from the others' queues when its own
// is empty. A variant that takes a worker's CUDA context down is recorded as
// faulted and the worker is replaced by a fresh process; the other workers never notice. Only
// GPUs of one model are pooled for one ranking (group_by_model): a mixed host ranks per model.
// The pipes carry one JSON object per line; nothing but processes and the CUDA driver.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "tune/measure/bulk_compiler.hpp"
#include "tune/measure/sweep_options.hpp"
#include "tune/sweep/sweep.hpp"

namespace gpuk {

// "all" (every GPU, `count` of them) or "0,2": the ordinals, each below `count`. An ordinal named
// twice gets two workers on one GPU (their timings disturb each other: a test of the pool on a
// one-GPU machine, not a way to tune). Throws ConfigError with the list and the count.
std::vector<int> parse_device_list(const std::string& text, int count);

// The GPUs gpuk can use, counted in a short-lived child process, so that the caller (which
// forks workers afterwards) never initialises CUDA itself. 0 with `why` when there is none.
int count_devices_in_child(std::string* why = nullptr);

// The same, started now and answered later: the child counts (CUDA's start, most of a second on a
// host of several GPUs) while the caller goes on. Fork it before this process starts threads.
class DeviceCounting {
 public:
  DeviceCounting();
  ~DeviceCounting();  // waits for the child when wait() was not called
  DeviceCounting(const DeviceCounting&) = delete;
  DeviceCounting& operator=(const DeviceCounting&) = delete;
  bool answered() const;  // whether wait() would return at once
  // The count, as count_devices_in_child's; once. With `devices`: what each GPU is (asked without
  // a context), or none when the driver could not say.
  int wait(std::string* why = nullptr, std::vector<DeviceInfo>* devices = nullptr);

 private:
  int fd_ = -1;
  pid_t pid_ = -1;
};

// What runs in a worker process: the GPU it measures on and its measurer.
class WorkerSession {
 public:
  virtual ~WorkerSession() = default;
  virtual DeviceInfo info() const = 0;
  virtual std::uint64_t bytes_moved() const = 0;  // per run of a variant
  virtual bool flushed() const = 0;               // the L2 is flushed before each timed run
  virtual CompileStats compile_stats() const = 0;
  virtual Measurer& measurer() = 0;
  // This worker process's time so far: its start (device, data, reference) and its measurer's.
  virtual SweepTimes times() const { return {}; }
};
// Called in the worker process, after the fork: builds the session of GPU `ordinal`.
using WorkerFactory = std::function<std::unique_ptr<WorkerSession>(int ordinal)>;

// One worker, as the parent knows it.
struct WorkerInfo {
  int ordinal = 0;
  DeviceInfo device;
  LaunchLimits limits;
  std::vector<std::string> leading_args;
  std::uint64_t bytes_moved = 0;
  bool flushed = false;
  int restarts = 0;   // fresh processes after a variant took the context down
  std::size_t measured = 0;
  double start_seconds = 0;  // its processes' starts (fork to ready, restarts included), as the parent saw them
};

// The parent's compile wave: given a group's first worker (its GPU), the function that compiles
// one program of variants into the compile cache the workers read, as they would compile it
// themselves (the same JIT options: the same cache key); an empty function or none: the workers
// compile their own points.
struct WaveOptions {
  std::function<BulkCompiler::CompileProgram(const WorkerInfo& first)> compiler;
  int threads = 0;  // the parent's compile threads; 0: every core
};

struct RunContext;
class Runtime;
struct HostSide;
// The session of a worker on GPU `ordinal` for the sweep of `t`: the fit check, the data uploaded
// once, the GPU measurer (bulk compile), as sweep_on_gpu sets them up. With `host` (the parent's
// host side, made before the fork: run/host_side.hpp) the worker takes its workload, input and
// CPU reference from it (its copy of the parent's memory) instead of making its own.
std::unique_ptr<WorkerSession> make_gpu_worker(const TuneSpec& t, const RunContext& context, int ordinal,
                                               const SweepOptions& sweep, HostSide* host = nullptr);

// What each worker on `ordinals` will report for the sweep of `t` (its GPU from `devices`, as the
// driver described it without a context; the problem's launch limits and leading args there; the
// L2 flush), for WorkerPool's `planned`; none when `devices` does not describe every ordinal.
class PluginRegistry;
std::vector<WorkerInfo> plan_gpu_workers(const TuneSpec& t, const PluginRegistry& plugins,
                                         const std::vector<DeviceInfo>& devices, const std::vector<int>& ordinals);
// The compile wave of a pooled sweep on real GPUs: the Runtime's JIT of the group's architecture
// (the workers' own: the same cache key), compiling into its cache; none when the cache is off. threads 0: every core.
WaveOptions gpu_compile_wave(const Runtime& runtime, int threads);

// Waits until the workers of the pools destroyed so far have ended (a pool's destructor tells
// them to quit and returns; a thread waits for them). A new pool calls it once its own workers
// are started; a sweep in this process, before it measures.
void wait_for_exiting_workers();

class WorkerPool {
 public:
  // Forks one worker per ordinal (the same ordinal twice gives two workers on one GPU) and waits
  // for each to report its GPU. A worker that cannot start throws the worker's own message.
  // With `planned` (one per ordinal: the GPU, its launch limits, leading args and flush, as the
  // workers will report them), it does not wait: the workers set up their GPUs while the caller
  // goes on (a measurer's compile wave starts), and are greeted at the first request to any; a
  // worker that cannot start throws there, and one that reports other limits is an internal Error.
  WorkerPool(const Space& space, std::vector<int> ordinals, WorkerFactory factory, WaveOptions wave = {},
             std::vector<WorkerInfo> planned = {});
  ~WorkerPool();  // asks the workers to end; kills those that do not within a few seconds
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  const std::vector<WorkerInfo>& workers() const;
  // Indices into workers(), one group per GPU model (DeviceInfo::name), in order of first ordinal.
  std::vector<std::vector<std::size_t>> group_by_model() const;
  // A Measurer over the workers of one group. Measurements of a group must not overlap with
  // another group's (one group at a time).
  std::unique_ptr<Measurer> measurer(std::vector<std::size_t> group);
  // "gpu0 12, gpu1 11": points measured per worker, for a progress line.
  std::string progress_text() const;
  // Compile statistics of every worker and of the parent's compile wave, summed (asked of the
  // workers that are running).
  CompileStats compile_stats();
  // Each worker's time breakdown, in workers() order (asked of its current process; `start` is
  // the parent's view, every process of the worker counted; zeros for a worker that is busy).
  std::vector<SweepTimes> worker_times();
  // The measurers' notes of the running workers, each "GPU N: ..." (how they verified, ...).
  std::vector<std::string> notes();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuk
