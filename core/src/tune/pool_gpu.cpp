// A worker of a sweep over several GPUs (tune/pool.hpp) on a real GPU: what sweep_on_gpu
// sets up, kept for the worker's life.
#include "plugin/plugin.hpp"
#include "run/device.hpp"
#include "run/runner.hpp"
#include "tune/pool.hpp"
#include "tune/sweep.hpp"

namespace gpuk {

namespace {

class GpuWorker : public WorkerSession {
 public:
  GpuWorker(const TuneSpec& t, const RunContext& context, int ordinal, const SweepOptions& sweep)
      : device_(ordinal) {
    const FamilyPlugin& plugin = context.plugins.get(t.run.family);
    flushed_ = t.flush_l2 == FlushL2::on || (t.flush_l2 == FlushL2::automatic && input_fits_l2(t.run, device_.info()));
    refuse_if_run_does_not_fit(t.run, plugin, 0, flushed_, device_);
    bench_ = std::make_unique<Bench>(t.run, plugin, device_);
    measurer_ = make_gpu_measurer(context, device_, *bench_, gpu_measurer_options(t, sweep, flushed_), &stats_);
  }
  DeviceInfo info() const override { return device_.info(); }
  std::uint64_t bytes_moved() const override { return bench_->bytes_moved(); }
  bool flushed() const override { return flushed_; }
  CompileStats compile_stats() const override { return stats_; }
  Measurer& measurer() override { return *measurer_; }

 private:
  Device device_;
  bool flushed_ = false;
  std::unique_ptr<Bench> bench_;
  CompileStats stats_;
  std::unique_ptr<Measurer> measurer_;
};

}  // namespace

std::unique_ptr<WorkerSession> make_gpu_worker(const TuneSpec& t, const RunContext& context, int ordinal,
                                               const SweepOptions& sweep) {
  return std::make_unique<GpuWorker>(t, context, ordinal, sweep);
}

}  // namespace gpuk
