// The report of one run (RunReport, run/runner.hpp): printed, and written as JSON, CSV and
// Markdown.
#pragma once
#include <filesystem>
#include <iosfwd>

#include "run/runner.hpp"

namespace gpuk {

void print_report(std::ostream& out, const RunReport& report);
// The report as a Markdown section (a heading, what ran, a table of times): for a pull request.
void write_markdown(const std::filesystem::path& path, const RunReport& report);
void print_markdown(std::ostream& out, const RunReport& report);
void write_json(const std::filesystem::path& path, const RunReport& report);
void write_csv(const std::filesystem::path& path, const RunReport& report);

}  // namespace gpuk
