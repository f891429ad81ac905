// A FIFO (or another file that is not a regular file) where gpuk expects a file of its own or
// the user's: gpuk says so, or treats it as missing, and never waits for a writer that will not
// come. Each case runs in a child process with a time limit, so that a hang fails the test.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "builtins.hpp"
#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "tune/matrix/matrix.hpp"
#include "tune/sweep/sweep.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

// Runs `body` in a child; true when it returned (exit 0) within `seconds`. The child is killed
// when it takes longer.
bool finishes_within(double seconds, const std::function<void()>& body) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      body();
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

fs::path fifo(const test::TempDir& dir, const std::string& name) {
  const fs::path p = dir.path() / name;
  fs::create_directories(p.parent_path());
  REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
  return p;
}

// Throws unless `body` throws a ConfigError (checked in the child, where doctest's checks do
// not reach the parent).
void refused(const std::function<void()>& body) {
  try {
    body();
  } catch (const ConfigError&) {
    return;
  }
  throw 2;
}

}  // namespace

TEST_CASE("a FIFO where a compile cache entry goes is a damaged entry, not a wait") {
  const test::TempDir dir;
  const CompileCache cache(dir.path() / "cache");
  REQUIRE(cache.enabled());
  fifo(dir, "cache/" + cache.entry_path("k123").filename().string());
  CHECK(finishes_within(10, [&] {
    if (cache.load("k123")) throw 1;
  }));
}

TEST_CASE("a FIFO where a tuning matrix cell's result goes is a cell not yet measured") {
  const test::TempDir dir;
  const MatrixResults results(dir.path());
  MatrixCell cell;
  cell.id = "reduce argmax float32 2^12";
  cell.file = "reduce.argmax.float32.n4096.json";
  fifo(dir, "cells/" + cell.file);
  CHECK(finishes_within(10, [&] {
    if (results.read(cell)) throw 1;
  }));
}

TEST_CASE("a FIFO given as a config, kernel file or tuning database is refused, saying what it is") {
  const test::TempDir dir;
  const fs::path config = fifo(dir, "c.yaml");
  CHECK(finishes_within(10, [&] {
    try {
      load_run_spec(config, test::plugins(), test::kernels());
    } catch (const ConfigError& e) {
      if (std::string(e.what()).find("FIFO") != std::string::npos) return;
    }
    throw 1;
  }));
  CHECK(finishes_within(10, [&] { refused([&] { load_tune_spec(config, test::plugins(), test::kernels()); }); }));
  CHECK(finishes_within(10, [&] { refused([&] { config_kind_of_file(config); }); }));
  CHECK(finishes_within(10, [&] {
    if (is_tune_matrix_file(config)) throw 1;
  }));
  const fs::path kernel = fifo(dir, "k/mine.cu");
  CHECK(finishes_within(10, [&] { refused([&] { KernelFile::load(kernel); }); }));
  const fs::path db = fifo(dir, "tuning.json");
  CHECK(finishes_within(10, [&] { refused([&] { TuningDb::read(db); }); }));
}

TEST_CASE("gpuk check, run and compare refuse a FIFO in time") {
  const test::TempDir dir;
  const fs::path f = fifo(dir, "c.yaml");
  for (const std::string args : {"check " + f.string(), "run " + f.string(), "compare " + f.string() + " " + f.string()}) {
    CAPTURE(args);
    const auto r = test::run_command("timeout 20 " + std::string(GPUK_EXE) + " " + args);
    CHECK(r.status == 2);
    CHECK(r.output.find("FIFO") != std::string::npos);
  }
}
