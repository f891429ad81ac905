// The tuning database is read in time linear in its entries (issue 27: 16 k entries took 2.25 s
// and 300 k did not finish in two minutes, on every `check` and every run that looks a variant
// up): a generated database of 4x the entries takes about 4x, not 16x, as long.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>

#include "helpers.hpp"
#include "tune/sweep/sweep.hpp"

using namespace gpuk;

namespace {

// `count` entries in an order that is not the database's (so that a sorted insert moves many):
// nine tenths distinct keys, then a tenth that repeat some of them with BLOCK=512 (later wins).
std::filesystem::path generated_db(const test::TempDir& dir, int count) {
  const auto path = dir.path() / ("tuning-" + std::to_string(count) + ".json");
  std::ofstream out(path);
  out << "{\"format\": \"gpuk-tuning-db\", \"version\": 1, \"entries\": [\n";
  const int distinct = count / 10 * 9;
  for (int i = 0; i < count; ++i) {
    const int key = i < distinct ? static_cast<int>((std::int64_t{i} * 7919) % distinct) : (i - distinct) * 9;
    out << (i ? ",\n" : "") << "{\"gpu\": \"GPU " << key / 1000 << "\", \"arch\": \"sm_90\", \"family\": \"reduce\", "
        << "\"operation\": \"op" << key % 1000 / 40 << "\", \"options\": \"\", \"dtype\": \"float32\", \"size_bucket\": "
        << key % 40 << ", \"objective\": \"time\", \"kernel\": \"onepass\", \"params\": {\"BLOCK\": "
        << (i < distinct ? 256 : 512) << "}, \"median_ms\": 0.1, \"gbs\": 1000, \"size\": "
        << (std::uint64_t{1} << (key % 40)) << ", \"ties\": [], \"strategy\": \"exhaustive\", \"evaluated\": 1, "
        << "\"tuned_at\": \"\", \"gpuk_version\": \"\", \"nvrtc\": \"\"}";
  }
  out << "\n]}\n";
  return path;
}

double seconds_to_read(const std::filesystem::path& path, std::size_t* entries) {
  const auto start = std::chrono::steady_clock::now();
  const TuningDb db = TuningDb::read(path);
  *entries = db.entries().size();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("a tuning database is read in time linear in its entries, the later of two equal keys kept") {
  const test::TempDir dir;
  const auto small = generated_db(dir, 20000), large = generated_db(dir, 80000);
  std::size_t n_small = 0, n_large = 0;
  seconds_to_read(small, &n_small);  // warm: the allocator, the page cache
  const double t_small = seconds_to_read(small, &n_small);
  const double t_large = seconds_to_read(large, &n_large);
  CAPTURE(t_small);
  CAPTURE(t_large);
  CHECK(n_small == 18000);  // every tenth key repeats the one before
  CHECK(n_large == 72000);
  CHECK(t_large < 8 * t_small + 0.5);  // 4x the entries: ~4x the time (16x were it quadratic)
  // The repeated key holds the later entry.
  const TuningDb db = TuningDb::read(small);
  int replaced = 0;
  for (const auto& e : db.entries()) replaced += e.params.at("BLOCK") == 512;
  CHECK(replaced == 2000);
}

TEST_CASE("the fast reader and the checked one read a database alike; a hand edit goes to the checked one") {
  const test::TempDir dir;
  const auto path = generated_db(dir, 2000);
  const TuningDb fast = TuningDb::read(path);
  // One entry with a wrong type: the whole file goes through the checked reader, which skips
  // that entry with a warning and reads the rest as the fast one did.
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string edited = text.replace(text.rfind("]"), 1, ", {\"gpu\": 5}]");
  const auto edited_path = dir.write("edited.json", edited);
  std::string warnings;
  TuningDb checked;
  {
    const test::CaptureCerr cerr;
    checked = TuningDb::read(edited_path);
    warnings = cerr.text();
  }
  CHECK(warnings.find("entry 2001 is ignored") != std::string::npos);
  REQUIRE(checked.entries().size() == fast.entries().size());
  for (std::size_t i = 0; i < fast.entries().size(); ++i) {
    const TuningEntry &a = fast.entries()[i], &b = checked.entries()[i];
    CHECK(a.key == b.key);
    CHECK(a.kernel == b.kernel);
    CHECK(a.params == b.params);
    CHECK(a.median_ms == b.median_ms);
    CHECK(a.gbs == b.gbs);
    CHECK(a.size == b.size);
    CHECK(a.ties == b.ties);
    CHECK(a.strategy == b.strategy);
    CHECK(a.evaluated == b.evaluated);
    if (a.key != b.key) break;
  }
}
