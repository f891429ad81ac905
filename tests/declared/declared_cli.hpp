// What the declared family's tests through the command line share (tests/declared/
// test_declared_runs.cpp on the fake driver, tests/gpu/test_declared_gpu.cpp on a GPU): the
// tests' declared kernels and configs, a scratch directory of the program's own, and `gpuk` run
// with them.
#pragma once
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
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

#ifdef GPUK_FAKE_MEMORY_DRIVER_DIR
// `gpuk ARGS` as above on the fake driver with host memory for device memory (the declared runs'
// programs), its compile cache in the scratch.
inline CommandResult gpuk_cli(const std::string& args) {
  return declared_gpuk(args, "LD_LIBRARY_PATH=" + std::string(GPUK_FAKE_MEMORY_DRIVER_DIR) + " GPUK_CACHE_DIR=" +
                                 (declared_scratch().dir / "cache").string());
}
#endif

// A kernel file's text: an empty scale(y, x, n), for the checks that come before a launch.
inline const char* kScale = "extern \"C\" __global__ void scale(float* y, const float* x, int n) {}\n";

inline bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// A declared kernels' tuning matrix of scale2d (three sizes swept in full, one by random within a
// budget of 3) in two shards, merged and exported, then `variant: auto` from the export: what
// the fake-driver and GPU programs both check, `gpuk` running the command line.
inline void check_declared_matrix(const std::function<CommandResult(const std::string&)>& gpuk) {
  const std::filesystem::path dir = declared_scratch().dir / "matrix";
  std::filesystem::create_directories(dir);
  const std::filesystem::path matrix = dir / "m.yaml";
  std::ofstream(matrix) << "family: kernel\nwarmup: 1\nrepeats: 3\nrecheck: {top: 2, repeats: 3}\n"
                           "reference: {kernel: scale2d_naive}\nbaseline: scale2d_naive\noperations:\n"
                           "  - operation: scale2d\n    sizes: [{nx: 1000, ny: 300}, {nx: 300, ny: 1000}, {nx: 64, ny: 64}]\n"
                           "    params: {block_size_x: [16, 64], block_size_y: [1, 8]}\n"
                           "  - operation: scale2d\n    sizes: {nx: 100, ny: 100}\n    strategy: random\n    budget: 3\n";
  const std::string m = "tune " + matrix.string() + " ";
  const auto s0 = gpuk(m + "--shard 0/2 --out " + (dir / "s0").string());
  CAPTURE(s0.output);
  CHECK(s0.status == 0);
  CHECK(has(s0.output, "shard 0/2, 2 of 4 cells of kernel"));
  CHECK(has(s0.output, "cell 1/2  scale2d nx=1000 ny=300: scale2d block_size_x="));
  CHECK(has(s0.output, "cell 2/2  scale2d nx=64 ny=64: "));  // counted within the shard
  CHECK(has(s0.output, "; kernel scale2d_naive "));  // the baseline kernel, timed after the sweep
  const auto s1 = gpuk(m + "--shard 1/2 --out " + (dir / "s1").string());
  CAPTURE(s1.output);
  CHECK(s1.status == 0);
  const auto merged = gpuk(m + "--merge " + (dir / "s0").string() + " " + (dir / "s1").string() + " --out " +
                               (dir / "merged").string() + " --export " + (dir / "e.json").string());
  CAPTURE(merged.output);
  CHECK(merged.status == 0);
  CHECK(has(merged.output, ": 4 of 4 cells;"));
  CHECK(has(merged.output, "exported 4 verified winners to"));
  // The random cell measured its budget and no more.
  std::ifstream cell(dir / "merged" / "cells" / "scale2d.nx-100.ny-100.json");
  const std::string text((std::istreambuf_iterator<char>(cell)), std::istreambuf_iterator<char>());
  CHECK(has(text, "\"ok\": 3"));

  const std::filesystem::path run = dir / "auto.yaml";
  std::ofstream(run) << "family: kernel\nkernel: scale2d\nsizes: {nx: 300, ny: 1000}\nvariant: auto\ntuning: e.json\n"
                        "reference: {kernel: scale2d_naive}\nwarmup: 1\nrepeats: 3\n";
  const auto r = gpuk("run " + run.string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "chosen   tuning file "));
  CHECK(has(r.output, "e.json (tuned at n = 300000"));
  CHECK(has(r.output, "verify      PASS"));
}

}  // namespace gpuk::test
