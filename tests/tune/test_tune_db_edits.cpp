// A tuning database edited by hand: an entry with a wrong type, an impossible value or an unknown
// kernel costs that entry (a warning names it), never the database and never a crash; a file
// that is not JSON at all is moved aside by the next merge instead of failing a finished sweep.
#include <doctest/doctest.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "builtins.hpp"
#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "run/choose.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "tune/sweep/sweep.hpp"

using namespace gpuk;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json good_entry(int bucket) {
  return {{"gpu", "NVIDIA H100 80GB HBM3"}, {"arch", "sm_90"},         {"family", "reduce"},
          {"operation", "argmax"},          {"options", "abs=false"},  {"dtype", "float32"},
          {"size_bucket", bucket},          {"kernel", "onepass"},     {"params", {{"BLOCK", 256}, {"UNROLL", 4}}},
          {"median_ms", 0.1},               {"size", 1 << bucket},     {"ties", json::array()},
          {"strategy", "exhaustive"},       {"evaluated", 25},         {"tuned_at", "2025-01-01T00:00:00Z"}};
}

fs::path write_db(const test::TempDir& dir, const json& entries) {
  return dir.write("tuning.json", json{{"format", "gpuk-tuning-db"}, {"version", 1}, {"entries", entries}}.dump(2));
}

}  // namespace

TEST_CASE("hand-edited entries with wrong types or values are skipped with a warning naming each; the rest is used") {
  const test::TempDir dir;
  json entries = json::array({good_entry(20)});
  json e = good_entry(21);
  e["size_bucket"] = "twenty-one";
  entries.push_back(e);
  e = good_entry(22);
  e["params"]["BLOCK"] = "big";
  entries.push_back(e);
  e = good_entry(23);
  e["params"]["BLOCK"] = 2.5;
  entries.push_back(e);
  e = good_entry(24);
  e.erase("kernel");
  entries.push_back(e);
  e = good_entry(25);
  e["size_bucket"] = -3;
  entries.push_back(e);
  e = good_entry(26);
  e["median_ms"] = "fast";
  entries.push_back(e);
  entries.push_back(42);
  entries.push_back(good_entry(27));
  const fs::path path = write_db(dir, entries);

  const test::CaptureCerr cerr;
  const TuningDb db = TuningDb::read(path);
  CHECK(db.entries().size() == 2);
  const std::string said = cerr.text();
  CHECK(said.find(path.string() + ": entry 2 (reduce argmax abs=false float32, kernel onepass) is ignored: "
                                  "\"size_bucket\" must be an integer from 0 to 64") != std::string::npos);
  CHECK(said.find("entry 3 (reduce argmax abs=false float32, kernel onepass) is ignored: parameter BLOCK must be an "
                  "integer") != std::string::npos);
  CHECK(said.find("entry 4 (reduce argmax abs=false float32, kernel onepass) is ignored: parameter BLOCK") !=
        std::string::npos);
  CHECK(said.find("entry 5 (reduce argmax abs=false float32) is ignored: it has no \"kernel\"") != std::string::npos);
  CHECK(said.find("entry 6 (reduce argmax abs=false float32, kernel onepass) is ignored: \"size_bucket\"") !=
        std::string::npos);
  CHECK(said.find("entry 7 (reduce argmax abs=false float32, kernel onepass) is ignored: \"median_ms\" must be a "
                  "number") != std::string::npos);
  CHECK(said.find("entry 8 is ignored: it is not a JSON object") != std::string::npos);
}

TEST_CASE("a merge writes the skipped entries back as they were: a hand edit is never lost") {
  const test::TempDir dir;
  json bad = good_entry(21);
  bad["size_bucket"] = "twenty-one";
  const fs::path path = write_db(dir, json::array({good_entry(20), bad}));
  TuningEntry added;
  added.key = {"NVIDIA H100 80GB HBM3", "sm_90", "reduce", "max", "abs=false", "float32", 22};
  added.kernel = "onepass";
  added.params = {{"BLOCK", 512}};
  {
    const test::CaptureCerr cerr;
    TuningDb::merge_into(path, {added});
    CHECK(cerr.text().find("entry 2") != std::string::npos);
  }
  std::ifstream in(path);
  const json written = json::parse(in);
  REQUIRE(written["entries"].size() == 3);
  CHECK(written["entries"][2] == bad);
  const test::CaptureCerr cerr;
  CHECK(TuningDb::read(path).entries().size() == 2);
}

TEST_CASE("every field of an entry set to every wrong kind of value: a warning or a value, never a crash") {
  const test::TempDir dir;
  const std::vector<json> wrong = {nullptr, true, -1, 1e300, -0.5, "x", json::array({1}), json::object(),
                                   json::array(), std::uint64_t{1} << 63};
  int cases = 0, skipped = 0;
  const json original = good_entry(20);
  for (const auto& item : original.items()) {
    const std::string field = item.key();
    for (const json& w : wrong) {
      CAPTURE(field);
      CAPTURE(w.dump());
      json e = good_entry(20);
      e[field] = w;
      const fs::path path = write_db(dir, json::array({e, good_entry(21)}));
      const test::CaptureCerr cerr;
      const TuningDb db = TuningDb::read(path);  // must not throw: one entry's value is not the database's damage
      REQUIRE(db.entries().size() >= 1);
      CHECK(db.find(TuningKey{"NVIDIA H100 80GB HBM3", "sm_90", "reduce", "argmax", "abs=false", "float32", 21}));
      if (db.entries().size() == 1) {
        ++skipped;
        CHECK(cerr.text().find("entry 1") != std::string::npos);
      }
      ++cases;
    }
  }
  MESSAGE(cases << " edits tried, " << skipped << " entries skipped with a warning, the rest read as valid values");
  CHECK(skipped > cases / 2);
}

TEST_CASE("an entry that names a kernel or parameter that is not there: the lookup says so and uses the defaults") {
  DeviceInfo h100;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.max_threads_per_block = 1024;
  h100.max_shared_per_block_optin = 232448;
  const auto& kernels = test::kernels();
  TuningEntry e;
  e.key = {h100.name, "sm_90", "reduce", "argmax", "abs=false", "float32", 20};
  for (const auto& edit : std::vector<std::pair<std::string, std::map<std::string, std::int64_t>>>{
           {"no_such_kernel", {{"BLOCK", 256}}}, {"onepass", {{"NO_SUCH_PARAM", 1}}}}) {
    const std::string& kernel = edit.first;
    const auto& params = edit.second;
    CAPTURE(kernel);
    e.kernel = kernel;
    e.params = params;
    const test::TempDir dir;
    TuningDb db;
    db.put(e);
    db.write(dir.path() / "db.json");
    TuningSources tuning;
    add_user_tuning(tuning, dir.path() / "db.json", false);
    const RunSpec spec = parse_run_spec("family: reduce\noperation: argmax\ndtype: float32\nsize: 2^20\n", "c.yaml",
                                        test::plugins(), kernels);
    const Choice c = choose_variant(problem_of(spec), variant_request(spec), test::plugins().get(spec.family), kernels,
                                    h100, tuning);
    REQUIRE(c.warnings.size() == 1);
    CHECK(c.warnings[0].find(kernel) != std::string::npos);
    CHECK(c.source != Choice::Source::user_db);
    CHECK(c.file->name == "onepass");
    CHECK(c.params.count("NO_SUCH_PARAM") == 0);
  }
}

TEST_CASE("a database that is not JSON stops a read with its position, and a merge moves it aside") {
  const test::TempDir dir;
  const std::string damaged = "{\"format\": \"gpuk-tuning-db\", \"entries\": [ {\"gpu\": ";
  const fs::path path = dir.write("tuning.json", damaged);
  CHECK_THROWS_WITH_AS(TuningDb::read(path), doctest::Contains("the tuning database is damaged"), ConfigError);
  TuningEntry added;
  added.key = {"GPU", "sm_90", "reduce", "max", "", "float32", 10};
  added.kernel = "onepass";
  const test::CaptureCerr cerr;
  TuningDb::merge_into(path, {added});
  CHECK(cerr.text().find("moved it to " + path.string() + ".damaged-") != std::string::npos);
  CHECK(TuningDb::read(path).entries().size() == 1);
  int aside = 0;
  for (const auto& f : fs::directory_iterator(dir.path()))
    if (f.path().filename().string().rfind("tuning.json.damaged-", 0) == 0) {
      ++aside;
      std::ifstream in(f.path());
      CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == damaged);  // kept as it was
    }
  CHECK(aside == 1);
}

TEST_CASE("a JSON file that is not a tuning database, or a newer one, is never written over") {
  const test::TempDir dir;
  TuningEntry added;
  added.key = {"GPU", "sm_90", "reduce", "max", "", "float32", 10};
  added.kernel = "onepass";
  for (const std::string text : {"{\"entries\": []}", "[1, 2, 3]",
                                 "{\"format\": \"gpuk-tuning-db\", \"version\": 99, \"entries\": []}",
                                 "{\"format\": \"gpuk-tuning-db\", \"version\": \"one\", \"entries\": []}",
                                 "{\"format\": \"gpuk-tuning-db\", \"entries\": {\"a\": 1}}"}) {
    CAPTURE(text);
    const fs::path path = dir.write("other.json", text);
    CHECK_THROWS_AS(TuningDb::read(path), ConfigError);
    CHECK_THROWS_AS(TuningDb::merge_into(path, {added}), ConfigError);
    std::ifstream in(path);
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == text);
  }
}

TEST_CASE("a hand-edited entry's terminal escapes are printed escaped in the warning that skips it") {
  const test::TempDir dir;
  const fs::path path = dir.write("tuning.json", "{\"format\": \"gpuk-tuning-db\", \"entries\": [{\"family\": "
                                                 "\"\\u001b]0;owned\\u0007\\u001b[2J\", \"objective\": \"\\u001b[31m\"}]}");
  const test::CaptureCerr cerr;
  CHECK(TuningDb::read(path).entries().empty());
  CAPTURE(cerr.text());
  CHECK(cerr.text().find("is ignored") != std::string::npos);
  CHECK(cerr.text().find('\x1b') == std::string::npos);
  CHECK(cerr.text().find('\x07') == std::string::npos);
}
