// The tuning database: write, read, merge, pick by size bucket, concurrent writers (the lookup
// that reads it: tests/core/test_choose.cpp).
#include <doctest/doctest.h>

#include <set>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "plugin/plugin.hpp"
#include "tune/sweep/sweep.hpp"

using namespace gpuk;

namespace {

TuningEntry entry(int bucket, const std::string& kernel = "onepass", std::int64_t block = 256,
                  const std::string& op = "argmax") {
  TuningEntry e;
  e.key = {"NVIDIA H100 80GB HBM3", "sm_90", "reduce", op, "abs=false", "float32", bucket};
  e.kernel = kernel;
  e.params = {{"BLOCK", block}, {"UNROLL", 4}};
  e.median_ms = 0.1;
  e.size = std::uint64_t{1} << bucket;
  e.strategy = "exhaustive";
  e.evaluated = 25;
  e.tuned_at = "2025-01-01T00:00:00Z";
  return e;
}

}  // namespace

TEST_CASE("size buckets are floor(log2(n))") {
  CHECK(size_bucket(1) == 0);
  CHECK(size_bucket(2) == 1);
  CHECK(size_bucket(3) == 1);
  CHECK(size_bucket(1 << 20) == 20);
  CHECK(size_bucket((1 << 21) - 1) == 20);
  CHECK(size_bucket(40960000) == 25);
}

TEST_CASE("the database writes, reads back, and replaces an entry of the same key") {
  const test::TempDir dir;
  const auto path = dir.path() / "sub" / "tuning.json";
  CHECK(TuningDb::read(path).entries().empty());  // no file: empty
  TuningDb db;
  db.put(entry(20));
  db.put(entry(26));
  db.put(entry(20, "onepass", 512));  // same key: replaces
  db.write(path);
  const TuningDb back = TuningDb::read(path);
  REQUIRE(back.entries().size() == 2);
  const TuningEntry* e = back.find(entry(20).key);
  REQUIRE(e);
  CHECK(e->params.at("BLOCK") == 512);
  CHECK(e->evaluated == 25);
  CHECK(e->tuned_at == "2025-01-01T00:00:00Z");
  // Nothing but the file is left behind: no temporary files, and no lock file (every writer takes
  // PATH.lock and removes it as it lets go).
  std::set<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(path.parent_path())) files.insert(f.path().filename().string());
  CHECK(files == std::set<std::string>{"tuning.json"});
}

TEST_CASE("pick: the same bucket, else the nearest within two buckets, else nothing") {
  TuningDb db;
  db.put(entry(20, "onepass", 128));
  db.put(entry(24, "onepass", 512));
  auto key = entry(20).key;
  auto p = db.pick(key);
  REQUIRE(p.entry);
  CHECK(p.exact);
  CHECK(p.entry->params.at("BLOCK") == 128);
  key.bucket = 22;  // 2 from both: the larger wins
  p = db.pick(key);
  REQUIRE(p.entry);
  CHECK_FALSE(p.exact);
  CHECK(p.entry->key.bucket == 24);
  key.bucket = 21;
  CHECK(db.pick(key).entry->key.bucket == 20);
  key.bucket = 27;  // 3 away from 24
  CHECK_FALSE(db.pick(key).entry);
  key = entry(20).key;
  key.gpu = "NVIDIA A100";
  CHECK_FALSE(db.pick(key).entry);
  key = entry(20).key;
  key.options = "abs=true";
  CHECK_FALSE(db.pick(key).entry);
}

TEST_CASE("merge_into keeps what others wrote: threads") {
  const test::TempDir dir;
  const auto path = dir.path() / "tuning.json";
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) TuningDb::merge_into(path, {entry(t * 5 + i)});
    });
  for (auto& t : threads) t.join();
  CHECK(TuningDb::read(path).entries().size() == 40);
}

TEST_CASE("merge_into keeps what others wrote: processes") {
  const test::TempDir dir;
  const auto path = dir.path() / "tuning.json";
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int status = 0;
      try {
        for (int i = 0; i < 10; ++i) TuningDb::merge_into(path, {entry(p * 10 + i, "onepass", 128, "argmin")});
      } catch (...) {
        status = 1;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  CHECK(TuningDb::read(path).entries().size() == 40);
}

TEST_CASE("a damaged database is an error that names the file") {
  const test::TempDir dir;
  const auto bad = dir.write("bad.json", "{\"format\": \"gpuk-tuning-db\", \"entries\": [ {\"gpu\": 1");
  CHECK_THROWS_WITH_AS(TuningDb::read(bad), doctest::Contains("bad.json: the tuning database is damaged"), ConfigError);
  const auto other = dir.write("other.json", "{\"entries\": []}");
  CHECK_THROWS_WITH_AS(TuningDb::read(other), doctest::Contains("not a gpuk tuning database"), ConfigError);
}

TEST_CASE("the default location: $GPUK_TUNING_DB, else tuning/tuning.json in the cache directory") {
  const char* old = std::getenv("GPUK_TUNING_DB");
  const std::string saved = old ? old : "";
  setenv("GPUK_TUNING_DB", "/tmp/x/db.json", 1);
  CHECK(TuningDb::default_path() == std::filesystem::path("/tmp/x/db.json"));
  unsetenv("GPUK_TUNING_DB");
  CHECK(TuningDb::default_path() == CompileCache::default_dir() / "tuning" / "tuning.json");
  if (old) setenv("GPUK_TUNING_DB", saved.c_str(), 1);
}
