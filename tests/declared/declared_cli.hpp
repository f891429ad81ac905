// What the declared family's tests through the command line share (tests/declared/
// test_declared_runs.cpp on the fake driver, tests/gpu/test_declared_gpu.cpp on a GPU): the
// tests' declared kernels and configs, a scratch directory of the program's own, and `gpuk` run
// with them.
#pragma once
#include <filesystem>
#include <string>

#include "helpers.hpp"

namespace gpuk::test {

inline std::filesystem::path declared_dir() { return source_dir() / "tests" / "declared"; }

// A directory of the test program's own, removed when the program ends.
struct DeclaredScratch {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("gpuk-declared-" + std::to_string(fresh_seed()));
  DeclaredScratch() {
    std::filesystem::create_directories(dir);
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  }
  ~DeclaredScratch() { std::filesystem::remove_all(dir); }
};

inline DeclaredScratch& declared_scratch() {
  static DeclaredScratch s;
  return s;
}

// `gpuk ARGS` with the tests' declared kernels (and tests/data/kernels' kernel folder, the
// wrong, faulting and hanging ones, where it is there), the scratch's tuning database, `env`
// before it (VAR=value ...), killed after `limit` seconds (status 137 then).
inline CommandResult declared_gpuk(const std::string& args, const std::string& env = "", int limit = 120) {
  const std::filesystem::path data = source_dir() / "tests" / "data" / "kernels";
  std::string kernels = " --kernels " + (declared_dir() / "kernels").string();
  if (std::filesystem::is_directory(data / "kernel")) kernels += " --kernels " + data.string();
  return run_command(env + (env.empty() ? "" : " ") + "timeout -s KILL " + std::to_string(limit) + " " +
                     std::string(GPUK_EXE) + kernels + " --tuning-db " +
                     (declared_scratch().dir / "tuning.json").string() + " " + args);
}

inline bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace gpuk::test
