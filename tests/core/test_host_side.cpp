// The host side of a run made before any GPU (run/host_side.hpp): what a pooled sweep's parent
// makes once and its forked workers inherit. Without a GPU: the workload and its reference are
// made without CUDA, and a process forked afterwards can still use OpenMP (GNU libgomp's thread
// pool does not survive fork(): a child whose parent ran OpenMP on its own thread hangs).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <thread>

#include "builtins.hpp"
#include "config/config.hpp"
#include "data/data.hpp"
#include "gpuk/error.hpp"
#include "run/host_side.hpp"

using namespace gpuk;

namespace {

RunSpec host_side_spec_of(const std::string& family, const std::string& operation, const std::string& dtype,
                const std::string& size) {
  return parse_run_spec("family: " + family + "\noperation: " + operation + "\ndtype: " + dtype + "\nsize: " + size +
                            "\n",
                        "host_side.yaml", test::plugins(), test::kernels());
}

// Forks a child that generates `spec`'s input (OpenMP, above the generators' parallel threshold)
// and exits 0; its exit status, or -1 when it had not ended within 30 s (then it is killed), -4
// when it could not be forked.
int child_generates(const RunSpec& spec) {
  const pid_t pid = ::fork();
  if (pid < 0) return -4;
  if (pid == 0) {
    int code = 0;
    try {
      const HostArray again = run_input(spec);
      code = again.size() == spec.size ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    std::_Exit(code);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

}  // namespace

TEST_CASE("the host side is made without a GPU, and a process forked after it can still use OpenMP") {
  for (const auto& run : std::vector<std::array<std::string, 3>>{{"sort", "argsort", "float32"},
                                                                  {"reduce", "argmax", "float32"}}) {
    const std::string family = run[0];  // a variable, not a binding: lambdas capture it (clang 14)
    CAPTURE(family);
    const RunSpec spec = host_side_spec_of(family, run[1], run[2], "1000000");  // above the generators' 2^18
    // A fresh thread plays the sweep's parent: one that has not run OpenMP itself (this test
    // program's main thread may have, in other tests), as gpuk tune's main thread has not.
    bool made = false;
    double data = -1, reference = -1;
    int child = -3;
    std::thread parent([&] {
      const HostSide side = make_host_side(spec, test::plugins().get(family));
      made = side.workload != nullptr;
      data = side.data_seconds;
      reference = side.reference_seconds;
      child = child_generates(spec);
    });
    parent.join();
    CHECK(made);
    CHECK(data >= 0);
    CHECK(reference >= 0);
    CHECK(child == 0);  // -1: it hung in OpenMP
  }
}

TEST_CASE("the host side refuses a run whose host arrays do not fit, before generating anything") {
  const RunSpec spec = host_side_spec_of("sort", "sort_pairs", "float32", "2^50");  // 4 PiB of keys alone
  CHECK_THROWS_AS(make_host_side(spec, test::plugins().get("sort")), Error);
}
