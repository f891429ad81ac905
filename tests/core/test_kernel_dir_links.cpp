// Symbolic links in a kernel directory: a loop is reported and skipped (not an abort), and a
// kernel file that links into a directory others can write is refused as that directory is.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <string>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "kernel/kernel_file.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

const char* kLinkedKernel =
    "/* gpuk\nfamily: reduce\noperations: [max]\nlaunch:\n  - {entry: mine, grid: 1, block: 32}\n*/\n"
    "template <class R> __global__ void mine() {}\n";

}  // namespace

TEST_CASE("a symbolic link loop in a kernel directory is skipped with a note, and the other kernels load") {
  const test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  const test::TempDir dir;
  const fs::path kernels = dir.path() / "kernels";
  dir.write("kernels/reduce/mine.cu", kLinkedKernel);
  fs::create_symlink("self", kernels / "self");                    // a link to itself
  fs::create_symlink("b.cu", kernels / "reduce" / "a.cu");         // two links to each other
  fs::create_symlink("a.cu", kernels / "reduce" / "b.cu");
  fs::create_directory_symlink("..", kernels / "reduce" / "up");  // a directory link up the tree
  std::optional<KernelLibrary> library;
  REQUIRE_NOTHROW(library.emplace(std::vector<fs::path>{kernels}));
  CHECK(library->family("reduce").size() == 1);
  bool noted = false;
  for (const auto& e : library->errors()) noted = noted || e.find("a.cu") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("gpuk list, check and run report a symbolic link loop in a kernel directory instead of aborting") {
  const test::TempDir dir;
  dir.write("kernels/mine.cu", kLinkedKernel);
  fs::create_symlink("loop.cu", dir.path() / "kernels" / "loop.cu");
  const std::string gpuk = std::string(GPUK_EXE) + " --kernels " + (dir.path() / "kernels").string() + " ";
  for (const std::string args : {std::string("list"), "check " + (test::source_dir() / "configs" / "argmax.yaml").string(),
                                 "run " + (test::source_dir() / "configs" / "argmax.yaml").string()}) {
    CAPTURE(args);
    const auto r = test::run_command(gpuk + args);
    CHECK(r.status >= 0);     // not a signal
    CHECK(r.status != 134);   // not an abort
    CHECK(r.output.find("filesystem_error") == std::string::npos);
    CHECK(r.output.find("terminate") == std::string::npos);
  }
}

TEST_CASE("a kernel file that links into a directory others can write is refused like that directory") {
  const test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  const test::TempDir dir;
  const fs::path open = dir.path() / "open";
  dir.write("open/mine.cu", kLinkedKernel);
  REQUIRE(::chmod(open.c_str(), 0777) == 0);
  fs::create_directories(dir.path() / "kernels");
  REQUIRE(::chmod((dir.path() / "kernels").c_str(), 0755) == 0);
  fs::create_symlink(open / "mine.cu", dir.path() / "kernels" / "mine.cu");
  CHECK_THROWS_WITH_AS(KernelLibrary({dir.path() / "kernels"}), doctest::Contains("world-writable"), ConfigError);
  // The same file in a sticky directory (as /tmp): others can add files there, as they could to a
  // linked directory, so it is refused too.
  REQUIRE(::chmod(open.c_str(), 01777) == 0);
  CHECK_THROWS_AS(KernelLibrary({dir.path() / "kernels"}), ConfigError);
  // With the directory private, the link is fine.
  REQUIRE(::chmod(open.c_str(), 0755) == 0);
  CHECK(KernelLibrary({dir.path() / "kernels"}).family("reduce").size() == 1);
  const test::ScopedEnv allowed("GPUK_ALLOW_UNSAFE_DIRS", "1");
  REQUIRE(::chmod(open.c_str(), 0777) == 0);
  CHECK(KernelLibrary({dir.path() / "kernels"}).family("reduce").size() == 1);
}
