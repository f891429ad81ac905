// The report of one run: printed, JSON, CSV and Markdown (report/run_report.hpp).
#include "report/run_report.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "device/timing.hpp"
#include "gpuk/error.hpp"
#include "report/report_head.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {
// A declared kernel's named sizes, "m=512 n=512 k=512", shown in place of dtype and n (their
// product); "" for a family's run.
std::string named_sizes(const RunReport& r) {
  std::string out;
  for (const auto& [name, value] : r.sizes) {
    if (!out.empty()) out += ' ';
    out.append(name).append("=").append(std::to_string(value));
  }
  return out;
}

double gbs_of_copy(std::uint64_t bytes, double ms) {
  return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) / 1e9 : 0;
}
}  // namespace

void print_report(std::ostream& out, const RunReport& r) {
  out << "gpuk run " << r.config << "\n";
  out << "  " << r.family << " " << r.operation;
  for (const auto& [k, v] : r.options) out << " " << k << "=" << v;
  if (r.sizes.empty())
    out << "  dtype " << r.dtype << "  n " << r.size << "\n";
  else
    out << "  sizes " << named_sizes(r) << "\n";
  out << "  data     " << r.data.text() << "\n";
  out << "  variant  " << r.variant << "  (" << r.kernel_file << ")\n";
  if (!r.variant_source.empty()) out << "  chosen   " << r.variant_source << "\n";
  const auto dims = [](std::uint32_t x, std::uint32_t y, std::uint32_t z) {
    std::string out = std::to_string(x);
    if (y > 1 || z > 1) out.append("x").append(std::to_string(y));
    if (z > 1) out.append("x").append(std::to_string(z));
    return out;
  };
  for (const auto& l : r.launches)
    out << "  launch   " << l.name_expression << "  grid " << dims(l.grid, l.grid_y, l.grid_z) << "  block "
        << dims(l.block, l.block_y, l.block_z) << (l.shared_bytes ? "  shared " + std::to_string(l.shared_bytes) : "")
        << (l.repeat > 1 ? "  x" + std::to_string(l.repeat) : std::string()) << "\n";
  out << "  device   " << r.gpu << " (" << r.arch << "), driver " << r.driver_version / 1000 << "."
      << (r.driver_version % 1000) / 10 << ", NVRTC " << r.nvrtc << "\n";
  out << "  compile  " << ms_text(r.compile_ms) << " ms" << (r.from_cache ? " (from the cache)" : "") << "\n\n";

  out << "  " << std::left << std::setw(44) << "time (ms)" << std::right << std::setw(11) << "median"
      << std::setw(11) << "min" << std::setw(11) << "max" << std::setw(8) << "runs" << "\n";
  const auto row = [&](const std::string& name, const Stats& s) {
    out << "  " << std::left << std::setw(44) << name << std::right << std::setw(11) << ms_text(s.median)
        << std::setw(11) << ms_text(s.min) << std::setw(11) << ms_text(s.max) << std::setw(8) << s.count << "\n";
  };
  row("upload (host to device)", {r.upload_ms, r.upload_ms, r.upload_ms, 1});
  row("kernel: " + r.variant, r.kernel);
  row("download (device to host)", {r.download_ms, r.download_ms, r.download_ms, 1});
  row("total (upload + kernel median + download)", {r.total_ms, r.total_ms, r.total_ms, 1});
  if (r.baseline) row("baseline: " + r.baseline->name, r.baseline->ms);
  for (const auto& c : r.cpu) row("CPU: " + c.name, c.ms);
  out << "\n";
  out << "  transfers   upload " << fixed(gbs_of_copy(r.upload_bytes, r.upload_ms), 1) << " GB/s ("
      << human_bytes(static_cast<double>(r.upload_bytes)) << ", "
      << (r.pin_note.empty() ? "page-locked" : "pageable") << "), download "
      << fixed(gbs_of_copy(r.download_bytes, r.download_ms), 1) << " GB/s ("
      << human_bytes(static_cast<double>(r.download_bytes)) << ")\n";
  out << "  throughput  " << fixed(r.gbs, 1) << " GB/s effective (" << r.bytes_moved << " bytes), "
      << fixed(r.percent_of_peak, 1) << "% of the device's " << fixed(r.peak_gbs, 0) << " GB/s\n";
  if (!r.cpu.empty()) out << "  speed-up    " << fixed(r.speedup_over_cpu(), 1) << "x over the fastest CPU reference\n";
  if (r.baseline) {
    if (r.baseline->ms.count)
      out << "  speed-up    " << fixed(r.speedup_over_baseline(), 2) << "x over " << r.baseline->name << "\n";
    if (!r.baseline->note.empty()) out << "  baseline    " << r.baseline->note << "\n";
  }
  for (const auto& [name, value] : r.metrics) out << "  metric      " << name << " " << fixed(value, 2) << "\n";
  out << "  result     ";
  for (const auto& [k, v] : r.result) out << " " << k << " " << v;
  out << "\n";
  if (r.verified)
    out << "  verify      " << (r.verification.passed ? "PASS" : "FAIL") << "  " << r.verification.detail << "\n";
  else
    out << "  verify      skipped (verify: false" << (r.launches.empty() || r.launches[0].args.empty() ? "" : ", or no reference") << ")\n";
}

namespace {
nlohmann::json to_json(const Stats& s) {
  return {{"median_ms", s.median}, {"q1_ms", s.q1}, {"q3_ms", s.q3}, {"min_ms", s.min}, {"max_ms", s.max},
          {"runs", s.count}};
}
}  // namespace

void write_json(const std::filesystem::path& path, const RunReport& r) {
  nlohmann::json j = report_head(r);
  j["kernel_file"] = r.kernel_file;
  j["variant"] = r.variant;
  if (!r.variant_source.empty()) j["variant_source"] = r.variant_source;
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  j["launches"] = nlohmann::json::array();
  for (const auto& l : r.launches)
    j["launches"].push_back({{"name_expression", l.name_expression}, {"grid", l.grid}, {"block", l.block},
                             {"shared_bytes", l.shared_bytes}, {"repeat", l.repeat}});
  j["device"] = {{"name", r.gpu}, {"arch", r.arch}, {"driver_version", r.driver_version},
                 {"peak_bandwidth_gbs", r.peak_gbs}};
  j["nvrtc_version"] = r.nvrtc;
  j["compile"] = {{"ms", r.compile_ms}, {"from_cache", r.from_cache}};
  j["upload_ms"] = r.upload_ms;
  j["kernel"] = to_json(r.kernel);
  j["download_ms"] = r.download_ms;
  j["transfers"] = {{"upload_bytes", r.upload_bytes},
                    {"upload_gbs", gbs_of_copy(r.upload_bytes, r.upload_ms)},
                    {"download_bytes", r.download_bytes},
                    {"download_gbs", gbs_of_copy(r.download_bytes, r.download_ms)},
                    {"input_page_locked", r.pin_note.empty()}};
  if (!r.pin_note.empty()) j["transfers"]["pin_note"] = r.pin_note;
  j["total_ms"] = r.total_ms;
  j["bytes_moved"] = r.bytes_moved;
  j["gbs"] = r.gbs;
  j["percent_of_peak"] = r.percent_of_peak;
  j["cpu"] = nlohmann::json::array();
  for (const auto& c : r.cpu) j["cpu"].push_back({{"name", c.name}, {"time", to_json(c.ms)}});
  j["speedup_over_cpu"] = r.speedup_over_cpu();
  if (r.baseline) {
    j["baseline"] = {{"name", r.baseline->name}, {"time", to_json(r.baseline->ms)}, {"note", r.baseline->note}};
    j["speedup_over_baseline"] = r.speedup_over_baseline();
  }
  j["result"] = nlohmann::json::object();
  for (const auto& [k, v] : r.result) j["result"][k] = v;
  if (!r.metrics.empty()) {
    j["metrics"] = nlohmann::json::object();
    for (const auto& [k, v] : r.metrics) j["metrics"][k] = v;
  }
  if (r.verified) j["verification"] = {{"passed", r.verification.passed}, {"detail", r.verification.detail}};
  write_output_file(path, j.dump(2) + "\n", "the JSON report");
}

void print_markdown(std::ostream& out, const RunReport& r) {
  out << "### gpuk run `" << r.config << "`\n\n";
  out << "- **" << r.family << " " << r.operation << "**";
  for (const auto& [k, v] : r.options) out << " " << k << "=" << v;
  if (r.sizes.empty())
    out << ", " << r.dtype << ", n = " << r.size << "\n";
  else
    out << ", sizes " << named_sizes(r) << "\n";
  out << "- data: " << r.data.text() << "\n";
  out << "- variant `" << r.variant << "` (`" << r.kernel_file << "`)\n";
  if (!r.variant_source.empty()) out << "- chosen: " << r.variant_source << "\n";
  out << "- " << r.gpu << " (" << r.arch << "), driver " << r.driver_version / 1000 << "."
      << (r.driver_version % 1000) / 10 << ", NVRTC " << r.nvrtc << "\n\n";
  out << "| time (ms) | median | q1 | q3 | min | max | runs |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  const auto row = [&](const std::string& name, const Stats& s) {
    out << "| " << name << " | " << ms_text(s.median) << " | " << ms_text(s.q1) << " | " << ms_text(s.q3) << " | "
        << ms_text(s.min) << " | " << ms_text(s.max) << " | " << s.count << " |\n";
  };
  const auto once = [&](const std::string& name, double ms) { row(name, {ms, ms, ms, 1, ms, ms}); };
  once("upload (" + fixed(gbs_of_copy(r.upload_bytes, r.upload_ms), 1) + " GB/s" +
           (r.pin_note.empty() ? ", page-locked)" : ", pageable)"),
       r.upload_ms);
  row("kernel `" + r.variant + "`", r.kernel);
  once("download (" + fixed(gbs_of_copy(r.download_bytes, r.download_ms), 1) + " GB/s)", r.download_ms);
  once("total", r.total_ms);
  if (r.baseline) row("baseline " + r.baseline->name, r.baseline->ms);
  for (const auto& c : r.cpu) row("CPU " + c.name, c.ms);
  out << "\n" << fixed(r.gbs, 1) << " GB/s effective, " << fixed(r.percent_of_peak, 1) << "% of "
      << fixed(r.peak_gbs, 0) << " GB/s";
  if (r.baseline && r.baseline->ms.count) out << "; " << fixed(r.speedup_over_baseline(), 2) << "x " << r.baseline->name;
  out << ". Verify: " << (r.verified ? (r.verification.passed ? "PASS" : "FAIL") : "skipped");
  if (r.verified && !r.verification.detail.empty()) out << " (" << r.verification.detail << ")";
  out << ".\n";
}

void write_markdown(const std::filesystem::path& path, const RunReport& r) {
  std::ostringstream out;
  print_markdown(out, r);
  write_output_file(path, out.str(), "the Markdown report");
}

void write_csv(const std::filesystem::path& path, const RunReport& r) {
  const auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string options;
  for (const auto& [k, v] : r.options) options += (options.empty() ? "" : " ") + k + "=" + v;
  std::string result;
  for (const auto& [k, v] : r.result) result += (result.empty() ? "" : " ") + k + "=" + v;
  std::ostringstream out;
  out << "config,family,operation,options,dtype,size,variant,gpu,arch,driver_version,nvrtc_version,"
         "upload_ms,kernel_median_ms,kernel_min_ms,kernel_max_ms,kernel_runs,download_ms,total_ms,"
         "bytes_moved,gbs,percent_of_peak,cpu_best_ms,baseline,baseline_median_ms,speedup_over_cpu,"
         "speedup_over_baseline,verified,result,data_generator,data_range,data_seed,data_distinct_at_most,data\n";
  double cpu_best = 0;
  for (const auto& c : r.cpu)
    if (cpu_best == 0 || c.ms.median < cpu_best) cpu_best = c.ms.median;
  out << quote(r.config) << ',' << r.family << ',' << r.operation << ',' << quote(options) << ',' << r.dtype << ','
      << r.size << ',' << quote(r.variant) << ',' << quote(r.gpu) << ',' << r.arch << ',' << r.driver_version << ','
      << r.nvrtc << ',' << r.upload_ms << ',' << r.kernel.median << ',' << r.kernel.min << ',' << r.kernel.max << ','
      << r.kernel.count << ',' << r.download_ms << ',' << r.total_ms << ',' << r.bytes_moved << ',' << r.gbs << ','
      << r.percent_of_peak << ',' << cpu_best << ',' << quote(r.baseline ? r.baseline->name : "") << ','
      << (r.baseline ? r.baseline->ms.median : 0) << ',' << r.speedup_over_cpu() << ',' << r.speedup_over_baseline()
      << ',' << (r.verified ? (r.verification.passed ? "pass" : "FAIL") : "skipped") << ',' << quote(result) << ','
      << r.data.generator << ',' << quote(r.data.range) << ',' << r.data.seed << ','
      << (r.data.distinct_at_most ? std::to_string(*r.data.distinct_at_most) : std::string()) << ','
      << quote(r.data.text()) << "\n";
  write_output_file(path, out.str(), "the CSV report");
}

}  // namespace gpuk

