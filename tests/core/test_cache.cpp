#include <doctest/doctest.h>

#include <fstream>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"

using namespace gpuk;

namespace {

const char* kKernel = R"(/* gpuk
family: reduce
operations: [max]
params:
  BLOCK: {default: 64, values: [32, 64]}
launch:
  - entry: scale
    grid: 1
    block: BLOCK
*/
#include "helper.cuh"
template <class R, int BLOCK>
__global__ void scale(float* x) { x[threadIdx.x] *= kFactor; }
)";

struct Fixture {
  test::TempDir dir;
  std::filesystem::path kernel_path = dir.write("kernels/scale.cu", kKernel);
  std::filesystem::path header = dir.write("kernels/include/helper.cuh", "constexpr float kFactor = 2.0f;\n");
  CompileCache cache{dir.path() / "cache"};
  JitOptions options() const {
    JitOptions o;
    o.arch = "sm_90";
    o.include_dirs = {dir.path() / "kernels/include"};
    return o;
  }
};

}  // namespace

TEST_CASE("a second compile of the same variants comes from the on-disk cache") {
  Fixture f;
  const Jit jit(f.options(), &f.cache);
  const KernelFile file = KernelFile::load(f.kernel_path);
  const std::vector<std::string> names = {"scale<int, 64>", "scale<int, 32>"};
  const CompiledKernels first = jit.compile(file, names);
  CHECK_FALSE(first.from_cache);
  CHECK_FALSE(first.cubin.empty());
  CHECK(first.lowered_names.size() == 2);
  const CompiledKernels second = jit.compile(file, names);
  CHECK(second.from_cache);
  CHECK(second.cubin == first.cubin);
  CHECK(second.lowered_names == first.lowered_names);
}

TEST_CASE("the cache key changes with the source, an included header, the variants and the architecture") {
  Fixture f;
  const Jit jit(f.options(), &f.cache);
  KernelFile file = KernelFile::load(f.kernel_path);
  const std::string key = jit.cache_key(file, {"scale<int, 64>"});
  CHECK(jit.cache_key(file, {"scale<int, 64>"}) == key);
  CHECK(jit.cache_key(file, {"scale<int, 32>"}) != key);
  std::ofstream(f.header) << "constexpr float kFactor = 3.0f;\n";
  CHECK(jit.cache_key(file, {"scale<int, 64>"}) != key);
  JitOptions other = f.options();
  other.arch = "sm_80";
  CHECK(Jit(other, &f.cache).cache_key(file, {"scale<int, 64>"}) != jit.cache_key(file, {"scale<int, 64>"}));
  file.source += "\n// a comment\n";
  CHECK(jit.cache_key(file, {"scale<int, 64>"}) != key);
}

TEST_CASE("a damaged cache entry is detected and rebuilt") {
  Fixture f;
  const Jit jit(f.options(), &f.cache);
  const KernelFile file = KernelFile::load(f.kernel_path);
  const CompiledKernels first = jit.compile(file, {"scale<int, 64>"});
  const auto entry = f.cache.entry_path(first.cache_key);
  REQUIRE(std::filesystem::exists(entry));
  // Flip a byte near the end (inside the CUBIN), then truncate: both are caught.
  {
    std::fstream io(entry, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(-10, std::ios::end);
    io.put('\x5a');
  }
  CHECK_FALSE(f.cache.load(first.cache_key).has_value());
  const CompiledKernels rebuilt = jit.compile(file, {"scale<int, 64>"});
  CHECK_FALSE(rebuilt.from_cache);
  CHECK(rebuilt.cubin == first.cubin);
  CHECK(f.cache.load(first.cache_key).has_value());
  std::filesystem::resize_file(entry, std::filesystem::file_size(entry) / 2);
  CHECK_FALSE(f.cache.load(first.cache_key).has_value());
}

TEST_CASE("a cache directory that cannot be written turns the cache off, and compiling still works") {
  // A path below a regular file cannot be created, not even by root.
  test::TempDir dir;
  const auto blocker = dir.write("file", "x");
  const CompileCache cache(blocker / "cache");
  CHECK_FALSE(cache.enabled());
  Fixture f;
  const Jit jit(f.options(), &cache);
  CHECK_FALSE(jit.compile(KernelFile::load(f.kernel_path), {"scale<int, 64>"}).cubin.empty());
}

TEST_CASE("a compile error shows the kernel file, line, column and the offending line") {
  Fixture f;
  const Jit jit(f.options(), nullptr);
  KernelFile file = KernelFile::load(f.kernel_path);
  file.source.replace(file.source.find("x[threadIdx.x] *= kFactor;"), 26, "x[threadIdx.x] *= kFactr;");
  try {
    jit.compile(file, {"scale<int, 64>"});
    FAIL("compiling a kernel with an undefined name should fail");
  } catch (const CompileError& e) {
    const std::string what = e.what();
    CHECK(what.find(f.kernel_path.string() + ":13:53: error: identifier \"kFactr\" is undefined") != std::string::npos);
    CHECK(what.find("    __global__ void scale(float* x) { x[threadIdx.x] *= kFactr; }") != std::string::npos);
    CHECK(what.find("scale<int, 64>") != std::string::npos);
  }
}
