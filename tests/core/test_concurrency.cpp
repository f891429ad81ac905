// Several gpuk processes sharing one compile cache and one tuning database: real processes
// (fork), hammering the same directory and the same file at once. A reader must never see half
// an entry, and no writer's update may be lost.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "gpuk/error.hpp"
#include "gpuk/jit.hpp"
#include "gpuk/tune.hpp"
#include "helpers.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

// Runs `body(i)` in `count` child processes at once; returns their exit statuses (0: all well).
// A child leaves with _exit, so that nothing of the parent (doctest, the TempDir) runs twice.
std::vector<int> in_processes(int count, const std::function<int(int)>& body) {
  std::vector<pid_t> pids;
  for (int i = 0; i < count; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int status = 99;
      try {
        status = body(i);
      } catch (...) {
        status = 98;
      }
      ::_exit(status);
    }
    pids.push_back(pid);
  }
  std::vector<int> statuses;
  for (const pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    statuses.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return statuses;
}

// An entry of `bytes` bytes whose content is a function of its key alone, as a real one is.
CompiledKernels cache_entry(int key, std::size_t bytes) {
  CompiledKernels c;
  c.cache_key = "concurrency" + std::to_string(key);
  c.name_expressions = {"k<" + std::to_string(key) + ">"};
  c.lowered_names = {"_Z1kILi" + std::to_string(key) + "EEvv"};
  c.cubin.resize(bytes);
  for (std::size_t i = 0; i < bytes; ++i) c.cubin[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(key)) & 0xff);
  return c;
}

TuningEntry db_entry(int writer, int i) {
  TuningEntry e;
  e.key = {"GPU " + std::to_string(writer), "sm_90", "reduce", "max", "", "float32", i};
  e.kernel = "onepass";
  e.params = {{"BLOCK", 128 * (writer + 1)}, {"UNROLL", i}};
  e.median_ms = 0.01 * (i + 1);
  e.size = std::uint64_t{1} << i;
  e.strategy = "exhaustive";
  e.evaluated = writer * 1000 + i;
  return e;
}

}  // namespace

TEST_CASE("processes sharing one compile cache never read half an entry, and every entry loads after") {
  const test::TempDir dir;
  const fs::path cache_dir = dir.path() / "cache";
  constexpr int kProcesses = 6, kKeys = 12;
  constexpr std::size_t kBytes = 1 << 20;  // big enough that a write is not one syscall
  // Every process stores every key (the same content, as with one variant compiled twice), in its
  // own order, and after each store loads every key: a key it stored must load; any key whose
  // file is there must load whole and equal to what was stored.
  const auto statuses = in_processes(kProcesses, [&](int p) {
    const CompileCache cache(cache_dir);
    if (!cache.enabled()) return 10;
    for (int n = 0; n < kKeys; ++n) {
      const int key = (n * 5 + p) % kKeys;
      cache.store(cache_entry(key, kBytes));
      for (int k = 0; k < kKeys; ++k) {
        const bool there = fs::exists(cache.entry_path(cache_entry(k, 0).cache_key));
        const auto loaded = cache.load(cache_entry(k, 0).cache_key);
        if (k == key && !loaded) return 11;
        if (there && !loaded) return 12;  // a file that is there but does not load: half an entry
        if (loaded && loaded->cubin != cache_entry(k, kBytes).cubin) return 13;
      }
    }
    return 0;
  });
  for (int p = 0; p < kProcesses; ++p) {
    CAPTURE(p);
    CHECK(statuses[static_cast<std::size_t>(p)] == 0);
  }
  const CompileCache cache(cache_dir);
  for (int k = 0; k < kKeys; ++k) {
    CAPTURE(k);
    const auto loaded = cache.load(cache_entry(k, 0).cache_key);
    REQUIRE(loaded);
    CHECK(loaded->cubin == cache_entry(k, kBytes).cubin);
    CHECK(loaded->lowered("k<" + std::to_string(k) + ">") == "_Z1kILi" + std::to_string(k) + "EEvv");
  }
  // No temporary file is left behind.
  for (const auto& f : fs::directory_iterator(cache_dir)) CHECK(f.path().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("processes merging into one tuning database lose no update, and readers never see half a file") {
  const test::TempDir dir;
  const fs::path db = dir.path() / "tuning" / "tuning.json";
  constexpr int kWriters = 6, kReaders = 2, kEach = 15;
  // Writers merge their entries one at a time (each merge re-reads the file under the lock);
  // readers read the file over and over meanwhile, without the lock, as `variant: auto` does.
  const auto statuses = in_processes(kWriters + kReaders, [&](int p) {
    if (p < kWriters) {
      for (int i = 0; i < kEach; ++i) TuningDb::merge_into(db, {db_entry(p, i)});
      // One key shared by every writer: the last merge wins, whole.
      TuningEntry shared = db_entry(kWriters, 0);
      shared.median_ms = p;
      TuningDb::merge_into(db, {shared});
      return 0;
    }
    std::size_t last = 0;
    for (int n = 0; n < 400; ++n) {
      try {
        const TuningDb read = TuningDb::read(db);  // a missing file is an empty database
        if (read.entries().size() < last) return 21;  // an update vanished
        last = read.entries().size();
        for (const auto& e : read.entries())
          if (e.kernel != "onepass" || e.params.size() != 2) return 22;
      } catch (const Error&) {
        return 23;  // damaged: half a file
      }
    }
    return 0;
  });
  for (int p = 0; p < kWriters + kReaders; ++p) {
    CAPTURE(p);
    CHECK(statuses[static_cast<std::size_t>(p)] == 0);
  }
  const TuningDb read = TuningDb::read(db);
  // kWriters x kEach own entries, plus the shared one.
  CHECK(read.entries().size() == static_cast<std::size_t>(kWriters * kEach + 1));
  const TuningEntry* shared = read.find(db_entry(kWriters, 0).key);
  REQUIRE(shared);
  CHECK(shared->median_ms >= 0);
  CHECK(shared->median_ms < kWriters);
  for (int w = 0; w < kWriters; ++w)
    for (int i = 0; i < kEach; ++i) {
      CAPTURE(w);
      CAPTURE(i);
      const TuningEntry* e = read.find(db_entry(w, i).key);
      REQUIRE(e);
      CHECK(e->evaluated == w * 1000 + i);
      CHECK(e->params.at("BLOCK") == 128 * (w + 1));
    }
  for (const auto& f : fs::directory_iterator(db.parent_path())) CHECK(f.path().string().find(".tmp-") == std::string::npos);
}
