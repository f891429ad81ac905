// Every script under tools/ (the benchmarks, the developer checks, the experiments, setup.sh,
// test.sh, install-deps.sh) says how it is used on `--help` and does nothing else: exit 0, its
// usage printed, no traceback. A script run with --help by mistake must never start a build, a
// benchmark or an install.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace {

// The runnable scripts: executable .sh and .py files (tools/dev/help.sh and sanitize_common.sh
// are sourced, not run).
std::vector<std::filesystem::path> tool_scripts() {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(gpuk::test::source_dir() / "tools")) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".sh" && ext != ".py")) continue;
    if ((entry.status().permissions() & std::filesystem::perms::owner_exec) == std::filesystem::perms::none) continue;
    out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

TEST_CASE("every script under tools/ prints its usage on --help and exits 0, doing nothing else") {
  const auto scripts = tool_scripts();
  REQUIRE(scripts.size() >= 20);  // the benchmarks, the developer checks, the experiments
  for (const auto& script : scripts) {
    // From an empty directory: a script that ignored --help and went on would fail or leave files.
    const auto empty = std::filesystem::temp_directory_path() / ("gpuk-help-" + script.stem().string());
    std::filesystem::remove_all(empty);
    std::filesystem::create_directories(empty);
    const auto r = gpuk::test::run_command("cd '" + empty.string() + "' && timeout 60 '" + script.string() + "' --help");
    INFO(script.string() << " --help said:\n" << r.output);
    CHECK(r.status == 0);
    CHECK(lower(r.output).find("usage") != std::string::npos);
    CHECK(r.output.find("Traceback") == std::string::npos);
    CHECK(std::filesystem::is_empty(empty));
    std::filesystem::remove_all(empty);
  }
}
