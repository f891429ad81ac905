// NVRTC in compile processes (core/src/jit/nvrtc_processes.hpp): the same CUBIN and names as in
// this thread, the same errors, several threads at once, and a process that dies.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "jit/nvrtc_processes.hpp"
#include "jit/pch_source.hpp"
#include "kernel/kernel_file.hpp"

using namespace gpuk;

namespace {

KernelFile scale_file(const std::string& body = "y[i] = K * x[i];") {
  KernelFile file;
  file.path = "scale.cu";
  file.source = "template <int K>\n__global__ void scale(float* y, const float* x) {\n  int i = threadIdx.x;\n  " + body +
                "\n}\n";
  return file;
}

Jit sm90() {
  JitOptions options;
  options.arch = "sm_90";
  return Jit(options, nullptr);
}

std::string compile_error(const Jit& jit, const KernelFile& file, NvrtcProcesses* processes) {
  try {
    jit.compile(file, {"scale<2>"}, processes);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a program compiled in a compile process is the one compiled in this thread") {
  NvrtcProcesses processes(2, 0);
  REQUIRE(processes.alive() == 2);
  const Jit jit = sm90();
  const KernelFile file = scale_file();
  const CompiledKernels here = jit.compile(file, {"scale<2>", "scale<3>"});
  const CompiledKernels there = jit.compile(file, {"scale<2>", "scale<3>"}, &processes);
  CHECK(there.cubin == here.cubin);
  CHECK(there.lowered_names == here.lowered_names);
  CHECK(there.lowered("scale<3>").find("scale") != std::string::npos);
}

TEST_CASE("a compile error from a compile process reads as one from this thread") {
  NvrtcProcesses processes(2, 0);
  const Jit jit = sm90();
  const KernelFile bad = scale_file("y[i] = undefined_name;");
  const std::string here = compile_error(jit, bad, nullptr);
  CAPTURE(here);
  CHECK(here.find("scale.cu:4:") != std::string::npos);
  CHECK(here.find("undefined_name") != std::string::npos);
  CHECK(compile_error(jit, bad, &processes) == here);
  CHECK(processes.alive() == 2);
}

TEST_CASE("more threads than compile processes: each program waits for an idle one") {
  NvrtcProcesses processes(2, 0);
  const Jit jit = sm90();
  const KernelFile file = scale_file();
  const CompiledKernels expected = jit.compile(file, {"scale<5>"});
  std::vector<std::future<CompiledKernels>> runs;
  for (int i = 0; i < 5; ++i)
    runs.push_back(std::async(std::launch::async, [&] { return jit.compile(file, {"scale<5>"}, &processes); }));
  for (auto& r : runs) CHECK(r.get().cubin == expected.cubin);
}

TEST_CASE("a compile process that dies fails its program with the signal; the rest go on, then this thread") {
  NvrtcProcesses processes(2, 0);
  const Jit jit = sm90();
  const KernelFile file = scale_file();
  for (pid_t pid : processes.pids()) {
    REQUIRE(::kill(pid, SIGKILL) == 0);
    const std::string e = compile_error(jit, file, &processes);
    CAPTURE(e);
    // The killed one may not be the one asked; a live one compiles.
    if (!e.empty()) CHECK(e.find("NVRTC's compile process died of signal 9") != std::string::npos);
  }
  // Both killed: whichever was asked since has been found dead, or is found now.
  for (int i = 0; i < 3 && processes.alive() > 0; ++i) (void)compile_error(jit, file, &processes);
  CHECK(processes.alive() == 0);
  CHECK(jit.compile(file, {"scale<2>"}, &processes).cubin == jit.compile(file, {"scale<2>"}).cubin);
}

TEST_CASE("GPUK_COMPILE_PROCESSES=0, or fewer than two threads: no compile processes") {
  CHECK(nvrtc_processes(1, 0) == nullptr);
  ::setenv("GPUK_COMPILE_PROCESSES", "0", 1);
  CHECK(nvrtc_processes(4, 0) == nullptr);
  ::unsetenv("GPUK_COMPILE_PROCESSES");
  const auto some = nvrtc_processes(2, 0);
  REQUIRE(some != nullptr);
  CHECK(some->alive() >= 2);
  // Kept for the next sweep: the same processes, or more of them when it asks for more.
  CHECK(nvrtc_processes(2, 0) == some);
  const auto more = nvrtc_processes(some->alive() + 1, 0);
  REQUIRE(more != nullptr);
  CHECK(more->alive() == some->alive() + 1);
  CHECK(nvrtc_processes(2, 0) == more);
}

TEST_CASE("a compile process works where its caller works: a relative include path after a change of directory") {
  const test::TempDir dir;
  dir.write("sub/inc/h.cuh", "#define SCALE 3\n");
  dir.write("sub/k.cu", "");
  NvrtcProcesses processes(2, 0);
  const auto before = std::filesystem::current_path();
  std::filesystem::current_path(dir.path() / "sub");
  KernelFile file;
  file.path = "k.cu";
  file.source = "#include \"h.cuh\"\ntemplate <int K> __global__ void scale(float* y) { y[0] = K * SCALE; }\n";
  JitOptions options;
  options.arch = "sm_90";
  options.include_dirs = {"inc"};
  std::string error;
  try {
    (void)Jit(options, nullptr).compile(file, {"scale<2>"}, &processes);
  } catch (const CompileError& e) {
    error = e.what();
  }
  std::filesystem::current_path(before);
  CHECK(error == "");
}

TEST_CASE("a params_as: defines file with large headers: its variants share a precompiled header in a compile process") {
  const test::TempDir dir;
  std::string big = "#pragma once\n";
  for (int i = 0; big.size() < kPchHeaderBytes + 1024; ++i)
    big += "template <int N> __device__ inline int helper_" + std::to_string(i) + "(int x) { return x * N + " +
           std::to_string(i) + "; }\n";
  dir.write("big.cuh", big);
  KernelFile file;
  file.path = dir.write("scale.cu", "#include \"big.cuh\"\n\nextern \"C\" __global__ void scale(int* y) {\n"
                                    "  y[threadIdx.x] = helper_7<block_size_x>(threadIdx.x);\n}\n");
  file.source = "#include \"big.cuh\"\n\nextern \"C\" __global__ void scale(int* y) {\n"
                "  y[threadIdx.x] = helper_7<block_size_x>(threadIdx.x);\n}\n";
  const Jit jit = sm90();
  NvrtcProcesses processes(1, 0);
  const pid_t pid = processes.pids().at(0);
  const auto pch_files = [pid] {
    int n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path() /
                                                             ("gpuk-pch-" + std::to_string(pid)), ec))
      n += e.path().extension() == ".pch" ? 1 : 0;
    return n;
  };
  for (int block : {32, 64}) {
    const std::string name = "scale -Dblock_size_x=" + std::to_string(block);
    const CompiledKernels there = jit.compile(file, {name}, &processes);
    CHECK(there.lowered_names == jit.compile(file, {name}).lowered_names);
    CHECK_FALSE(there.cubin.empty());
    CHECK(there.log.empty());  // nothing said about the header
  }
  CHECK(pch_files() == 1);  // made by the first variant, taken by the second
  // An error keeps the file's own line numbers.
  file.source = "#include \"big.cuh\"\n\nextern \"C\" __global__ void scale(int* y) {\n  y[0] = undefined_name;\n}\n";
  try {
    jit.compile(file, {"scale -Dblock_size_x=32"}, &processes);
    FAIL("compiled");
  } catch (const CompileError& e) {
    CHECK(std::string(e.what()).find(file.path.string() + ":4:") != std::string::npos);
  }
}

TEST_CASE("a fork gets compile processes of its own; ending them, or their socket's close, removes their folders") {
  const auto folder = [](pid_t pid) {
    return std::filesystem::temp_directory_path() / ("gpuk-pch-" + std::to_string(pid));
  };
  const auto parents = nvrtc_processes(2, 0);
  REQUIRE(parents != nullptr);
  CHECK(parents->owner() == ::getpid());
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    // What a sweep's worker does: its own set (the inherited one is the parent's), compiled in,
    // ended before _exit.
    ::close(fds[0]);
    int ok = 0;
    auto own = nvrtc_processes(2, 0);
    std::vector<pid_t> own_pids;
    if (own && own->owner() == ::getpid() && own != parents) {
      own_pids = own->pids();
      try {
        ok = !sm90().compile(scale_file(), {"scale<2>"}, own.get()).cubin.empty();
      } catch (...) {
      }
    }
    own.reset();
    end_nvrtc_processes();
    std::error_code ec;
    for (pid_t p : own_pids) ok = ok && !std::filesystem::exists(folder(p), ec);
    (void)!::write(fds[1], &ok, sizeof ok);
    ::_exit(0);
  }
  ::close(fds[1]);
  int ok = 0;
  CHECK(::read(fds[0], &ok, sizeof ok) == static_cast<ssize_t>(sizeof ok));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(ok == 1);
  // The parent's set still serves it, its folders still there.
  CHECK(parents->alive() >= 2);
  CHECK_FALSE(sm90().compile(scale_file(), {"scale<2>"}, parents.get()).cubin.empty());
  for (pid_t p : parents->pids()) CHECK(std::filesystem::exists(folder(p)));
  // A set ended by its destructor: its folders go with it.
  std::vector<pid_t> pids;
  {
    NvrtcProcesses set(2, 0);
    pids = set.pids();
  }
  std::error_code ec;
  for (pid_t p : pids) CHECK_FALSE(std::filesystem::exists(folder(p), ec));
}
