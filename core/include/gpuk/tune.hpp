// `gpuk tune`: sweeps the template parameters of kernel files, verifies and times every variant,
// ranks them, and keeps the best per GPU and problem in a tuning database (docs/tuning.md).
//
// The pieces, each testable without a GPU:
//   Space     - the points to sweep: kernel files x parameter values, and what prunes them;
//   Measurer  - verifies and times one point (the GPU one compiles in bulk in the background;
//               tests inject a fake);
//   tune()    - a strategy (exhaustive, random, anneal, bayes) walking the space with a
//               Measurer, then the best few measured again, interleaved, to tell a win from a
//               tie, ranked by the objective (time, energy, energy x delay);
//   journal   - every measured point appended as it is measured, so that a sweep run again or
//               cut short measures only what is missing (gpuk/tune_journal.hpp);
//   TuningDb  - the database on disk: atomic, merged under a lock with concurrent writers.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuk/auto_repeats.hpp"
#include "gpuk/config.hpp"
#include "gpuk/error.hpp"
#include "gpuk/kernel_file.hpp"
#include "gpuk/plugin.hpp"

namespace gpuk {

class Device;
class Bench;
class EnergyMeter;
class CompileCache;
struct DeviceInfo;
struct RunContext;

// --- The space -------------------------------------------------------------------------------

// One point: a kernel file of the space and a value for each of its parameters (in the file's
// parameter order).
struct Candidate {
  std::size_t file = 0;
  std::vector<std::int64_t> values;
  auto operator<=>(const Candidate&) const = default;
};

struct SpaceFile {
  std::shared_ptr<const KernelFile> file;  // a copy whose allowed values include the swept ones
  std::vector<std::vector<std::int64_t>> values;  // per parameter, ascending
  std::vector<std::string> widened;  // "GRID=4096": values the metadata does not list
};

class Space {
 public:
  Space(std::vector<SpaceFile> files, std::vector<TuneConstraint> constraints);
  // The kernel files and value lists of a tune config: each file's metadata values, replaced by
  // the config's list for every parameter the config names.
  static Space from_spec(const TuneSpec& spec, const KernelLibrary& kernels);

  const std::vector<SpaceFile>& files() const { return files_; }
  const std::vector<TuneConstraint>& constraints() const { return constraints_; }
  std::uint64_t size() const;  // every point of every file, pruned ones included
  // Points are numbered file by file, the last parameter varying fastest.
  Candidate at(std::uint64_t index) const;
  std::uint64_t index_of(const Candidate& c) const;
  std::map<std::string, std::int64_t> params(const Candidate& c) const;
  std::string label(const Candidate& c) const;  // "onepass BLOCK=256 UNROLL=4"
  Variant variant(const Candidate& c, const std::vector<std::string>& leading_args) const;
  // Points that differ in one parameter by one step of its list.
  std::vector<Candidate> neighbours(const Candidate& c) const;
  // File `file`'s metadata defaults (a default the swept list lacks: the list's middle value),
  // where the anneal and bayes strategies start.
  Candidate defaults(std::size_t file) const;

  // Why the point cannot run on this problem and device, or nullopt when it can (then `plan`,
  // when given, receives its launches). Checks the metadata's constraints, the config's (a config
  // constraint binds a file only when the file has every parameter it names), and the launch
  // geometry against the device's limits. `why` receives a short reason that groups alike
  // failures ("constraint 'BLOCK * UNROLL <= 8192'").
  std::optional<std::string> prune(const Candidate& c, const std::vector<std::string>& leading_args,
                                   const LaunchLimits& limits, LaunchPlan* plan = nullptr,
                                   std::string* why = nullptr) const;

 private:
  std::vector<SpaceFile> files_;
  std::vector<TuneConstraint> constraints_;
  std::vector<std::uint64_t> offsets_;  // first index of each file
};

// --- Measuring -------------------------------------------------------------------------------

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
// the window; gpuk/energy.hpp).
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
  std::string auto_stop;             // `repeats: auto`: why the timing stopped ("converged", ...)
};

// The sweep cannot go on in this process; the results so far are kept.
class SweepAborted : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// A variant faulted (sticky CUDA error) or ran past its time limit: its outcome is known
// (Status::faulted or Status::timed_out), but the CUDA context is gone for good (a reset does not
// bring it back: the driver keeps the sticky error for the process's lifetime), so the sweep
// goes on in a fresh process (`gpuk tune` does that, from the journal: gpuk/tune_journal.hpp).
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
  double total = 0;         // the wall time of the whole
  // total less the parts on the measuring thread (start ... save, compile_wait): bookkeeping,
  // binding scratch, the strategy, the journal.
  double other() const;
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
  std::shared_ptr<EnergyMeter> energy;  // energy() measures with it; none: energy() is nullopt
  double energy_window_s = 0.1;  // the least span of energy-counter changes per energy window
};

struct CompileStats {
  int programs = 0, from_cache = 0, variants = 0;
  double seconds = 0;  // summed over the threads
};

// Measures on `bench` (one uploaded workload). Compiles the variants of each kernel file in as
// few NVRTC programs as there are threads, on a thread pool, while the GPU measures what is
// compiled; a program that fails is split to find the variant(s) at fault.
std::unique_ptr<Measurer> make_gpu_measurer(const RunContext& context, Device& device, Bench& bench,
                                            const GpuMeasurerOptions& options, CompileStats* stats);

// --- The sweep -------------------------------------------------------------------------------

struct Evaluation {
  Candidate candidate;
  std::string label;
  std::map<std::string, std::int64_t> params;
  Outcome outcome;
  Spread time;             // of outcome.samples, or of the recheck's samples when rechecked
  Spread energy;           // joules per call, of outcome.energy (count 0: not measured)
  bool rechecked = false;
  bool reused = false;     // taken from the journal of an earlier sweep, not measured now
  std::string recheck_stop;  // with an automatic recheck: "converged", "time cap" or "run cap"
  double at_seconds = 0;   // since the sweep started
};

struct Progress {
  std::size_t done = 0, planned = 0;  // measured points (pruned excluded)
  std::size_t pruned = 0;
  double elapsed = 0;
  std::string current;
};

struct TuneOptions {
  TuneStrategy strategy = TuneStrategy::exhaustive;
  TuneObjective objective = TuneObjective::time;
  bool measure_energy = false;     // ask the measurer for energy (always with energy and edp)
  std::optional<int> evaluations;  // budget; random, anneal and bayes default to 32
  std::optional<double> seconds;
  std::uint64_t seed = 1;
  int recheck_top = 5;
  int recheck_repeats = 60;
  int recheck_rounds = 4;
  // The recheck times each leader in rounds until its median's confidence interval is within
  // the bound (recheck_repeats is then unused); see gpuk/auto_repeats.hpp.
  std::optional<AutoRepeats> recheck_auto;
  std::function<void(const Progress&)> progress;
  // Evaluations measured before (the journal: an earlier sweep, or an earlier process of this
  // one that lost its CUDA context): taken as they are and never measured again. An ok one
  // without energy gets its energy measured when the sweep needs it.
  std::vector<Evaluation> prior;
  // Called with each point as it is measured (and again when energy is added to a prior one):
  // the journal appends it.
  std::function<void(const Evaluation&)> on_measured;
};

// An evaluation's figure of merit under an objective, with its quartiles; nullopt when it did
// not run correctly or (energy, edp) has no energy. time: ms; energy: J per call; edp: J x s.
struct Cost {
  double median = 0, q1 = 0, q3 = 0;
};
std::optional<Cost> cost_of(const Evaluation& e, TuneObjective objective);
bool needs_energy(TuneObjective objective);
const char* objective_name(TuneObjective o);  // "time", "energy", "edp"
std::optional<TuneObjective> parse_objective(std::string_view name);
std::optional<TuneStrategy> parse_strategy(std::string_view name);

struct TuneResult {
  std::vector<Evaluation> evaluations;  // in the order they were evaluated, pruned ones included
  std::vector<std::size_t> ranking;     // indices of the ok evaluations, best (by the objective) first
  std::vector<std::size_t> ties;        // ranked ok evaluations within the winner's noise
  TuneObjective objective = TuneObjective::time;
  std::size_t reused = 0;               // evaluations taken from the journal of earlier sweeps
  std::string stopped;                  // why the sweep stopped early, if it did
  bool aborted = false;                 // it stopped because the GPU could not go on
  bool context_lost = false;            // ... because a variant took the CUDA context down:
                                        // a fresh process can go on (from the journal)
  double seconds = 0;
  SweepTimes times;                     // the measurer's, with the recheck and total of tune()
  std::size_t count(Status s) const;
  const Evaluation* winner() const { return ranking.empty() ? nullptr : &evaluations[ranking.front()]; }
};

TuneResult tune(const Space& space, Measurer& measurer, const TuneOptions& options);

// Milliseconds -> GB/s for `bytes` moved.
double gbs_of(std::uint64_t bytes, double ms);

// The report of a sweep.
struct TuneReport {
  std::string config, family, operation, dtype, gpu, arch, nvrtc, strategy, timing;
  std::string objective = "time";
  int sm_count = 0;                // the device's, for replays (tools/bench_strategies)
  std::string journal;             // the journal file of the sweep ("" when none)
  std::vector<std::string> notes;  // said under the table ("energy not measured: ...")
  std::vector<std::pair<std::string, std::string>> options;
  std::uint64_t size = 0, bytes_moved = 0, seed = 0;
  double peak_gbs = 0, wall_seconds = 0;
  std::vector<std::string> devices;  // a sweep over several GPUs: "GPU 0", "GPU 1", ... of this model
  CompileStats compile;
  TuneResult result;
  // Where the time went: result.times with the process's start and the saving added (a pooled
  // sweep: the parent's), and for a pooled sweep each worker's own ("GPU 0", its times).
  SweepTimes times;
  std::vector<std::pair<std::string, SweepTimes>> worker_times;
  // The family's library call timed on the same input after the sweep (SweepOptions::baseline).
  std::optional<BaselineTiming> baseline;
};
void print_tune_report(std::ostream& out, const TuneReport& report, int show);

// "exhaustive", "random", "anneal", "bayes".
const char* strategy_name(TuneStrategy s);

// The report of a sweep of `t` on `info`: the problem, the device, the strategy, and the timing
// sentence (repeats, recheck, whether and how the L2 was flushed). wall_seconds is left to the
// caller, which may have run the sweep over several processes.
TuneReport make_tune_report(const TuneSpec& t, const TuneOptions& options, TuneResult result, const DeviceInfo& info,
                            std::uint64_t bytes_moved, bool flushed, const CompileStats& stats);


void write_tune_json(const std::filesystem::path& path, const TuneReport& report);
void write_tune_csv(const std::filesystem::path& path, const TuneReport& report);

// --- The tuning database ---------------------------------------------------------------------

// floor(log2(n)): sizes in [2^k, 2^(k+1)) share bucket k.
int size_bucket(std::uint64_t n);

struct TuningKey {
  std::string gpu;   // "NVIDIA H100 80GB HBM3"
  std::string arch;  // "sm_90": the compute capability
  std::string family, operation;
  std::string options;  // the family's options, "abs=true" ("" when it has none)
  std::string dtype;
  int bucket = 0;
  std::string objective = "time";  // what the entry is best at; a database without it reads as time
  auto operator<=>(const TuningKey&) const = default;
};

struct TuningEntry {
  TuningKey key;
  std::string kernel;
  std::map<std::string, std::int64_t> params;
  double median_ms = 0;
  double gbs = 0;
  std::optional<double> joules;   // per call, when energy was measured
  std::optional<double> watts;
  std::uint64_t size = 0;         // the n it was tuned at
  std::vector<std::string> ties;  // variants within the noise of this one
  std::string strategy;
  int evaluated = 0;
  std::string tuned_at;  // UTC, ISO 8601
  std::string gpuk_version, nvrtc;
};

std::string options_key(const std::map<std::string, std::string>& options);

class TuningDb {
 public:
  // $GPUK_TUNING_DB, else tuning/tuning.json in the compile cache's default directory.
  static std::filesystem::path default_path();
  // A missing file is an empty database; one that is not JSON, or not a gpuk database, is a
  // ConfigError naming the file. An entry with a wrong type or value (a hand edit) is skipped
  // with a warning naming it; the others are used.
  static TuningDb read(const std::filesystem::path& path);
  // Writes to a temporary file and renames it into place.
  void write(const std::filesystem::path& path) const;
  // Under an exclusive lock on PATH.lock: re-reads the file, adds or replaces `entries` (a key
  // already there takes the new entry), writes atomically. Concurrent writers lose nothing;
  // skipped entries are written back as they were; a file that is not JSON is moved aside.
  static void merge_into(const std::filesystem::path& path, const std::vector<TuningEntry>& entries);

  void put(const TuningEntry& entry);  // replaces the entry of the same key
  const std::vector<TuningEntry>& entries() const { return entries_; }
  const TuningEntry* find(const TuningKey& key) const;

  struct Pick {
    const TuningEntry* entry = nullptr;
    bool exact = false;  // the same size bucket; else the nearest within two buckets
  };
  // The entry for this key's bucket, else the nearest bucket at most 2 away (n within 4x) of the
  // same GPU, family, operation, options and dtype; the nearer one wins, the larger on a draw.
  // With same_gpu false, entries of any GPU of the key's architecture match (a shipped file).
  Pick pick(const TuningKey& key, bool same_gpu = true) const;

 private:
  std::vector<TuningEntry> entries_;  // sorted by key
  std::vector<std::string> unreadable_;  // entries read() skipped, as JSON text, written back as they were
};

// --- One process's part of a sweep on the GPU, and what it records ----------------------------

// The sweep's winner as a tuning database entry (TuningDb::merge_into writes it); nullopt when
// there is none or the sweep was cut short by the GPU.
std::optional<TuningEntry> winner_entry(const TuneReport& report, const Space& space);

struct SweepOptions {
  int threads = 0;          // compile threads; 0: every core
  double time_limit_s = 0;  // per run of a variant; 0: the default
  std::vector<Evaluation> prior;  // measured before, taken as they are (with the journal's)
  std::function<void(const Progress&)> progress;
  bool baseline = false;  // also time the family's library baseline (the tuning matrix does)
  // The journal (gpuk/tune_journal.hpp): its directory ("" for none); this sweep's run id
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

// One process's part of a sweep of `space` for `t` on `device`: refuses a run that does not fit
// (before any data exists: the data, the family's buffers, the L2 flush buffer), uploads the
// data once, measures with the GPU measurer (bulk compile) and ranks. When a variant took the
// CUDA context down, report.result.context_lost is set: go on in a fresh
// process. With a journal, every measured point is appended to it as it is measured and what it
// has for this sweep is taken instead of measured (report.result.reused counts those of other
// runs).
TuneReport sweep_on_gpu(const TuneSpec& t, const Space& space, const RunContext& context, Device& device,
                        const SweepOptions& options);

}  // namespace gpuk
