// The stress script's GPU part as a test: 16 `gpuk run` and 4 `gpuk tune` at once on this GPU,
// one round (load, SIGKILL at random moments, the next run on what was left); tools/dev/stress.sh
// says what each phase checks. Without a GPU this program prints why and exits 77 (skipped);
// tools/dev/stress.sh --cpu (CTest: gpuk_stress_cpu) is the part that needs none.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "helpers.hpp"

TEST_CASE("16 runs and 4 tunes at once on one GPU, then some killed: every run verifies, nothing is damaged or lost") {
  const std::filesystem::path build = std::filesystem::path(GPUK_EXE).parent_path();
  const auto r = gpuk::test::run_command((gpuk::test::source_dir() / "tools" / "dev" / "stress.sh").string() +
                                         " --gpu --rounds 1 --build " + build.string());
  MESSAGE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("stress: all held") != std::string::npos);
}
