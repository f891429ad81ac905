// One process, many threads: 8 threads compile variants with NVRTC into one on-disk cache at once,
// some the same variant (the same entry stored twice at the same moment), then load them all.
// The GPU half of this (compile and run, each answer checked) is tests/gpu/test_threads_gpu.cpp.
#include <doctest/doctest.h>

#include <map>
#include <mutex>
#include <thread>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

const char* kScaleKernel = R"(/* gpuk
family: reduce
operations: [max]
params:
  SCALE: {default: 1, values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}
launch:
  - entry: scale
    grid: 1
    block: 32
*/
#include "factor.cuh"
template <class R, int SCALE>
__global__ void scale(float* x) { x[threadIdx.x] *= SCALE * kFactor; }
)";

}  // namespace

TEST_CASE("8 threads compile into one cache at once: every variant compiles, identical ones agree, all load after") {
  const test::TempDir dir;
  const fs::path kernel_path = dir.write("kernels/scale.cu", kScaleKernel);
  dir.write("kernels/include/factor.cuh", "constexpr float kFactor = 2.0f;\n");
  const CompileCache cache(dir.path() / "cache");
  REQUIRE(cache.enabled());
  JitOptions options;
  options.arch = "sm_90";
  options.include_dirs = {dir.path() / "kernels/include"};
  const Jit jit(options, &cache);
  const KernelFile file = KernelFile::load(kernel_path);

  constexpr int kThreads = 8, kEach = 3;
  std::mutex mutex;
  std::map<std::string, std::vector<std::vector<char>>> cubins;  // name expression -> every thread's CUBIN
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < kEach; ++k) {
        // Threads t and t + 4 compile the same three variants; every variant is some pair's.
        const std::string name = "scale<int, " + std::to_string((t % 4) * kEach + k + 1) + ">";
        try {
          const CompiledKernels c = jit.compile(file, {name});
          const std::lock_guard lock(mutex);
          cubins[name].push_back(c.cubin);
        } catch (const std::exception& e) {
          const std::lock_guard lock(mutex);
          failures.push_back(name + ": " + e.what());
        }
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(cubins.size() == 12);
  for (const auto& entry : cubins) {
    const std::string& name = entry.first;
    const auto& copies = entry.second;
    CAPTURE(name);
    CHECK(copies.size() == 2);
    for (const auto& c : copies) CHECK(c == copies.front());
    const CompiledKernels again = jit.compile(file, {name});  // now from the cache, whole
    CHECK(again.from_cache);
    CHECK(again.cubin == copies.front());
  }
  for (const auto& f : fs::directory_iterator(dir.path() / "cache"))
    CHECK(f.path().string().find(".tmp-") == std::string::npos);
}
