// One config, end to end: data, JIT, upload, launch, verify, baselines, and the report's values
// (printed and written by report/run_report.hpp).
#pragma once
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "device/device.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "run/prepare.hpp"
#include "run/runtime.hpp"

namespace gpuk {

struct Stats {
  double median = 0, min = 0, max = 0;
  std::size_t count = 0;
  double q1 = 0, q3 = 0;  // quartiles (NumPy's linear interpolation): the spread `gpuk compare` reads
  static Stats of(std::vector<double> samples);
};

struct NamedStats {
  std::string name;
  Stats ms;
  std::string note;
};

struct RunReport {
  // What ran.
  std::string config, family, operation, kernel_file, variant, dtype;
  std::string variant_source;  // why this variant (run/choose.hpp): the `chosen` line
  std::vector<std::string> warnings;  // tuning picks passed over, tuning files left out
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<ResolvedLaunch> launches;
  std::uint64_t size = 0;
  // A declared kernel's named sizes (m, n, k), which the report shows in place of dtype and n
  // (`size` is then their product: the tuning database's size bucket).
  std::vector<std::pair<std::string, std::int64_t>> sizes;
  DataSummary data;  // what the input was: generator, range, seed, distinct values
  // Where.
  std::string gpu, arch, nvrtc;
  int driver_version = 0;
  double peak_gbs = 0;
  // Compile.
  double compile_ms = 0;
  bool from_cache = false;
  // Times (milliseconds).
  double upload_ms = 0, download_ms = 0, total_ms = 0;
  std::uint64_t upload_bytes = 0, download_bytes = 0;  // GB/s of the copies: bytes / ms
  std::string pin_note;  // empty: the input was page-locked; else why it was not
  Stats kernel;
  std::vector<NamedStats> cpu;
  std::optional<NamedStats> baseline;
  // Throughput and answer.
  std::uint64_t bytes_moved = 0;
  double gbs = 0, percent_of_peak = 0;
  Verification verification;
  bool verified = false;
  std::vector<std::pair<std::string, std::string>> result;
  std::vector<std::pair<std::string, double>> metrics;  // a declared kernel's, from the kernel median

  double speedup_over_cpu() const;       // best CPU median / kernel median
  double speedup_over_baseline() const;  // baseline median / kernel median (0 without one)
};

// The watchdog's limit on one run of a variant, before the input's share is added (see
// Bench::time_limit); `--time-limit` overrides it.
inline constexpr double kDefaultTimeLimitSeconds = 10;

// What a run starts from: the Runtime (plugins, kernel files, compile cache, the user's tuning
// database the lookup reads, the JIT of each architecture; a config's `tuning: FILE` replaces the
// database) and the watchdog's limit.
struct RunContext {
  const Runtime& runtime;
  double time_limit_s = 0;  // per run of a variant; 0: kDefaultTimeLimitSeconds
};

// What the lookup reads for a run of `spec` on `arch`: the config's `tuning:` file, else the
// user's database at `tuning_db` (default TuningDb::default_path()), and the tuning files shipped
// for `arch`. Empty for a config that names its variant.
TuningSources tuning_sources(const RunSpec& spec, const KernelLibrary& kernels,
                             const std::optional<std::filesystem::path>& tuning_db, const std::string& arch);

// True when the input is smaller than twice the L2 cache: repeated runs would read it from L2.
bool input_fits_l2(const RunSpec& spec, const DeviceInfo& info);

// One uploaded workload that many variants can run on: the data is generated (or read) and
// uploaded once, the CPU reference computed once, and each variant is bound, checked and timed in
// turn, launched by the family's Launcher on the workload's arrays. run() is one Bench with one
// variant; `gpuk tune` measures a whole sweep on one Bench.
class Bench {
 public:
  // A run's Bench, made from its prepared variant (prepare_run, which checked that the run fits):
  // its Launcher, the run's only one, taken over; the data generated (or read) and page-locked,
  // the family's workload made, the data uploaded (timed), and the variant bound (its scratch).
  Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device, PreparedRun prepared);
  // Generates or reads the data, makes the family's workload and launcher and uploads the data
  // (timed). The caller has checked that the run fits (refuse_if_run_does_not_fit).
  Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device);
  // The same with the workload made before (run/host_side.hpp, its CPU reference computed): only
  // the upload, from pageable memory (a workload made before the process had a CUDA context
  // cannot have been page-locked).
  Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device, std::unique_ptr<Workload> prepared);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  const RunSpec& spec() const { return spec_; }
  // The prepared variant this Bench was made from (its first constructor); Error otherwise.
  const PreparedRun& prepared() const;
  Workload& workload() { return *workload_; }
  const Launcher& launcher() const { return *launcher_; }
  const Stream& stream() const { return *stream_; }
  double upload_ms() const { return upload_ms_; }
  // Bytes the workload copies each way: its arrays that are inputs (up) and outputs (down).
  std::uint64_t upload_bytes() const;
  std::uint64_t download_bytes() const;
  // Empty when the input was page-locked before its upload, else why it was not (HostArray::pin).
  const std::string& pin_note() const { return pin_note_; }
  std::uint64_t bytes_moved() const { return bytes_moved_; }
  bool input_fits_l2() const;  // gpuk::input_fits_l2 of this bench's spec and device

  // Allocates and initialises the scratch the plan needs (the Launcher's); call before running a
  // variant with that plan.
  void bind(const LaunchPlan& plan);
  bool has_prepared() const { return prepared_ != nullptr; }
  // Enqueues the bound variant once on the bench's stream.
  void launch(const LaunchTarget& target);
  // Runs the CPU reference `repeats` times the first time it is asked for; later calls return
  // those timings without running it again.
  const std::vector<CpuTiming>& reference(int repeats);
  // Poisons the outputs, runs the variant once, downloads and verifies against the reference
  // (computed with one repeat when it is not there yet).
  Verification check(const LaunchTarget& target);
  // `warmup` untimed runs, then `repeats` runs each timed with CUDA events. Before each timed
  // run (outside the events) the outputs are poisoned and, with flush_l2, a buffer of twice the
  // L2 size is written so that the run starts with a cold cache.
  std::vector<double> time(const LaunchTarget& target, int warmup, int repeats, bool flush_l2);
  // The same for the prepared variant this Bench was made from.
  std::vector<double> time(int warmup, int repeats, bool flush_l2);
  // Downloads the result; returns the milliseconds it took.
  double download();

  // The watchdog: one run of a variant may take `base_seconds` plus one second per GB the
  // workload moves; past it, a wait throws TimeLimitError. 0 restores the default.
  void set_time_limit(double base_seconds) { time_limit_base_ = base_seconds > 0 ? base_seconds : kDefaultTimeLimitSeconds; }
  double time_limit() const;


 private:
  void make(std::unique_ptr<Launcher> launcher, std::unique_ptr<Workload> prepared);
  void synchronize(const std::string& where) const;
  RunSpec spec_;
  const FamilyPlugin& plugin_;
  std::unique_ptr<PreparedRun> prepared_;
  Device& device_;
  double time_limit_base_ = kDefaultTimeLimitSeconds;
  bool workload_has_reference_ = false;
  std::uint64_t bytes_moved_ = 0;
  std::unique_ptr<Workload> workload_;
  std::unique_ptr<Launcher> launcher_;
  std::vector<CUdeviceptr> arrays_;  // the workload's, in the launcher's order
  DeviceBuffer scratch_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Event> start_, stop_;
  std::optional<DeviceBuffer> flush_;
  std::vector<CpuTiming> reference_;
  bool reference_done_ = false;
  double upload_ms_ = 0;
  std::string pin_note_;
};

// When the context is dead after `error` (a sticky error: the kernel of `where` faulted), throws
// FaultError: "<where> faulted: CUDA_ERROR_... (...)"; else returns.
void throw_if_faulted(const std::string& where, const Error& error);

// Throws ConfigError, CompileError or DeviceError with the variant named: FaultError when the
// variant faulted, TimeLimitError when it ran past its time limit. `precompiled`, when
// it holds the variant's kernels, spares the JIT (tests compile a whole file's variants at once).
// Threads may call it at once: they compile side by side, and measure one at a time (the data,
// the timed runs, the download and the baselines hold one lock per process), since timed runs
// must not overlap, and a stream gate held by one thread would stall another thread's
// synchronous driver calls, and so itself. (The library API, gpuk/gpuk.hpp, times nothing.)
RunReport run(const RunSpec& spec, const RunContext& context, Device& device,
              const CompiledKernels* precompiled = nullptr);

}  // namespace gpuk
