// The report of a sweep: the ranked table, JSON and CSV.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "gpuk/error.hpp"
#include "report/report_head.hpp"
#include "tune/sweep/sweep.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

// The mean of a variant's energy windows' power and SM clock.
std::pair<double, double> watts_and_mhz(const Evaluation& e) {
  double w = 0, m = 0;
  for (const auto& s : e.outcome.energy) w += s.watts, m += s.sm_mhz;
  const double n = static_cast<double>(std::max<std::size_t>(1, e.outcome.energy.size()));
  return {w / n, m / n};
}

// Joules in a unit that suits them: "12.3 uJ", "1.23 mJ".
std::string joules_text(double j) {
  if (j >= 1) return fixed(j, 3) + " J";
  if (j >= 1e-3) return fixed(j * 1e3, 3) + " mJ";
  return fixed(j * 1e6, 2) + " uJ";
}

// "start 0.4, data 1.2, CPU reference 3.1, compile 28.8 wall / 45.0 summed (waited 2.0), ...".
std::string times_text(const SweepTimes& t) {
  const auto s = [](double v) { return fixed(v, v < 10 ? 2 : 1); };
  return "start " + s(t.start) + ", data " + s(t.data) + ", CPU reference " + s(t.reference) + ", compile " +
         s(t.compile_wall) + " wall / " + s(t.compile_sum) + " summed (waited " + s(t.compile_wait) + "), measure " +
         s(t.measure) + ", verify " + s(t.verify) + ", scratch " + s(t.scratch) + ", recheck " + s(t.recheck) +
         ", save " + s(t.save) + (t.idle > 0 ? ", idle " + s(t.idle) : std::string()) + ", other " + s(t.other());
}

}  // namespace

// --- Reports ---------------------------------------------------------------------------------

void print_tune_report(std::ostream& out, const TuneReport& r, int show) {
  const TuneResult& res = r.result;
  out << "gpuk tune " << r.config << "\n";
  out << "  " << r.family << " " << r.operation;
  for (const auto& [k, v] : r.options) out << " " << k << "=" << v;
  out << "  dtype " << r.dtype << "  n " << r.size << "\n";
  out << "  data     " << r.data.text() << "\n";
  out << "  device   " << r.gpu << " (" << r.arch << "), NVRTC " << r.nvrtc << "\n";
  // One GPU's worker is said only when it was replaced after faults; several are always said.
  if (r.devices.size() > 1 || (r.devices.size() == 1 && r.devices.front().find(" (") != std::string::npos))
    out << "  pooled   " << join(r.devices) << " (one worker process each)\n";
  const std::size_t measured = res.evaluations.size() - res.count(Status::pruned);
  out << "  sweep    " << r.strategy << " (seed " << r.seed << "): " << measured << " variant"
      << (measured == 1 ? "" : "s") << " measured, " << res.count(Status::pruned) << " pruned, in "
      << fixed(res.seconds, 1) << " s (" << fixed(r.wall_seconds, 1) << " s in all); ranked by " << r.objective
      << (r.objective == "edp" ? " (energy x delay)" : r.objective == "energy" ? " (energy per call)" : "") << "\n";
  if (!r.journal.empty()) {
    const std::size_t now = measured - res.reused;
    out << "  journal  " << res.reused << " variant" << (res.reused == 1 ? "" : "s")
        << " reused from earlier sweeps, " << now << " measured now (" << r.journal << ")\n";
  }
  out << "  compile  " << r.compile.variants << " variants in " << r.compile.programs << " NVRTC program"
      << (r.compile.programs == 1 ? "" : "s") << " (" << r.compile.from_cache << " from the cache), "
      << fixed(r.compile.seconds, 1) << " s of compile time\n";
  out << "  timing   " << r.timing << "\n";
  out << "  time     " << fixed(r.times.total, 1) << " s: " << times_text(r.times) << "\n";
  for (const auto& [worker, t] : r.worker_times) out << "    " << worker << ": " << times_text(t) << "\n";
  out << "\n";

  if (res.ranking.empty()) {
    out << "  no variant ran correctly.\n";
  } else {
    std::size_t width = 8;
    bool energy = false, runs = false;
    for (std::size_t k = 0; k < res.ranking.size() && k < static_cast<std::size_t>(show); ++k) {
      const Evaluation& e = res.evaluations[res.ranking[k]];
      width = std::max(width, e.label.size());
      energy = energy || e.energy.count > 0;
      runs = runs || !e.outcome.auto_stop.empty() || !e.recheck_stop.empty();
    }
    out << "  " << std::right << std::setw(4) << "rank" << "  " << std::left << std::setw(static_cast<int>(width))
        << "variant" << std::right << std::setw(11) << "median ms" << std::setw(8) << "IQR %" << std::setw(11)
        << "min ms" << std::setw(9) << "GB/s" << std::setw(8) << "% peak" << std::setw(6) << "regs";
    if (runs) out << std::setw(6) << "runs";
    if (energy) out << std::setw(12) << "energy/call" << std::setw(7) << "W" << std::setw(8) << "SM MHz";
    out << "\n";
    for (std::size_t k = 0; k < res.ranking.size() && k < static_cast<std::size_t>(show); ++k) {
      const Evaluation& e = res.evaluations[res.ranking[k]];
      const double gbs = gbs_of(r.bytes_moved, e.time.median);
      const bool tie = std::find(res.ties.begin(), res.ties.end(), res.ranking[k]) != res.ties.end();
      out << "  " << std::right << std::setw(4) << k + 1 << "  " << std::left << std::setw(static_cast<int>(width))
          << e.label << std::right << std::setw(11) << ms_text(e.time.median) << std::setw(8)
          << fixed(e.time.iqr_percent(), 1) << std::setw(11) << ms_text(e.time.min) << std::setw(9) << fixed(gbs, 0)
          << std::setw(8) << fixed(r.peak_gbs > 0 ? 100 * gbs / r.peak_gbs : 0, 1) << std::setw(6)
          << (e.outcome.registers >= 0 ? std::to_string(e.outcome.registers) : "-");
      if (runs) out << std::setw(6) << e.time.count;
      if (energy) {
        const auto [w, mhz] = watts_and_mhz(e);
        if (e.energy.count > 0)
          out << std::setw(12) << joules_text(e.energy.median) << std::setw(7) << fixed(w, 0) << std::setw(8)
              << fixed(mhz, 0);
        else
          out << std::setw(12) << "-" << std::setw(7) << "-" << std::setw(8) << "-";
      }
      out << (e.rechecked ? "  rechecked" : "") << (e.reused ? "  reused" : "") << (tie ? "  tie" : "")
          << (e.outcome.device >= 0 && r.devices.size() > 1 ? "  gpu" + std::to_string(e.outcome.device) : "") << "\n";
    }
    if (res.ranking.size() > static_cast<std::size_t>(show))
      out << "  ... " << res.ranking.size() - static_cast<std::size_t>(show) << " more (--json / --csv have all)\n";
    const Evaluation& w = *res.winner();
    out << "\n  best     " << w.label << "  " << ms_text(w.time.median) << " ms";
    if (w.energy.count > 0) out << ", " << joules_text(w.energy.median) << " per call";
    if (!res.ties.empty()) {
      std::vector<std::string> names;
      for (auto i : res.ties) names.push_back(res.evaluations[i].label);
      out << "  -- a tie within the noise (interquartile ranges overlap) with " << join(names);
    }
    out << "\n";
  }

  // Failures, grouped by reason.
  for (Status s : {Status::faulted, Status::timed_out, Status::invalid, Status::compile_error, Status::launch_error,
                   Status::pruned}) {
    std::map<std::string, std::pair<int, std::string>> groups;  // why -> count, first label
    for (const auto& e : res.evaluations)
      if (e.outcome.status == s) {
        auto& g = groups[e.outcome.why];
        if (g.first++ == 0) g.second = e.label;
      }
    if (groups.empty()) continue;
    const std::size_t total = res.count(s);
    out << "  " << std::left << std::setw(14) << std::string(status_name(s)) + ":" << total << "\n";
    for (const auto& [why, g] : groups)
      out << "      " << g.first << " x " << why << "  (e.g. " << g.second << ")\n";
  }
  if (res.count(Status::faulted) + res.count(Status::timed_out) > 0)
    out << "  (a fault or a time limit kills the CUDA context of its process; the sweep went on in a fresh process)\n";
  if (res.count(Status::invalid) + res.count(Status::compile_error) + res.count(Status::launch_error) +
          res.count(Status::faulted) + res.count(Status::timed_out) >
      0)
    out << "  (--json has every variant's full message)\n";
  for (const auto& note : r.notes) out << "  note     " << note << "\n";
  if (!res.stopped.empty()) out << "  stopped  " << res.stopped << "\n";
}

namespace {

nlohmann::json spread_json(const Spread& s) {
  return {{"median_ms", s.median}, {"q1_ms", s.q1}, {"q3_ms", s.q3}, {"min_ms", s.min}, {"max_ms", s.max},
          {"runs", s.count}};
}

nlohmann::json times_json(const SweepTimes& t) {
  return {{"start_s", t.start},          {"data_s", t.data},       {"reference_s", t.reference},
          {"compile_wall_s", t.compile_wall}, {"compile_summed_s", t.compile_sum},
          {"compile_wait_s", t.compile_wait}, {"measure_s", t.measure}, {"verify_s", t.verify},
          {"scratch_s", t.scratch},      {"recheck_s", t.recheck}, {"save_s", t.save},
          {"idle_s", t.idle},            {"other_s", t.other()},
          {"total_s", t.total}};
}

nlohmann::json energy_json(const Evaluation& e) {
  const auto [w, mhz] = watts_and_mhz(e);
  nlohmann::json windows = nlohmann::json::array();
  for (const auto& s : e.outcome.energy)
    windows.push_back({{"joules_per_call", s.joules}, {"watts", s.watts}, {"sm_mhz", s.sm_mhz}, {"calls", s.calls},
                       {"window_s", s.window_s},
                       {"window_ms_per_call", s.calls > 0 ? s.window_s * 1e3 / static_cast<double>(s.calls) : 0.0}});
  return {{"joules_per_call", e.energy.median}, {"q1_joules", e.energy.q1}, {"q3_joules", e.energy.q3},
          {"watts", w}, {"sm_mhz", mhz}, {"windows", windows}};
}

}  // namespace

void write_tune_json(const std::filesystem::path& path, const TuneReport& r) {
  nlohmann::json j = report_head(r);
  j["bytes_moved"] = r.bytes_moved;
  j["device"] = {{"name", r.gpu}, {"arch", r.arch}, {"peak_bandwidth_gbs", r.peak_gbs}};
  if (!r.devices.empty()) j["pooled_devices"] = r.devices;
  j["nvrtc_version"] = r.nvrtc;
  j["strategy"] = r.strategy;
  j["objective"] = r.objective;
  j["seed"] = r.seed;
  j["device"]["sm_count"] = r.sm_count;
  j["journal"] = r.journal;
  j["reused"] = r.result.reused;
  j["notes"] = r.notes;
  j["timing"] = r.timing;
  j["seconds"] = r.result.seconds;
  j["wall_seconds"] = r.wall_seconds;
  j["compile"] = {{"programs", r.compile.programs}, {"from_cache", r.compile.from_cache},
                  {"variants", r.compile.variants}, {"thread_seconds", r.compile.seconds}};
  j["times"] = times_json(r.times);
  if (!r.worker_times.empty()) {
    j["worker_times"] = nlohmann::json::array();
    for (const auto& [worker, t] : r.worker_times) {
      nlohmann::json w = times_json(t);
      w["worker"] = worker;
      j["worker_times"].push_back(std::move(w));
    }
  }
  j["stopped"] = r.result.stopped;
  j["aborted"] = r.result.aborted;
  std::map<std::size_t, std::size_t> rank;
  for (std::size_t k = 0; k < r.result.ranking.size(); ++k) rank[r.result.ranking[k]] = k + 1;
  if (const Evaluation* w = r.result.winner()) {
    j["best"] = {{"variant", w->label}, {"params", w->params}, {"median_ms", w->time.median}};
    if (w->energy.count > 0) j["best"]["joules_per_call"] = w->energy.median;
    j["best"]["ties"] = nlohmann::json::array();
    for (auto i : r.result.ties) j["best"]["ties"].push_back(r.result.evaluations[i].label);
  }
  j["variants"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.result.evaluations.size(); ++i) {
    const Evaluation& e = r.result.evaluations[i];
    nlohmann::json v;
    v["kernel"] = r.result.evaluations[i].label.substr(0, e.label.find(' '));
    v["variant"] = e.label;
    v["params"] = e.params;
    v["status"] = std::string(status_name(e.outcome.status));
    v["rank"] = rank.count(i) ? nlohmann::json(rank[i]) : nlohmann::json(nullptr);
    if (e.outcome.status == Status::ok) {
      v["time"] = spread_json(e.time);
      v["gbs"] = gbs_of(r.bytes_moved, e.time.median);
      v["rechecked"] = e.rechecked;
      if (!e.outcome.auto_stop.empty()) v["auto_stop"] = e.outcome.auto_stop;
      if (!e.recheck_stop.empty()) v["recheck_stop"] = e.recheck_stop;
      if (e.energy.count > 0) v["energy"] = energy_json(e);
    } else {
      v["why"] = e.outcome.why;
      v["detail"] = e.outcome.detail;
    }
    if (e.outcome.registers >= 0) v["registers"] = e.outcome.registers;
    if (e.outcome.spill_bytes >= 0) v["spill_bytes"] = e.outcome.spill_bytes;
    if (e.outcome.device >= 0) v["device"] = e.outcome.device;
    v["launches"] = nlohmann::json::array();
    for (const auto& l : e.outcome.launches)
      v["launches"].push_back({{"name_expression", l.name_expression}, {"grid", l.grid}, {"block", l.block}});
    v["at_seconds"] = e.at_seconds;
    v["reused"] = e.reused;
    j["variants"].push_back(std::move(v));
  }
  write_output_file(path, j.dump(2) + "\n", "the JSON report");
}

void write_tune_csv(const std::filesystem::path& path, const TuneReport& r) {
  const auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::set<std::string> names;
  for (const auto& e : r.result.evaluations)
    for (const auto& [k, v] : e.params) names.insert(k);
  std::map<std::size_t, std::size_t> rank;
  for (std::size_t k = 0; k < r.result.ranking.size(); ++k) rank[r.result.ranking[k]] = k + 1;
  std::ostringstream out;
  out << "rank,kernel,variant";
  for (const auto& n : names) out << ",param_" << n;
  out << ",status,median_ms,q1_ms,q3_ms,min_ms,max_ms,runs,gbs,joules_per_call,watts,sm_mhz,registers,rechecked,"
         "reused,why,gpu,family,operation,dtype,size,objective,device,data\n";
  for (std::size_t i = 0; i < r.result.evaluations.size(); ++i) {
    const Evaluation& e = r.result.evaluations[i];
    const bool ok = e.outcome.status == Status::ok;
    out << (rank.count(i) ? std::to_string(rank[i]) : "") << ',' << e.label.substr(0, e.label.find(' ')) << ','
        << quote(e.label);
    for (const auto& n : names) {
      const auto it = e.params.find(n);
      out << ',' << (it == e.params.end() ? "" : std::to_string(it->second));
    }
    out << ',' << status_name(e.outcome.status) << ',';
    if (ok)
      out << e.time.median << ',' << e.time.q1 << ',' << e.time.q3 << ',' << e.time.min << ',' << e.time.max << ','
          << e.time.count << ',' << gbs_of(r.bytes_moved, e.time.median);
    else
      out << ",,,,,,";
    if (ok && e.energy.count > 0) {
      const auto [w, mhz] = watts_and_mhz(e);
      out << ',' << e.energy.median << ',' << w << ',' << mhz;
    } else {
      out << ",,,";
    }
    out << ',' << (e.outcome.registers >= 0 ? std::to_string(e.outcome.registers) : "") << ','
        << (e.rechecked ? "true" : "false") << ',' << (e.reused ? "true" : "false") << ','
        << quote(ok ? "" : e.outcome.why) << ',' << quote(r.gpu) << ',' << r.family << ',' << r.operation << ','
        << r.dtype << ',' << r.size << ',' << r.objective << ','
        << (e.outcome.device >= 0 ? std::to_string(e.outcome.device) : "") << ',' << quote(r.data.text()) << "\n";
  }
  write_output_file(path, out.str(), "the CSV report");
}

}  // namespace gpuk

