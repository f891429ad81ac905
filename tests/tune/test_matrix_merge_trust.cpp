// The merge of a matrix's shards and the export trust nothing they read (issue 45): a cell file
// that says "verified": false, names a kernel the cell did not sweep, a parameter value it did not
// sweep, or cannot be read (damaged, truncated, of wrong types) is never merged and never
// exported; the command names it and fails unless --allow-missing. --export leaves no X.lock
// behind; a malformed --shard is refused.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "builtins.hpp"
#include "fake_cells.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "tune/matrix/matrix.hpp"
#include "tuning/tuning_db.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

using test::kTrustMatrix;

const char* kEdited = "argmax abs=false float32 2^10";

void edit_cell(const fs::path& file, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j;
  {
    std::ifstream in(file);
    j = nlohmann::json::parse(in);
  }
  edit(j);
  std::ofstream(file) << j.dump(2);
}

using test::text_of;

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The matrix's config written into `dir`, its three shards measured by the fake sweep.
struct Shards {
  const test::TempDir& dir;
  std::string yaml;
  TuneMatrix m;
  std::vector<fs::path> dirs;
  explicit Shards(const test::TempDir& d) : dir(d) {
    yaml = dir.write("m.yaml", kTrustMatrix).string();
    m = load_tune_matrix(yaml, test::plugins(), test::kernels());
    for (int k = 0; k < 3; ++k) {
      dirs.push_back(dir.path() / ("shard-" + std::to_string(k)));
      run_matrix(shard_of(m, {k, 3}), MatrixResults(dirs.back()), test::fake_cell_sweep);
    }
  }
  const MatrixCell& cell(const std::string& id) const {
    for (const auto& c : m.cells)
      if (c.id == id) return c;
    FAIL("no cell " << id);
    return m.cells.front();
  }
  // The shard directory that holds the cell's file.
  fs::path holder(const std::string& id) const {
    for (const auto& d : dirs)
      if (fs::exists(MatrixResults(d).cell_path(cell(id)))) return d;
    FAIL("no shard has " << id);
    return {};
  }
  std::string command(const std::string& rest) const {
    return std::string(GPUK_EXE) + " --tuning-db " + (dir.path() / "db.json").string() + " tune " + yaml + " " + rest;
  }
  std::string all() const {
    std::string out;
    for (const auto& d : dirs) out += " " + d.string();
    return out;
  }
};

}  // namespace

TEST_CASE("a cell file with \"verified\": false merged with two good shards, then --export: refused, named, the command fails") {
  const test::TempDir dir;
  const Shards s(dir);
  const fs::path bad = MatrixResults(s.holder(kEdited)).cell_path(s.cell(kEdited));
  edit_cell(bad, [](nlohmann::json& j) { j["verified"] = false; });
  // A direct export of that shard refuses it.
  std::vector<std::string> direct;
  CHECK(matrix_entries(s.m, MatrixResults(s.holder(kEdited)), &direct).empty());
  REQUIRE(direct.size() == 3);
  CHECK(std::count(direct.begin(), direct.end(), std::string(kEdited) + " (its file says \"verified\": false)") == 1);

  const fs::path merged = dir.path() / "merged", exported = dir.path() / "e.json";
  const auto r = test::run_command(s.command("--merge" + s.all() + " --out " + merged.string() + " --export " + exported.string()));
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("gpuk: not merged: " + bad.string() + ": its file says \"verified\": false") != std::string::npos);
  CHECK(r.output.find(": 2 of 3 cells;") != std::string::npos);
  CHECK(r.output.find("exported 2 verified winners to " + exported.string() + "; 1 cell skipped: 1 missing") !=
        std::string::npos);
  CHECK(r.output.find("  skipped " + std::string(kEdited) + ": missing") != std::string::npos);
  CHECK(r.output.find("--allow-missing accepts them") != std::string::npos);
  // Nothing laundered: the merged directory has no file of that cell, the export no entry of it.
  CHECK_FALSE(fs::exists(MatrixResults(merged).cell_path(s.cell(kEdited))));
  const auto entries = TuningDb::read(exported).entries();
  CHECK(entries.size() == 2);
  for (const auto& e : entries) CHECK(!(e.key.operation == "argmax" && e.key.options == "abs=false"));
  CHECK_FALSE(fs::exists(exported.string() + ".lock"));

  // --allow-missing: the same files, the same export, exit status 0, still said.
  const auto allowed = test::run_command(s.command("--merge" + s.all() + " --out " + (dir.path() / "m2").string() +
                                                   " --export " + (dir.path() / "e2.json").string() + " --allow-missing"));
  CAPTURE(allowed.output);
  CHECK(allowed.status == 0);
  CHECK(allowed.output.find("gpuk: not merged: " + bad.string()) != std::string::npos);
  CHECK(allowed.output.find("--allow-missing: exit status 0") != std::string::npos);
  CHECK(TuningDb::read(dir.path() / "e2.json").entries().size() == 2);
}

TEST_CASE("a refused cell file beside a good one of the same cell: the good one merged, the refused one named, exit 1") {
  const test::TempDir dir;
  const Shards s(dir);
  // A fourth directory with a copy of the cell's file, edited to say "verified": false and tuned
  // later (the merge once preferred it, and wrote it back as verified).
  const fs::path extra = dir.path() / "extra";
  const fs::path copy = MatrixResults(extra).cell_path(s.cell(kEdited));
  fs::create_directories(copy.parent_path());
  fs::copy_file(MatrixResults(s.holder(kEdited)).cell_path(s.cell(kEdited)), copy);
  edit_cell(copy, [](nlohmann::json& j) {
    j["verified"] = false;
    j["winner"]["tuned_at"] = "2999-01-01T00:00:00Z";
  });
  const MatrixResults into(dir.path() / "merged");
  std::vector<fs::path> dirs = s.dirs;
  dirs.push_back(extra);
  const MergeSummary m = merge_matrix_results(s.m, dirs, into);
  CHECK(m.cells == 3);
  REQUIRE(m.refused.size() == 1);
  CHECK(m.refused[0].cell == kEdited);
  CHECK(m.refused[0].file == copy);
  CHECK(m.refused[0].why == "its file says \"verified\": false");
  const auto merged = into.read(s.cell(kEdited));
  REQUIRE(merged);
  CHECK(merged->verified);
  CHECK(merged->winner->tuned_at != "2999-01-01T00:00:00Z");
  // The merged file is the good shard's, byte for byte.
  CHECK(text_of(into.cell_path(s.cell(kEdited))) == text_of(MatrixResults(s.holder(kEdited)).cell_path(s.cell(kEdited))));
  const auto r = test::run_command(s.command("--merge" + s.all() + " " + extra.string() + " --out " +
                                             (dir.path() / "m2").string()));
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("gpuk: not merged: " + copy.string() + ": its file says \"verified\": false") != std::string::npos);
  CHECK(r.output.find("matrix done: 3 ok;") != std::string::npos);
}

TEST_CASE("a result read as unverified is written back unverified") {
  const test::TempDir dir;
  const Shards s(dir);
  const MatrixResults results(s.holder(kEdited));
  edit_cell(results.cell_path(s.cell(kEdited)), [](nlohmann::json& j) { j["verified"] = false; });
  const auto r = results.read(s.cell(kEdited));
  REQUIRE(r);
  CHECK_FALSE(r->verified);
  const MatrixResults other(dir.path() / "other");
  other.write(s.cell(kEdited), *r);
  CHECK(nlohmann::json::parse(text_of(other.cell_path(s.cell(kEdited))))["verified"] == false);
}

TEST_CASE("merge and export refuse a winner the cell did not sweep, and cell files they cannot read, each named with why") {
  struct Case {
    std::string what;
    std::function<void(const fs::path& file)> plant;
    std::string says;
  };
  const auto edit = [](std::function<void(nlohmann::json&)> f) { return [f](const fs::path& p) { edit_cell(p, f); }; };
  const std::vector<Case> cases = {
      {"another kernel of the family", edit([](nlohmann::json& j) {
         j["winner"]["kernel"] = "block_partials";
         j["winner"]["params"] = {{"BLOCK", 256}, {"GRID", 512}};
       }),
       "its winner is kernel block_partials, not one the cell swept (onepass)"},
      {"a value the metadata allows and the cell did not sweep",
       edit([](nlohmann::json& j) { j["winner"]["params"]["BLOCK"] = 512; }),
       "its winner's BLOCK = 512 is not a value the cell swept (128, 256)"},
      {"a parameter left out", edit([](nlohmann::json& j) { j["winner"]["params"].erase("UNROLL"); }),
       "its winner gives no value for UNROLL of onepass"},
      {"a parameter the kernel does not have", edit([](nlohmann::json& j) { j["winner"]["params"]["WARPS"] = 2; }),
       "kernel onepass has no parameter 'WARPS'"},
      {"a variant of another kernel", edit([](nlohmann::json& j) { j["variants"][0]["kernel"] = "warp_shuffle"; }),
       "its variants name kernel warp_shuffle"},
      {"a status that disagrees with its winner", edit([](nlohmann::json& j) { j["status"] = "failed"; }),
       "its status is \"failed\" with a winner"},
      {"\"verified\": \"true\"", edit([](nlohmann::json& j) { j["verified"] = "true"; }),
       "\"verified\" must be true or false"},
      {"a size of the wrong type", edit([](nlohmann::json& j) { j["size"] = "1024"; }),
       "\"size\" must be an integer of at least 0"},
      {"a variant's time of 0", edit([](nlohmann::json& j) { j["variants"][0]["median_ms"] = 0; }),
       "\"median_ms\" must be a number above 0"},
      {"a winner without a kernel", edit([](nlohmann::json& j) { j["winner"].erase("kernel"); }),
       "\"winner\": it has no \"kernel\""},
      {"the file of another cell", edit([](nlohmann::json& j) { j["cell"] = "argmin float32 2^10"; }),
       "it is the file of cell 'argmin float32 2^10'"},
      {"a file cut short",
       [](const fs::path& p) {
         const std::string t = text_of(p);
         std::ofstream(p) << t.substr(0, t.size() / 2);
       },
       "not JSON (damaged or cut short)"},
      {"a FIFO",
       [](const fs::path& p) {
         fs::remove(p);
         REQUIRE(::mkfifo(p.c_str(), 0644) == 0);
       },
       "FIFO"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const test::TempDir dir;
    const Shards s(dir);
    const fs::path holder = s.holder(kEdited), file = MatrixResults(holder).cell_path(s.cell(kEdited));
    c.plant(file);
    // The export of that shard's directory: left out, with why.
    const MatrixExport e = export_matrix(s.m, MatrixResults(holder));
    REQUIRE(e.skipped.size() == 3);
    const auto it = std::find_if(e.skipped.begin(), e.skipped.end(), [](const SkippedCell& k) { return k.cell == kEdited; });
    REQUIRE(it != e.skipped.end());
    CAPTURE(it->detail);
    CHECK(it->detail.find(c.says) != std::string::npos);
    CHECK(it->fails());
    // The merge: not merged, named with its path and why.
    const MergeSummary m = merge_matrix_results(s.m, s.dirs, MatrixResults(dir.path() / "merged"));
    CHECK(m.cells == 2);
    CHECK(m.missing == std::vector<std::string>{kEdited});
    REQUIRE(m.refused.size() == 1);
    CHECK(m.refused[0].file == file);
    CHECK(m.refused[0].why.find(c.says) != std::string::npos);
    CHECK(describe_refused(m).find("gpuk: not merged: " + file.string() + ": ") == 0);
    // A run measures it again rather than keep it.
    const MatrixPlan plan = plan_matrix(s.m, MatrixResults(holder));
    CHECK(plan.stale + plan.unusable == 1);
    CHECK(plan.missing == 2);  // the other shards' cells
  }
}

TEST_CASE("the export's message counts the entries written and the cells skipped, with their reasons") {
  const test::TempDir dir;
  const TuneMatrix m = test::matrix_of(kTrustMatrix);
  const MatrixResults results(dir.path() / "out");
  REQUIRE(m.cells.size() == 3);
  run_matrix(m, results, [&](const MatrixCell& cell) {
    if (cell.index == 2) return failed_cell(cell, "no GPU today");
    return test::fake_cell_sweep(cell);
  });
  edit_cell(results.cell_path(m.cells[1]), [](nlohmann::json& j) { j["winner"]["kernel"] = "warp_shuffle"; });
  const MatrixExport e = export_matrix(m, results);
  CHECK(e.entries.size() == 1);
  CHECK(e.failing() == 2);
  const std::string text = describe_export(e, "e.json");
  CAPTURE(text);
  CHECK(text.find("exported 1 verified winner to e.json; 2 cells skipped: 1 failed, 1 refused\n") == 0);
  CHECK(text.find("  skipped argmax abs=true float32 2^10: refused (its winner is kernel warp_shuffle, not one the "
                  "cell swept (onepass))\n") != std::string::npos);
  CHECK(text.find("  skipped " + m.cells[2].id + ": failed (no GPU today)\n") != std::string::npos);
  const auto tally = matrix_tally(m, results);
  CHECK(tally.at("ok") == 1);
  CHECK(tally.at("failed") == 1);
  CHECK(tally.at("refused") == 1);
  CHECK(failing_cells(tally) == 2);
}

TEST_CASE("--export and the database leave no X.lock behind, and a writer waiting on a removed lock file takes the new one") {
  const test::TempDir dir;
  TuningEntry added;
  added.key = {"GPU", "sm_90", "reduce", "max", "", "float32", 10};
  added.kernel = "onepass";
  const fs::path file = dir.path() / "tuned" / "sm_99.json";
  for (int i = 0; i < 3; ++i) TuningDb::merge_into(file, {added});
  TuningDb().write(dir.path() / "tuned" / "other.json");
  std::set<std::string> names;
  for (const auto& f : fs::directory_iterator(file.parent_path())) names.insert(f.path().filename().string());
  CHECK(names == std::set<std::string>{"sm_99.json", "other.json"});
  // Threads merging at once (flock excludes open file descriptions, so threads too): every entry lands.
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      TuningEntry e = added;
      e.key.bucket = 10 + t;
      TuningDb::merge_into(file, {e});
    });
  for (auto& t : threads) t.join();
  CHECK(TuningDb::read(file).entries().size() == 8);
  CHECK_FALSE(fs::exists(file.string() + ".lock"));
}

TEST_CASE("--shard is K/N in digits: a space, a sign or anything else is refused with why") {
  for (const char* bad : {" 1/3", "1/3 ", "+1/3", "1 /3", "1/ 3", "-1/3", "1/3/5", "1/", "/3", "13", "a/b", "1/0",
                          "0x1/3", "1/3\n", "9999999999/3", "1.0/3"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_shard(bad), ConfigError);
  }
  try {
    parse_shard(" 1/3");
    FAIL("accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "--shard takes K/N, shard K of N counted from 0 (0/3, 1/3, 2/3), not ' 1/3': K has ' ' (digits only: no "
          "space, sign or other character)");
  }
  CHECK(parse_shard("1/3").index == 1);
  CHECK(parse_shard("01/3").index == 1);
  const test::TempDir dir;
  const std::string yaml = dir.write("m.yaml", kTrustMatrix).string();
  const auto r = test::run_command(std::string(GPUK_EXE) + " tune " + yaml + " --shard ' 1/3'");
  CAPTURE(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("not ' 1/3': K has ' '") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path() / "m-results"));
}
