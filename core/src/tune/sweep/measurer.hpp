// Verifying and timing one point of a sweep: the Measurer interface (the GPU one compiles in
// bulk in the background; tests inject a fake), the outcome of a point, and the errors that
// stop a sweep in this process.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuk/error.hpp"
#include "tune/sweep/auto_repeats.hpp"
#include "tune/sweep/space.hpp"

namespace gpuk {

class Device;
class Bench;
class EnergyMeter;
struct RunContext;

// faulted: the variant's kernel took the CUDA context down (illegal address, trap, ...);
// timed_out: it ran past its time limit and was abandoned. After either, the GPU measurer
// rebuilds the context and the sweep goes on.
enum class Status { ok, invalid, pruned, compile_error, launch_error, faulted, timed_out };
std::string_view status_name(Status s);  // "ok", "wrong answer", "pruned", "compile error", ...

struct Spread {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  std::size_t count = 0;
  static Spread of(std::vector<double> samples);
  double iqr_percent() const { return median > 0 ? 100.0 * (q3 - q1) / median : 0; }
};

// Energy over a window of back-to-back runs of one variant (NVML's energy counter, read around
// the window; tune/measure/energy.hpp).
struct EnergySample {
  double joules = 0;    // per call
  double watts = 0;     // average over the window
  double sm_mhz = 0;    // SM clock, sampled while the runs ran
  std::int64_t calls = 0;
  double window_s = 0;  // the span the counter's changes covered
};

struct Outcome {
  Status status = Status::ok;
  std::string why;     // short, groups alike failures ("too many resources requested for launch")
  std::string detail;  // the full message
  std::vector<double> samples;  // kernel milliseconds of the timed repeats
  int registers = -1;           // per thread (cuFuncGetAttribute NUM_REGS), -1 when not known
  int spill_bytes = -1;         // local memory per thread
  int device = -1;              // the GPU that measured it, where several did (gpuk tune --devices)
  std::vector<ResolvedLaunch> launches;
  std::vector<EnergySample> energy;  // one per window measured (the recheck adds more)
  std::string auto_stop;             // why the timing stopped: `repeats: auto`'s ("converged", ...), or "cut"
};

// The sweep cannot go on in this process; the results so far are kept.
class SweepAborted : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// A variant faulted (sticky CUDA error) or ran past its time limit: its outcome is known
// (Status::faulted or Status::timed_out), but the CUDA context is gone for good (a reset does not
// bring it back: the driver keeps the sticky error for the process's lifetime), so the sweep
// goes on in a fresh process (`gpuk tune` does that, from the journal: tune/report/journal.hpp).
class ContextLost : public SweepAborted {
 public:
  ContextLost(const std::string& what, Outcome lost) : SweepAborted(what), outcome(std::move(lost)) {}
  Outcome outcome;
};

// Where a sweep's time went, in seconds (docs/tuning.md, "Where the time goes"). The compile
// threads run beside the measuring thread: compile_wall and compile_sum overlap the other parts;
// the measuring thread's own share of them is compile_wait.
struct SweepTimes {
  double start = 0;         // the process and its CUDA context, up to the sweep
  double data = 0;          // the input generated (or read) and uploaded
  double reference = 0;     // the CPU reference answer
  double compile_wall = 0;  // from the first compile's start to the last one's end
  double compile_sum = 0;   // NVRTC time summed over the compile threads
  double compile_wait = 0;  // the measuring thread waiting for compiles and loading CUBINs
  double measure = 0;       // warm-ups and timed runs of the variants (the GPU)
  double verify = 0;        // each variant's checked run and the comparison with the reference
  double recheck = 0;       // the leaders timed again
  double save = 0;          // the tuning database written
  double scratch = 0;       // each variant's scratch allocated and initialised (Bench::bind)
  double idle = 0;          // a pooled sweep's worker waiting for the parent's next request
  double total = 0;         // the wall time of the whole
  // total less the parts on the measuring thread (start ... idle, compile_wait): bookkeeping,
  // the strategy, the journal.
  double other() const;
};

// A program of one kernel file's variants compiled by another process into the compile cache
// (a pooled sweep's parent compiles every program once for all its workers): the points it
// holds, its name expressions as compiled (they make the cache key), and per name its compile
// error ("" when it compiled).
struct CompiledProgram {
  std::vector<Candidate> points;
  std::vector<std::string> names;
  std::vector<std::string> errors;
};

// Verifies and times points. The GPU one (make_gpu_measurer) compiles in bulk in the background
// while it measures; tests inject a fake.
class Measurer {
 public:
  virtual ~Measurer() = default;
  virtual LaunchLimits limits() const = 0;
  virtual std::vector<std::string> leading_args() const = 0;
  // These points will be measured soon: start compiling them (in bulk, in the background).
  virtual void prepare(const Space& space, const std::vector<Candidate>& points) = 0;
  // These points were compiled elsewhere (`program`): take them from the compile cache instead
  // of compiling them. A measurer without a cache of its own prepares them.
  virtual void adopt(const Space& space, const CompiledProgram& program) { prepare(space, program.points); }
  // Verifies the point against the CPU reference, then times it (warm-up, repeats). A wrong
  // answer is Status::invalid and not timed. A fault or a hang throws ContextLost with the
  // variant's outcome (Status::faulted, Status::timed_out); SweepAborted when nothing more can run.
  virtual Outcome measure(const Space& space, const Candidate& c) = 0;
  // More timed repeats of a point measure() found ok.
  virtual std::vector<double> time(const Space& space, const Candidate& c, int repeats) = 0;
  // Energy of a point measure() found ok, over one window of back-to-back runs; nullopt where
  // energy cannot be measured (no NVML). `ms_per_call` sizes the batches.
  virtual std::optional<EnergySample> energy(const Space&, const Candidate&, double /*ms_per_call*/) {
    return std::nullopt;
  }
  // Its own share of the sweep's time so far (compiles, verification, timing), where it keeps
  // one; tune() counts the time inside measure() as `measure` for a measurer that keeps none.
  virtual SweepTimes times() const { return {}; }
  // Lines for the report's notes (how the variants were verified, ...).
  virtual std::vector<std::string> notes() const { return {}; }
};

struct GpuMeasurerOptions {
  int warmup = 5, repeats = 30;
  bool flush_l2 = false;
  int threads = 0;  // compile threads; 0: every core
  double time_limit_s = 0;  // per run of a variant (Bench::set_time_limit); 0: the default
  std::optional<AutoRepeats> auto_repeats;  // `repeats: auto`: time until the median is known
  // > 0: a verified variant whose first timed run is over this many times the fastest median
  // timed before it keeps that one run as its timing (tune/sweep/timing_cut.hpp); 0: none is cut.
  double cut_factor = 0;
  std::shared_ptr<EnergyMeter> energy;  // energy() measures with it; none: energy() is nullopt
  double energy_window_s = 0.1;  // the least span of energy-counter changes per energy window
};

struct CompileStats {
  int programs = 0, from_cache = 0, variants = 0;
  double seconds = 0;  // summed over the threads
};

// Measures on `bench` (one uploaded workload). Compiles the variants of each kernel file on a
// thread pool (tune/measure/bulk_compiler.hpp: small programs, each kernel once however many variants
// share its code), while the GPU measures what is compiled; a program that fails is split to find
// the variant(s) at fault.
std::unique_ptr<Measurer> make_gpu_measurer(const RunContext& context, Device& device, Bench& bench,
                                            const GpuMeasurerOptions& options, CompileStats* stats);

}  // namespace gpuk
