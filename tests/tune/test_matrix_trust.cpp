// Matrix export and merge trust nothing they read (issue 36): a cell file's winner must be that
// cell's (family, operation, options, dtype, size, objective) and verified; the shards' reports
// and journals must be regular files within the reports' limit; --export PATH never moves or
// writes over what is not a gpuk tuning database. Each refusal names the file and the reason.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>

#include "builtins.hpp"
#include "fake_cells.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "tune/matrix/matrix.hpp"
#include "tuning/tuning_db.hpp"
#include "util/regular_file.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

using test::kTrustMatrix;

TuneMatrix matrix() { return parse_tune_matrix(kTrustMatrix, "m.yaml", test::plugins(), test::kernels()); }

const MatrixCell& cell_of(const TuneMatrix& m, const std::string& id) {
  for (const auto& c : m.cells)
    if (c.id == id) return c;
  FAIL("no cell " << id);
  return m.cells.front();
}

// Edits the cell file of `id` in `results` with `edit` (a hand edit or a damaged disk).
void edit_cell(const MatrixResults& results, const MatrixCell& cell, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j;
  {
    std::ifstream in(results.cell_path(cell));
    j = nlohmann::json::parse(in);
  }
  edit(j);
  std::ofstream(results.cell_path(cell)) << j.dump(2);
}

using test::text_of;

}  // namespace

TEST_CASE("export takes a cell's winner only when it is that cell's and verified, and says why not") {
  const TuneMatrix m = matrix();
  REQUIRE(m.cells.size() == 3);
  struct Case {
    std::string what;
    std::function<void(nlohmann::json&)> edit;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"a sort entry in a reduce matrix", [](nlohmann::json& j) { j["winner"]["family"] = "sort"; }, "its winner is an entry of sort"},
      {"argmin abs=true for argmax abs=false",
       [](nlohmann::json& j) {
         j["winner"]["operation"] = "argmin";
         j["winner"]["options"] = "abs=true";
       },
       "its winner is an entry of reduce argmin abs=true float32"},
      {"another dtype", [](nlohmann::json& j) { j["winner"]["dtype"] = "int32"; }, "int32"},
      {"another size bucket", [](nlohmann::json& j) { j["winner"]["size_bucket"] = 20; }, "at 2^20"},
      {"the file of another problem", [](nlohmann::json& j) { j["operation"] = "argmin"; }, "its file is of reduce argmin"},
      {"\"verified\": false", [](nlohmann::json& j) { j["verified"] = false; }, "\"verified\": false"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const test::TempDir dir;
    const MatrixResults results(dir.path() / "out");
    run_matrix(m, results, test::fake_cell_sweep);
    const MatrixCell& edited = cell_of(m, "argmax abs=false float32 2^10");
    edit_cell(results, edited, c.edit);
    std::vector<std::string> without;
    const auto entries = matrix_entries(m, results, &without, &test::kernels());
    CHECK(entries.size() == 2);
    REQUIRE(without.size() == 1);
    CHECK(without.front().rfind(edited.id + " (", 0) == 0);
    CHECK(without.front().find(c.says) != std::string::npos);
    for (const auto& e : entries) CHECK(e.key.family == "reduce");
    // The next run measures the cell again rather than keep what is not its own.
    CHECK(plan_matrix(m, results).stale == 1);
  }
}

TEST_CASE("merge refuses a report or a journal that is not a regular file within the limit, naming it") {
  const TuneMatrix m = matrix();
  struct Case {
    std::string what;
    std::function<void(const fs::path& shard)> plant;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"a report that is a FIFO",
       [&](const fs::path& shard) {
         const fs::path p = MatrixResults(shard).report_path(m.cells[0]);
         fs::create_directories(p.parent_path());
         REQUIRE(::mkfifo(p.c_str(), 0644) == 0);
       },
       "FIFO"},
      {"a report that is /dev/zero",
       [&](const fs::path& shard) {
         const fs::path p = MatrixResults(shard).report_path(m.cells[0]);
         fs::create_directories(p.parent_path());
         fs::create_symlink("/dev/zero", p);
       },
       "character device"},
      {"a journal that is /dev/zero",
       [&](const fs::path& shard) {
         fs::create_directories(shard / "journal");
         fs::create_symlink("/dev/zero", shard / "journal" / "j.jsonl");
       },
       "character device"},
      {"a journal that is a FIFO",
       [&](const fs::path& shard) {
         fs::create_directories(shard / "journal");
         REQUIRE(::mkfifo((shard / "journal" / "j.jsonl").c_str(), 0644) == 0);
       },
       "FIFO"},
      {"a journal over the reports' limit",
       [&](const fs::path& shard) {
         fs::create_directories(shard / "journal");
         { std::ofstream(shard / "journal" / "j.jsonl") << "{}\n"; }
         fs::resize_file(shard / "journal" / "j.jsonl", kMaxReportBytes + 1);  // sparse: no disk
       },
       "over the limit"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const test::TempDir dir;
    const fs::path shard = dir.path() / "shard";
    run_matrix(m, MatrixResults(shard), test::fake_cell_sweep);
    c.plant(shard);
    const MatrixResults into(dir.path() / "merged");
    try {
      merge_matrix_results(m, {shard}, into);
      FAIL_CHECK("merged");
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(what.find(shard.string()) != std::string::npos);
      CHECK(what.find(c.says) != std::string::npos);
    }
    CHECK_FALSE(fs::exists(into.dir() / "cells"));  // nothing written before the refusal
  }
}

TEST_CASE("--export PATH never moves or writes over what is not a gpuk tuning database") {
  TuningEntry added;
  added.key = {"GPU", "sm_90", "reduce", "max", "", "float32", 10};
  added.kernel = "onepass";
  const test::TempDir dir;
  // A shard's results directory and a YAML config: refused by merge (the matrix's export) and by
  // write (a sweep's export), each left as it was.
  const fs::path results = dir.path() / "shard-0-of-2";
  fs::create_directories(results / "cells");
  dir.write("shard-0-of-2/cells/a.json", "{}");
  const fs::path config = dir.write("tune_argmax.yaml", "family: reduce\noperation: argmax\n");
  const fs::path report = dir.write("report.json", "{\"family\": \"reduce\", \"variants\": []}");
  for (const fs::path& p : {results, config, report}) {
    CAPTURE(p);
    try {
      TuningDb::merge_into(p, {added});
      FAIL_CHECK("merged into it");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find(p.string()) != std::string::npos);
    }
    CHECK_THROWS_AS(TuningDb().write(p), ConfigError);
    CHECK_THROWS_AS(TuningDb::check_ours(p), ConfigError);
  }
  CHECK(fs::is_directory(results / "cells"));
  CHECK(text_of(results / "cells" / "a.json") == "{}");
  CHECK(text_of(config) == "family: reduce\noperation: argmax\n");
  CHECK(text_of(report) == "{\"family\": \"reduce\", \"variants\": []}");
  for (const auto& f : fs::directory_iterator(dir.path()))
    CHECK(f.path().filename().string().find(".damaged-") == std::string::npos);  // nothing renamed aside
  // A damaged database (it names gpuk's format) is still moved aside, and an empty file is empty.
  const fs::path damaged = dir.write("tuning.json", "{\"format\": \"gpuk-tuning-db\", \"entries\": [");
  const test::CaptureCerr cerr;
  TuningDb::merge_into(damaged, {added});
  CHECK(TuningDb::read(damaged).entries().size() == 1);
  const fs::path empty = dir.write("empty.json", "");
  TuningDb::merge_into(empty, {added});
  CHECK(TuningDb::read(empty).entries().size() == 1);
}
