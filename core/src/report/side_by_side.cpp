#include "report/side_by_side.hpp"

#include <algorithm>
#include <iomanip>
#include <ostream>

#include "util/text.hpp"

namespace gpuk {

void print_side_by_side(std::ostream& out, const std::string& config, const std::vector<DeviceRun>& runs) {
  out << "gpuk run " << config << " on " << runs.size() << " GPU" << (runs.size() == 1 ? "" : "s") << "\n";
  const RunReport* any = nullptr;
  for (const auto& r : runs)
    if (r.report) any = &*r.report;
  if (any) {
    out << "  " << any->family << " " << any->operation;
    for (const auto& [k, v] : any->options) out << " " << k << "=" << v;
    out << "  dtype " << any->dtype << "  n " << any->size << "\n";
    out << "  variant  " << any->variant << "\n";
  }
  std::size_t width = 4;
  for (const auto& r : runs)
    if (r.report) width = std::max(width, r.report->gpu.size());
  const std::string base = any && any->baseline ? any->baseline->name : "baseline";
  out << "\n  " << std::left << std::setw(4) << "GPU" << std::setw(static_cast<int>(width) + 2) << "name" << std::right
      << std::setw(12) << "kernel ms" << std::setw(13) << "baseline ms" << std::setw(10) << "speed-up" << std::setw(9)
      << "GB/s" << std::setw(8) << "% peak" << "  verify\n";
  double fastest = 0;
  for (const auto& r : runs)
    if (r.report && r.report->kernel.median > 0 && (fastest == 0 || r.report->kernel.median < fastest))
      fastest = r.report->kernel.median;
  for (const auto& r : runs) {
    out << "  " << std::left << std::setw(4) << r.ordinal;
    if (!r.report) {
      out << r.error << "\n";
      continue;
    }
    const RunReport& p = *r.report;
    out << std::setw(static_cast<int>(width) + 2) << p.gpu << std::right << std::setw(12) << ms_text(p.kernel.median)
        << std::setw(13) << (p.baseline && p.baseline->ms.count ? ms_text(p.baseline->ms.median) : "-") << std::setw(10)
        << (p.speedup_over_baseline() > 0 ? fixed(p.speedup_over_baseline(), 2) + "x" : "-") << std::setw(9) << fixed(p.gbs, 0)
        << std::setw(8) << fixed(p.percent_of_peak, 1) << "  "
        << (!p.verified ? "not checked" : p.verification.passed ? "PASS" : "FAIL");
    if (fastest > 0 && p.kernel.median > fastest * 1.05)
      out << "  (" << fixed(100 * (p.kernel.median / fastest - 1), 0) << "% slower than the fastest)";
    out << "\n";
  }
  out << "  (baseline: " << base << "; each GPU's kernel median of its own repeats)\n";
}

}  // namespace gpuk
