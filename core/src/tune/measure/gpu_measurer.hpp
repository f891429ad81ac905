// The GPU Measurer of `gpuk tune` (make_gpu_measurer): compiles variants in bulk
// (tune/measure/bulk_compiler.hpp) while the GPU measures what is already compiled, on one uploaded
// workload (Bench). Its energy window is gpu_energy.cpp. Not installed.
#pragma once
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "tune/measure/bulk_compiler.hpp"
#include "tune/measure/device_answer.hpp"
#include "tune/sweep/timing_cut.hpp"
#include "tune/sweep/sweep.hpp"

namespace gpuk::detail {

// A point of the sweep as this process measures it.
struct Prepared {
  std::shared_ptr<Chunk> chunk;
  LaunchPlan plan;
  std::string label, where;
  LoadedKernels kernels;              // once loaded, on the measuring thread (the one with the context)
  std::vector<CUfunction> functions;  // bound to the plan
  bool loaded = false;
  // The in-out inputs its timed runs left unchanged (GpuMeasurer::time_variant): its recheck
  // leaves them unrestored too.
  std::vector<bool> unchanged;
};

class GpuMeasurer final : public Measurer {
 public:
  GpuMeasurer(const RunContext& context, Device& device, Bench& bench, const GpuMeasurerOptions& options,
              CompileStats* stats);

  LaunchLimits limits() const override { return limits_; }
  std::vector<std::string> leading_args() const override { return leading_; }
  SweepTimes times() const override;
  void prepare(const Space& space, const std::vector<Candidate>& points) override;
  void adopt(const Space& space, const CompiledProgram& program) override;
  Outcome measure(const Space& space, const Candidate& c) override;
  std::optional<EnergySample> energy(const Space& space, const Candidate& c, double ms_per_call) override;
  std::vector<double> time(const Space& space, const Candidate& c, int repeats) override;
  std::vector<std::string> notes() const override;

 private:
  // The points of `points` not prepared yet and runnable here, prepared (their plans).
  std::vector<PlannedPoint> plan(const Space& space, const std::vector<Candidate>& points);
  std::optional<Outcome> not_ready(Prepared& p);
  void time_variant(Outcome& o, const LaunchTarget& target, Prepared& p);
  bool runs_left_inputs(const std::vector<bool>& untouched, const std::function<void()>& runs);
  void time_runs(Outcome& o, const LaunchTarget& target);
  Verification verify(const LaunchTarget& target, const Prepared& p);
  void bind_scratch(const Prepared& p);
  void drop_answer(const std::string& why);
  Prepared& ready(const Space& space, const Candidate& c, const std::string& what);
  void load(Prepared& p);
  void failed(Outcome& o, const Error& e, const Prepared& p);

  Device& device_;
  Bench& bench_;
  GpuMeasurerOptions options_;
  TimingCut cut_;      // variants far behind the fastest so far get one timed run
  int cut_count_ = 0;  // how many did
  // Variants timed without restoring the in-out inputs they leave unchanged (time_variant), and
  // of those, the ones timed again with them restored (an input changed after all).
  int unrestored_ = 0, restored_again_ = 0;
  SweepTimes times_;  // the measuring thread's parts
  std::unique_ptr<DeviceAnswer> answer_;  // the kept verified answer, once there is one
  bool answer_tried_ = false;
  std::string no_device_check_;  // why the device comparison is off
  int on_device_ = 0, on_host_ = 0;  // variants verified each way
  int host_in_part_ = 0;             // of on_host_: those whose outputs were partly the answer's bytes
  int within_on_device_ = 0;         // verified within the expected outputs' rule on the GPU
  std::string no_within_;            // why the expected outputs are not on the GPU
  std::vector<std::string> leading_;
  LaunchLimits limits_;
  std::map<Candidate, Prepared> prepared_;
  const Jit& jit_;  // the Runtime's, for this GPU's architecture
  // NVRTC's processes (jit/nvrtc_processes.hpp), forked before the compile threads start; null:
  // NVRTC runs on the threads.
  std::shared_ptr<NvrtcProcesses> nvrtc_;
  // The device comparison's kernels, compiled from the start on a thread of their own, so that
  // the first verified answer does not wait for NVRTC (after jit_: it goes before what it uses).
  std::future<CompiledKernels> answer_program_;
  std::future<CompiledKernels> within_program_;  // DeviceAnswer::compile_within, beside the sweep
  bool within_pending_ = false;  // the workload's expected outputs wait for within_program_
  // Where verify's time went: the comparisons on the device, the checks on the host, and the
  // device comparison made ready (loaded, its copy of the answer kept and the kernel checked).
  double device_checks_s_ = 0, host_checks_s_ = 0, answer_setup_s_ = 0;
  BulkCompiler compiler_;  // last: its threads go before what they use
};

// "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested for launch)" from a message.
std::string cuda_error_of(const std::string& message);

}  // namespace gpuk::detail
