// The tuning matrix on the GPU, through the command line: two cells, one faulting variant in
// each (the matrix goes on in a fresh process, with the same cell), the library baseline timed
// per cell, a second run that measures nothing, and the export read by `gpuk run`. Without a
// GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers.hpp"

namespace fs = std::filesystem;

namespace {

fs::path test_kernels() { return gpuk::test::source_dir() / "tests" / "data" / "kernels"; }

using Cli = gpuk::test::CommandResult;

// `gpuk ARGS` with the test kernels (faulty.cu), killed after `limit` seconds (status 137 then).
Cli gpuk_cli(const std::string& args, int limit) {
  return gpuk::test::run_command("timeout -s KILL " + std::to_string(limit) + " " + std::string(GPUK_EXE) + " --kernels " +
                           test_kernels().string() + " " + args);
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("gpuk tune of a matrix: every cell verified, timed against CUB, resumed, exported") {
  const gpuk::test::TempDir dir;
  // FAULT 1 writes through a wild pointer: each cell loses its CUDA context once and goes on in
  // a fresh process; FAULT 0 is correct.
  const fs::path config = dir.write("m.yaml",
                                    "family: reduce\nsizes: [2^12, 2^20]\ndtypes: [float32]\n"
                                    "data: {generator: uniform, low: -1, high: 1, seed: 3}\n"
                                    "warmup: 2\nrepeats: 5\nrecheck: {top: 2, repeats: 8}\n"
                                    "operations:\n  - operation: argmax\n    kernels: [onepass, faulty]\n"
                                    "    params: {BLOCK: [256], UNROLL: [1, 4], BLOCKS_PER_SM: [4], FAULT: [0, 1], LOAD: [0], SPLIT: [0], WAVES: [1],\n"
                                    "             FOLD: [1]}\n");
  const fs::path out = dir.path() / "out", exported = dir.path() / "sm.json", db = dir.path() / "db.json";
  const std::string tune = "--tuning-db " + db.string() + " tune " + config.string() + " --out " + out.string() +
                           " --export " + exported.string();
  Cli r = gpuk_cli(tune, 300);
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("2 cells of reduce; 0 measured before and reused, 2 to measure") != std::string::npos);
  CHECK(r.output.find("cell 1/2  argmax abs=false float32 2^12: ") != std::string::npos);
  CHECK(r.output.find("cell 2/2  argmax abs=false float32 2^20: ") != std::string::npos);
  CHECK(r.output.find("faulted") != std::string::npos);
  CHECK(r.output.find("the matrix goes on in a fresh process") != std::string::npos);
  CHECK(r.output.find("exported 2 verified winners") != std::string::npos);
  CHECK_FALSE(fs::exists(db));  // a matrix fills its results, not the user's database

  for (const char* name : {"argmax.abs-false.float32.n4096.json", "argmax.abs-false.float32.n1048576.json"}) {
    CAPTURE(name);
    const auto cell = read_json(out / "cells" / name);
    CHECK(cell["status"] == "ok");
    CHECK(cell["verified"] == true);
    CHECK(cell["counts"]["faulted"] == 1);
    CHECK(cell["winner"]["params"]["FAULT"] != 1);
    CHECK(cell["baseline"] == "cub::DeviceReduce::ArgMax");
    CHECK(cell["baseline_ms"].get<double>() > 0);
    CHECK(cell["speedup"].get<double>() > 0);
    CHECK(fs::exists(out / "reports" / name));
    CHECK_FALSE(fs::exists(out / "state" / name));
  }

  // Again: nothing to measure (every cell file passes the checks a merge and an export make),
  // the same export, and no lock file left beside it.
  r = gpuk_cli(tune, 60);
  CHECK(r.status == 0);
  CHECK(r.output.find("2 measured before and reused, 0 to measure") != std::string::npos);
  CHECK(r.output.find("cell 1/2") == std::string::npos);
  CHECK(r.output.find("skipped") == std::string::npos);
  CHECK_FALSE(fs::exists(exported.string() + ".lock"));
  // The results merged as a shard's: every file merged and exported, none refused.
  r = gpuk_cli("--tuning-db " + db.string() + " tune " + config.string() + " --merge " + out.string() + " --out " +
                   (dir.path() / "merged").string() + " --export " + (dir.path() / "merged.json").string(),
               60);
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("exported 2 verified winners") != std::string::npos);
  CHECK(r.output.find("not merged") == std::string::npos);

  // The export is a tuning file in the database's format: `gpuk run` of a config naming no
  // kernel picks its entry (the shipped files are these).
  const auto winner = read_json(out / "cells" / "argmax.abs-false.float32.n1048576.json")["winner"];
  const fs::path run = dir.write("run.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 2^20\n");
  r = gpuk_cli("run " + run.string() + " --tuning " + exported.string(), 60);
  CHECK(r.status == 0);
  CHECK(r.output.find("chosen   tuning file " + exported.string()) != std::string::npos);
  CHECK(r.output.find(winner["kernel"].get<std::string>()) != std::string::npos);
}
