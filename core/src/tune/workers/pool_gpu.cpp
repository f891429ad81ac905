// A worker of a sweep over several GPUs (tune/workers/pool.hpp) on a real GPU: what sweep_on_gpu
// sets up, kept for the worker's life; and the compile wave of the parent with the real JIT.
#include <chrono>
#include <cstdlib>
#include <thread>

#include "config/config.hpp"
#include "device/device.hpp"
#include "jit/nvrtc_processes.hpp"
#include "plugin/plugin.hpp"
#include "run/choose.hpp"
#include "run/declared_run.hpp"
#include "run/host_side.hpp"
#include "run/runner.hpp"
#include "tune/measure/sweep_options.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune/workers/pool.hpp"
#include "util/timeline.hpp"

namespace gpuk {

namespace {

// Makes only GPU `ordinal` visible to CUDA in this worker process, before CUDA starts here: the
// driver then starts that one GPU, not every GPU of the host (a worker's start took 1.5-2 s on a
// host of four H100s). The GPU is then number 0 here; the ordinal to open is returned. Where the
// user set CUDA_VISIBLE_DEVICES already, or CUDA is started, nothing changes.
int see_only(int ordinal) {
  if (cuda_initialised() || std::getenv("CUDA_VISIBLE_DEVICES")) return ordinal;
  ::setenv("CUDA_VISIBLE_DEVICES", std::to_string(ordinal).c_str(), 1);
  return 0;
}

class GpuWorker : public WorkerSession {
 public:
  GpuWorker(const TuneSpec& t, const RunContext& context, int ordinal, const SweepOptions& sweep, HostSide* host)
      : created_(std::chrono::steady_clock::now()),
        nvrtc_(nvrtc_processes(sweep.threads > 0 ? sweep.threads : static_cast<int>(std::thread::hardware_concurrency()),
                               BulkCompiler::kCompileNice)),
        device_(see_only(ordinal)) {
    timeline("worker: CUDA context made");
    device_.renumber(ordinal);
    const auto since = [](std::chrono::steady_clock::time_point from) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
    };
    start_ = since(created_);
    const FamilyPlugin& plugin = context.runtime.plugins().get(t.run.family);
    flushed_ = flushes_l2(t, device_.info());
    refuse_if_run_does_not_fit(t.run, plugin, 0, flushed_, device_);
    auto at = std::chrono::steady_clock::now();
    if (host && host->workload) {
      // The parent's input and reference, inherited: this process's copy of them is its own to
      // take (the parent's stays for the workers it starts later).
      bench_ = std::make_unique<Bench>(t.run, plugin, device_, std::move(host->workload));
      data_ = since(at);
    } else {
      bench_ = std::make_unique<Bench>(t.run, plugin, device_);
      data_ = since(at);
      at = std::chrono::steady_clock::now();
      bench_->reference(1);  // once, before the first variant's check
      reference_ = since(at);
    }
    // A declared kernel's reference kernel, run once on this GPU: its outputs are the answer.
    timeline("worker: data uploaded");
    if (t.run.verify && !t.run.reference_kernel.empty()) run_reference_kernel(t.run, context.runtime, device_, *bench_);
    timeline("worker: reference kernel run");
    measurer_ = make_gpu_measurer(context, device_, *bench_, gpu_measurer_options(t, sweep, flushed_), &stats_);
  }
  SweepTimes times() const override {
    SweepTimes t = measurer_->times();
    t.start = start_;
    t.data = data_;
    t.reference = reference_;
    t.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - created_).count();
    return t;
  }
  DeviceInfo info() const override { return device_.info(); }
  std::uint64_t bytes_moved() const override { return bench_->bytes_moved(); }
  bool flushed() const override { return flushed_; }
  CompileStats compile_stats() const override { return stats_; }
  Measurer& measurer() override { return *measurer_; }

 private:
  std::chrono::steady_clock::time_point created_;
  double start_ = 0, data_ = 0, reference_ = 0;
  // The compile processes, forked before this process starts CUDA (NVRTC ran 1.6x slower in
  // processes forked after cuInit: docs/PERFORMANCE.md); the measurer's compile threads use them.
  std::shared_ptr<NvrtcProcesses> nvrtc_;
  Device device_;
  bool flushed_ = false;
  std::unique_ptr<Bench> bench_;
  CompileStats stats_;
  std::unique_ptr<Measurer> measurer_;
};

}  // namespace

WaveOptions gpu_compile_wave(const Runtime& runtime, int threads) {
  WaveOptions wave;
  if (!runtime.cache().enabled()) return wave;  // nothing to share: the workers compile
  wave.threads = threads;
  wave.compiler = [&runtime, threads](const WorkerInfo& first) -> BulkCompiler::CompileProgram {
    const Jit* jit = &runtime.jit(first.device.arch());
    // In this process, on its compile threads, each handing its programs to a compile process
    // (jit/nvrtc_processes.hpp), forked here before the threads start: its workers are forked by
    // the pool's spawner, which never touches CUDA, so NVRTC's cuInit here does not reach them
    // (tune/workers/spawner.hpp).
    std::shared_ptr<NvrtcProcesses> processes =
        nvrtc_processes(threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency()),
                        BulkCompiler::kCompileNice);
    return [jit, processes](const KernelFile& file, const std::vector<std::string>& names) {
      return jit->compile(file, names, processes.get());
    };
  };
  return wave;
}

std::vector<WorkerInfo> plan_gpu_workers(const TuneSpec& t, const PluginRegistry& plugins,
                                         const std::vector<DeviceInfo>& devices, const std::vector<int>& ordinals) {
  std::vector<WorkerInfo> planned;
  for (int ordinal : ordinals)
    if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= devices.size()) return {};
  const Problem problem = problem_of(t.run);
  const std::vector<std::string> leading = plugins.get(t.run.family).template_args(problem);
  for (int ordinal : ordinals) {
    WorkerInfo info;
    info.ordinal = ordinal;
    info.device = devices[static_cast<std::size_t>(ordinal)];
    info.limits = launch_limits(problem, info.device);
    info.leading_args = leading;
    info.flushed = flushes_l2(t, info.device);
    planned.push_back(std::move(info));
  }
  return planned;
}

std::unique_ptr<WorkerSession> make_gpu_worker(const TuneSpec& t, const RunContext& context, int ordinal,
                                               const SweepOptions& sweep, HostSide* host) {
  return std::make_unique<GpuWorker>(t, context, ordinal, sweep, host);
}

}  // namespace gpuk
