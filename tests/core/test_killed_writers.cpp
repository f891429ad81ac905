// A writer of a shared file stopped, and then killed, at each point where it can die
// (util/fault_point.hpp): the interleavings are forced, not hoped for (the random kills are
// tests/core/test_concurrency.cpp). At every point a reader sees the old file or the new one whole,
// another writer waits for the lock and then goes on, nothing that finished is lost, and the next
// writer removes what the killed one left.
#include <doctest/doctest.h>

#include <poll.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "tuning/tuning_db.hpp"
#include "util/atomic_file.hpp"
#include "util/fault_point.hpp"
#include "util/regular_file.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

// Every point of write_file_atomically, in the order it passes them.
const std::vector<std::string> kWritePoints = {"atomic file: temporary created", "atomic file: half written",
                                               "atomic file: written", "atomic file: synced",
                                               "atomic file: renamed", "atomic file: directory synced"};
// Before "renamed" the new file is not in place yet.
bool published_at(const std::string& point) { return point == "atomic file: renamed" || point == "atomic file: directory synced"; }

std::string stop_point;  // the child's: where it stops
int stop_report_fd = -1;
void stop_there(std::string_view point) {
  if (point != stop_point) return;
  const char here = 1;
  if (::write(stop_report_fd, &here, 1) != 1) ::_exit(96);
  for (;;) ::pause();  // until the SIGKILL
}

std::vector<std::string> passed;
void record(std::string_view point) { passed.emplace_back(point); }

// A child running `body` that stops at `point`; returns once it is there (fails the test if it
// ended or took 20 s instead).
pid_t start_stopped_at(const std::string& point, const std::function<void()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    stop_point = point;
    stop_report_fd = fds[1];
    set_fault_hook(stop_there);
    try {
      body();
    } catch (...) {
      ::_exit(98);
    }
    ::_exit(95);  // never stopped: the point was not passed
  }
  ::close(fds[1]);
  pollfd p{fds[0], POLLIN, 0};
  char here = 0;
  const bool arrived = ::poll(&p, 1, 20000) == 1 && ::read(fds[0], &here, 1) == 1;
  ::close(fds[0]);
  if (!arrived) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  REQUIRE_MESSAGE(arrived, "the writer never reached " << point);
  return pid;
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));
}

// The exit status of `pid` if it ends within `ms`, else -1 (still running).
int wait_for(pid_t pid, int ms) {
  for (int waited = 0;; waited += 10) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (waited >= ms) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

using test::temporaries_in;

std::string regular_text_of(const fs::path& path) {
  const RegularFile f = read_regular_file(path, std::uint64_t{1} << 30);
  REQUIRE(f.status == RegularFile::Status::ok);
  return f.text;
}

TuningEntry entry(const std::string& gpu, int evaluated) {
  TuningEntry e;
  e.key = {gpu, "sm_90", "reduce", "argmax", "abs=false", "float32", 20};
  e.kernel = "onepass";
  e.params = {{"BLOCK", 256}, {"UNROLL", 4}};
  e.median_ms = 0.07;
  e.size = 1 << 20;
  e.evaluated = evaluated;
  return e;
}

}  // namespace

TEST_CASE("an atomic write passes its points in order: written, flushed to disk, renamed, the directory flushed") {
  const test::TempDir dir;
  passed.clear();
  set_fault_hook(record);
  write_file_atomically(dir.path() / "f.json", "{}\n", "a test file");
  set_fault_hook(nullptr);
  CHECK(passed == kWritePoints);
  CHECK(regular_text_of(dir.path() / "f.json") == "{}\n");
}

TEST_CASE("a file written atomically is the old one or the new one, whole, at every point its writer can die") {
  for (const std::string& point : kWritePoints) {
    CAPTURE(point);
    const test::TempDir dir;
    const fs::path file = dir.path() / "entry.bin";
    const std::string before(300000, 'o'), after(500000, 'n');
    write_file_atomically(file, before, "a test file");
    const pid_t writer = start_stopped_at(point, [&] { write_file_atomically(file, after, "a test file"); });
    const std::string expected = published_at(point) ? after : before;
    CHECK(regular_text_of(file) == expected);  // while it is stopped there
    kill_and_reap(writer);
    CHECK(regular_text_of(file) == expected);  // after it died there
    // Its temporary file, if it had one, is left; the next clean-up removes it, and only it.
    const int left = temporaries_in(dir.path());
    CHECK(left == (published_at(point) ? 0 : 1));
    CHECK(remove_orphaned_temporaries(dir.path(), "entry.bin") == left);
    CHECK(temporaries_in(dir.path()) == 0);
    CHECK(regular_text_of(file) == expected);
  }
}

TEST_CASE("a tuning database merge killed at each point: readers see a whole database, a waiting merge goes on, nothing finished is lost") {
  std::vector<std::string> points = {"tuning database: locked", "tuning database: read"};
  points.insert(points.end(), kWritePoints.begin(), kWritePoints.end());
  for (const std::string& point : points) {
    CAPTURE(point);
    const test::TempDir dir;
    const fs::path db = dir.path() / "tuning" / "tuning.json";
    TuningDb::merge_into(db, {entry("GPU A", 1)});
    const pid_t killed = start_stopped_at(point, [&] { TuningDb::merge_into(db, {entry("GPU B", 2)}); });
    // A second merge waits for the lock the stopped one holds.
    const pid_t waiting = ::fork();
    REQUIRE(waiting >= 0);
    if (waiting == 0) {
      try {
        TuningDb::merge_into(db, {entry("GPU C", 3)});
      } catch (...) {
        ::_exit(98);
      }
      ::_exit(0);
    }
    CHECK(wait_for(waiting, 300) == -1);
    {
      const TuningDb seen = TuningDb::read(db);  // while the first is stopped: whole, old or new
      CHECK(seen.find(entry("GPU A", 1).key));
      CHECK(static_cast<bool>(seen.find(entry("GPU B", 2).key)) == published_at(point));
      CHECK_FALSE(seen.find(entry("GPU C", 3).key));
    }
    kill_and_reap(killed);  // its lock goes with it
    CHECK(wait_for(waiting, 20000) == 0);
    const test::CaptureCerr cerr;
    const TuningDb after = TuningDb::read(db);
    CHECK(cerr.text().empty());  // nothing skipped, nothing damaged
    CHECK(after.find(entry("GPU A", 1).key));
    CHECK(after.find(entry("GPU C", 3).key));
    CHECK(static_cast<bool>(after.find(entry("GPU B", 2).key)) == published_at(point));
    // The waiting merge removed the killed one's temporary file, although it got the lock while
    // the killed writer was still exiting (not yet a zombie: its process id still answered).
    CHECK(temporaries_in(db.parent_path()) == 0);
  }
}

TEST_CASE("an output file (a report, a .npy result) is replaced whole, or written straight into a FIFO or device") {
  const test::TempDir dir;
  // A regular file: the old report stays whole until the new one is in place (a run killed
  // while it wrote its --json once left half a report where a whole one had been).
  const fs::path report = dir.path() / "report.json";
  write_output_file(report, "{\"old\": true}\n", "the JSON report");
  const pid_t writer = start_stopped_at("atomic file: half written", [&] {
    write_output_file(report, {std::string_view("{\"new\": "), std::string(100000, ' '), std::string_view("1}\n")},
                      "the JSON report");
  });
  CHECK(regular_text_of(report) == "{\"old\": true}\n");
  kill_and_reap(writer);
  CHECK(regular_text_of(report) == "{\"old\": true}\n");
  CHECK(temporaries_in(dir.path()) == 1);  // the killed writer's, until the next writer of the file
  write_output_file(report, {std::string_view("a"), std::string_view(""), std::string_view("bc")}, "the JSON report");
  CHECK(regular_text_of(report) == "abc");
  CHECK(temporaries_in(dir.path()) == 0);
  // A FIFO (or /dev/stdout): written into as it is, never renamed over.
  const fs::path fifo = dir.path() / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo);
    got.assign(std::istreambuf_iterator<char>(in), {});
  });
  write_output_file(fifo, "through the pipe\n", "the CSV report");
  reader.join();
  CHECK(got == "through the pipe\n");
  CHECK(fs::is_fifo(fifo));
  CHECK(temporaries_in(dir.path()) == 0);
}

TEST_CASE("a move that fails says why, not '(Success)', and leaves no temporary file") {
  // The clean-up of the temporary file once reset the error before it was reported.
  const test::TempDir dir;
  dir.write("taken/x", "a directory in the way");
  try {
    write_file_atomically(dir.path() / "taken", "{}\n", "a test file");
    FAIL_CHECK("written over a directory");
  } catch (const Error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("cannot move a test file into place (rename: ") != std::string::npos);
    CHECK(what.find("Success") == std::string::npos);
  }
  CHECK(temporaries_in(dir.path()) == 0);
}

TEST_CASE("the stress check: no database is an empty one (every tune killed before it merged); an empty file is a failure") {
  // tools/dev/stress.sh's kill phase failed on an H200 with "NOT JSON ...: attempting to parse an
  // empty input" when all four tunes happened to be killed before merging: no file was written,
  // and the check read the missing file as an empty one.
  const test::TempDir dir;
  const std::string check = GPUK_STRESS_CHECK;
  const fs::path db = dir.path() / "tuning.json";
  struct Case {
    const char* what;
    std::function<void()> make;
    int status;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"no file", [] {}, 0, "none written"},
      {"an empty file", [&] { dir.write("tuning.json", ""); }, 1, "EMPTY"},
      {"half a database", [&] { dir.write("tuning.json", "{\"format\": \"gpuk-tuning-db\", \"entr"); }, 1, "NOT JSON"},
      {"a database", [&] { TuningDb::merge_into(db, {entry("GPU A", 1)}); }, 0, "1 entries"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    std::error_code ec;
    fs::remove(db, ec);
    c.make();
    const auto r = test::run_command(check + " db " + db.string());
    CAPTURE(r.output);
    CHECK(r.status == c.status);
    CHECK(r.output.find(c.says) != std::string::npos);
  }
}
