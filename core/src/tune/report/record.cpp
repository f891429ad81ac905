// What a sweep records: its report (the problem, the device, how it was timed) and its winner as
// a tuning database entry.
#include <algorithm>
#include <ctime>
#include <iomanip>
#include <sstream>

#include "config/config.hpp"
#include "device/device.hpp"
#include "jit/jit.hpp"
#include "plugin/plugin.hpp"
#include "run/declared_run.hpp"
#include "tune/sweep/sweep.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string mib(std::int64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(bytes < (1 << 20) ? 2 : 0) << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return out.str();
}

}  // namespace

TuneReport make_tune_report(const TuneSpec& t, const TuneOptions& options, TuneResult result, const DeviceInfo& info,
                            std::uint64_t bytes_moved, bool flushed, const CompileStats& stats) {
  TuneReport report;
  report.config = t.run.path.string();
  report.family = t.run.family;
  report.operation = t.run.operation;
  report.dtype = std::string(dtype_name(t.run.dtype));
  report.options.assign(t.run.options.begin(), t.run.options.end());
  report.size = t.run.size;
  report.data = run_data_summary(t.run);
  report.bytes_moved = bytes_moved;
  report.gpu = info.name;
  report.arch = info.arch();
  report.nvrtc = nvrtc_version();
  report.peak_gbs = info.peak_bandwidth_gbs;
  report.strategy = strategy_name(t.strategy);
  report.objective = t.metric_objective ? t.metric_objective->name + (t.metric_objective->higher_is_better
                                                                        ? " (higher is better)" : " (lower is better)")
                                        : objective_name(t.objective);
  report.sm_count = info.sm_count;
  report.seed = t.seed;
  const std::int64_t input_bytes = static_cast<std::int64_t>(t.run.size * dtype_size(t.run.dtype));
  std::ostringstream timing;
  const std::string until = "until the median's 95% confidence interval is within +-" + fixed(100 * t.auto_bound, 1) +
                            "% (at most " + fixed(t.auto_seconds, 1) + " s";
  timing << "CUDA events; per variant 1 verified run, " << t.run.warmup << " warm-ups, median of ";
  if (t.auto_repeats) timing << "runs timed in batches of 10 " << until << " per variant)";
  else timing << t.run.repeats << " timed runs";
  timing << "; the best " << options.recheck_top << " re-timed";
  if (options.recheck_auto) timing << ", interleaved in rounds of 10 runs, " << until << " per variant)";
  else timing << " " << options.recheck_repeats << " times more, interleaved";
  timing << "; ";
  if (flushed)
    timing << "L2 (" << mib(info.l2_bytes) << ") flushed by writing " << mib(2 * info.l2_bytes)
           << " before each timed run (input " << mib(input_bytes) << ")";
  else if (t.flush_l2 == FlushL2::off)
    timing << "no L2 flush (flush_l2: false; input " << mib(input_bytes) << ")";
  else
    timing << "no L2 flush needed: the input (" << mib(input_bytes) << ") is over twice the L2 (" << mib(info.l2_bytes)
           << ")";
  if (options.measure_energy || needs_energy(options.objective)) {
    timing << "; energy from NVML's counter over at least 0.1 s of back-to-back runs per variant (warm L2, "
              "no flush), again in each of the first "
           << options.recheck_rounds << " recheck rounds";
    std::int64_t fewest = -1, most = 0;
    for (const auto& e : result.evaluations)
      for (const auto& w : e.outcome.energy) {
        fewest = fewest < 0 ? w.calls : std::min(fewest, w.calls);
        most = std::max(most, w.calls);
      }
    if (most > 1)
      timing << "; one call is too short for the counter, so each window took " << fewest
             << (most > fewest ? " to " + std::to_string(most) : std::string()) << " calls";
    // What the figure covers: a window's time per call against the variant's kernel time. Where
    // the two differ, energy per call is the GPU's energy per back-to-back call (the gaps between
    // calls included), not power x kernel time; said with the figures (issue 27).
    double low = 0, high = 0;
    for (const auto& e : result.evaluations) {
      if (e.outcome.status != Status::ok || e.time.median <= 0) continue;
      for (const auto& w : e.outcome.energy) {
        if (w.calls <= 0) continue;
        const double ratio = w.window_s * 1e3 / static_cast<double>(w.calls) / e.time.median;
        low = low > 0 ? std::min(low, ratio) : ratio;
        high = std::max(high, ratio);
      }
    }
    if (high > 1.1 || (low > 0 && low < 0.9))
      timing << "; the windows held " << fixed(low, 2) << (high > low + 0.005 ? " to " + fixed(high, 2) : std::string())
             << "x each variant's kernel time per call: energy per call includes the GPU's time between calls, "
                "so it is not power x kernel time";
  }
  report.timing = timing.str();
  report.compile = stats;
  report.times = result.times;
  report.result = std::move(result);
  return report;
}

std::optional<TuningEntry> winner_entry(const TuneReport& report, const Space& space) {
  const Evaluation* w = report.result.winner();
  if (!w || report.result.aborted) return std::nullopt;
  std::map<std::string, std::string> options(report.options.begin(), report.options.end());
  TuningEntry e;
  e.key = {report.gpu,   report.arch,  report.family,           report.operation, options_key(options),
           report.dtype, size_bucket(report.size), report.objective};
  e.kernel = space.files()[w->candidate.file].file->name;
  e.params = w->params;
  e.median_ms = w->time.median;
  e.gbs = gbs_of(report.bytes_moved, w->time.median);
  if (w->energy.count > 0) {
    e.joules = w->energy.median;
    double watts = 0;
    for (const auto& s : w->outcome.energy) watts += s.watts;
    e.watts = watts / static_cast<double>(w->outcome.energy.size());
  }
  e.size = report.size;
  for (auto i : report.result.ties) e.ties.push_back(report.result.evaluations[i].label);
  e.strategy = report.strategy;
  e.evaluated = static_cast<int>(report.result.evaluations.size() - report.result.count(Status::pruned));
  e.tuned_at = utc_now();
  e.gpuk_version = gpuk_version();
  e.nvrtc = report.nvrtc;
  return e;
}

}  // namespace gpuk
