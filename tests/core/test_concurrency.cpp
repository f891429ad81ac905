// Several gpuk processes sharing one compile cache and one tuning database: real processes
// (fork), hammering the same directory and the same file at once. A reader must never see half
// an entry, and no writer's update may be lost; a writer killed (SIGKILL) at a random moment
// leaves no damaged entry and no lost update of another, and the next process removes the
// temporary files it left.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "tune/sweep/sweep.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

// Starts `body(i)` in `count` child processes at once and returns their ids; a child exits with
// what body returns (98 when it throws). A child leaves with _exit, so that nothing of the
// parent (doctest, the TempDir) runs twice.
std::vector<pid_t> start_processes(int count, const std::function<int(int)>& body) {
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
  return pids;
}

// Runs `body(i)` in `count` child processes at once; returns their exit statuses (0: all well).
std::vector<int> in_processes(int count, const std::function<int(int)>& body) {
  std::vector<int> statuses;
  for (const pid_t pid : start_processes(count, body)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    statuses.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return statuses;
}

// Kills each process with SIGKILL after a random pause of up to `most_ms` and reaps it. Returns
// how many were still running when killed (the others ended by themselves: a failure).
int kill_at_random_moments(const std::vector<pid_t>& pids, std::mt19937& random, int most_ms) {
  int killed = 0;
  for (const pid_t pid : pids) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(1, most_ms)(random)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    killed += WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }
  return killed;
}

std::mt19937 seeded_random(const char* what) {
  const unsigned seed = std::random_device{}();
  MESSAGE(std::string(what) << ": random seed " << seed);
  return std::mt19937(seed);
}

using test::temporaries_in;

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

// Writer p's i-th entry of the kill test: a key of its own for any i.
TuningEntry killed_writer_entry(int p, int i) {
  TuningEntry e;
  e.key = {"GPU " + std::to_string(p), "sm_90", "reduce", "max", "i=" + std::to_string(i), "float32", 10};
  e.kernel = "onepass";
  e.params = {{"BLOCK", 256}};
  e.evaluated = p * 100000 + i;
  return e;
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

TEST_CASE("cache writers killed at random moments leave no damaged entry, and the next process removes their leftovers") {
  const test::TempDir dir;
  const fs::path cache_dir = dir.path() / "cache";
  constexpr int kWriters = 6, kKeys = 8;
  constexpr std::size_t kBytes = 4 << 20;  // a write of several system calls and an fsync: killed inside it
  auto random = seeded_random("killed cache writers");
  int rounds = 0, left = 0;
  // Until some writer has been killed inside a write (it left a temporary file), at most 20 rounds.
  for (; rounds < 20 && left == 0; ++rounds) {
    const auto pids = start_processes(kWriters, [&](int p) -> int {
      const CompileCache cache(cache_dir);
      for (int n = 0;; ++n) cache.store(cache_entry((n * 3 + p) % kKeys, kBytes));
    });
    CHECK(kill_at_random_moments(pids, random, 150) == kWriters);
    left = temporaries_in(cache_dir);
  }
  MESSAGE(rounds << " round(s) of " << kWriters << " writers killed; " << left << " temporary file(s) left");
  CHECK(left > 0);
  const test::CaptureCerr cerr;
  const CompileCache next(cache_dir);  // the next process: it removes what the killed ones left, and says so
  CHECK(cerr.text().find("removed " + std::to_string(left) + " temporary file") != std::string::npos);
  CHECK(temporaries_in(cache_dir) == 0);
  // Every entry that is there is whole: its checksum holds and its bytes are the writer's.
  int entries = 0;
  for (int k = 0; k < kKeys; ++k) {
    CAPTURE(k);
    if (!fs::exists(next.entry_path(cache_entry(k, 0).cache_key))) continue;
    ++entries;
    const auto loaded = next.load(cache_entry(k, 0).cache_key);
    REQUIRE(loaded);
    CHECK(loaded->cubin == cache_entry(k, kBytes).cubin);
  }
  CHECK(entries > 0);
  CHECK(cerr.text().find("damaged") == std::string::npos);
}

TEST_CASE("tuning database writers killed at random moments lose no update that finished, and leave a valid file") {
  const test::TempDir dir;
  const fs::path db = dir.path() / "tuning" / "tuning.json";
  constexpr int kWriters = 6;
  auto random = seeded_random("killed database writers");
  std::vector<int> done(kWriters, 0);
  int rounds = 0, left = 0;
  for (; rounds < 20 && (left == 0 || rounds < 2); ++rounds) {
    // Each writer merges entry after entry and reports each finished merge through its pipe, so
    // that the test knows which updates must be there whatever moment the kill came at.
    std::vector<int> read_ends;
    std::vector<pid_t> pids;
    for (int p = 0; p < kWriters; ++p) {
      int fds[2];
      REQUIRE(::pipe(fds) == 0);
      const int start = done[static_cast<std::size_t>(p)];
      const auto child = start_processes(1, [&](int) -> int {
        ::close(fds[0]);
        for (int i = start;; ++i) {
          TuningDb::merge_into(db, {killed_writer_entry(p, i)});
          if (::write(fds[1], &i, sizeof i) != sizeof i) ::_exit(97);
        }
      });
      ::close(fds[1]);
      read_ends.push_back(fds[0]);
      pids.push_back(child.front());
    }
    CHECK(kill_at_random_moments(pids, random, 120) == kWriters);
    for (int p = 0; p < kWriters; ++p) {
      int i = 0;
      while (::read(read_ends[static_cast<std::size_t>(p)], &i, sizeof i) == sizeof i) done[static_cast<std::size_t>(p)] = i + 1;
      ::close(read_ends[static_cast<std::size_t>(p)]);
    }
    left += temporaries_in(db.parent_path());
  }
  MESSAGE(rounds << " rounds of " << kWriters << " writers killed; temporary files seen after kills: " << left);
  const test::CaptureCerr cerr;
  const TuningDb read = TuningDb::read(db);  // valid JSON, every entry readable
  CHECK(cerr.text().empty());
  int finished = 0;
  for (int p = 0; p < kWriters; ++p)
    for (int i = 0; i < done[static_cast<std::size_t>(p)]; ++i, ++finished) {
      CAPTURE(p);
      CAPTURE(i);
      const TuningEntry* e = read.find(killed_writer_entry(p, i).key);
      REQUIRE(e);
      CHECK(e->evaluated == p * 100000 + i);
    }
  MESSAGE(finished << " merges finished before their writer was killed; every one is in the database");
  CHECK(finished > 0);
  // The next merge (a writer killed while it held the lock let go of it by dying) removes the
  // temporary files of killed merges.
  TuningDb::merge_into(db, {killed_writer_entry(kWriters, 0)});
  CHECK(temporaries_in(db.parent_path()) == 0);
}

TEST_CASE("the database's temporary files go under its lock, a live process's too; the cache's only when their writer is gone") {
  const test::TempDir dir;
  const pid_t gone = ::fork();  // a process id that is surely dead: a child that has ended and been reaped
  REQUIRE(gone >= 0);
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const std::string dead = std::to_string(gone), alive = std::to_string(::getpid());
  const fs::path db = dir.path() / "tuning.json";
  const auto dead_db = dir.write("tuning.json.tmp-" + dead + "-0", "{");
  // Every writer of the database's temporary files holds its lock, so under the lock any is a
  // killed writer's, whatever its process id says (a killed writer lets go of the lock while it
  // exits, when its id still answers: tests/core/test_killed_writers.cpp).
  const auto live_db = dir.write("tuning.json.tmp-" + alive + "-99", "{");
  const auto other = dir.write("other.json.tmp-" + dead + "-0", "{");  // not this database's: not its business
  const auto longer = dir.write("tuning.json2.tmp-" + dead + "-0", "{");  // nor one whose name only starts alike
  TuningDb::merge_into(db, {killed_writer_entry(0, 0)});
  CHECK_FALSE(fs::exists(dead_db));
  CHECK_FALSE(fs::exists(live_db));
  CHECK(fs::exists(other));
  CHECK(fs::exists(longer));

  const fs::path cache_dir = dir.path() / "cache";
  fs::create_directories(cache_dir);
  const auto dead_entry = dir.write("cache/0123.cubin.tmp-" + dead + "-3", "half");
  const auto live_entry = dir.write("cache/4567.cubin.tmp-" + alive + "-4", "half");
  const auto not_ours = dir.write("cache/notes.tmp-x", "?");
  const test::CaptureCerr cerr;
  const CompileCache cache(cache_dir);
  CHECK_FALSE(fs::exists(dead_entry));
  CHECK(fs::exists(live_entry));
  CHECK(fs::exists(not_ours));
  CHECK(cerr.text().find("removed 1 temporary file that killed gpuk processes left") != std::string::npos);
}
