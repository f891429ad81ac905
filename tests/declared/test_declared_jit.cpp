// The declared family through NVRTC, no GPU: parameters as -D definitions reach the program (a
// kernel that names block_size_x compiles only with it, and each value is its own kernel), the
// entry is found by its plain name, and a template entry is instantiated in params order.
#include <doctest/doctest.h>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/declaration.hpp"

using namespace gpuk;
using namespace gpuk::test;

namespace {

const char* kDefines = R"K(/* gpuk
family: kernel
sizes: [n]
params_as: defines
params:
  block_size_x: {default: 128, values: [64, 128]}
args:
  - {name: y, array: float32, length: n, role: out}
  - {name: n, scalar: int32, value: n}
launch:
  - {entry: fill, grid: "ceil_div(n, block_size_x)", block: block_size_x}
*/
#if block_size_x < 32
#error block_size_x is too small
#endif
extern "C" __global__ void fill(float* y, int n) {
  __shared__ float tile[block_size_x];
  const int i = blockIdx.x * block_size_x + threadIdx.x;
  tile[threadIdx.x] = i;
  if (i < n) y[i] = tile[threadIdx.x];
}
)K";

}  // namespace

TEST_CASE("params_as: defines compiles each variant with its -D definitions, found by the entry's plain name") {
  const auto file = std::make_shared<const KernelFile>(KernelFile::parse(kDefines, "kernel/fill.cu"));
  const Jit jit(JitOptions{"sm_90", {}, {}, false}, nullptr);
  for (const std::int64_t block : {64, 128}) {
    const Variant v(file, {}, {{"block_size_x", block}});
    const std::string name = v.name_expression(file->launches[0]);
    CHECK(name == "fill -Dblock_size_x=" + std::to_string(block));
    const CompiledKernels k = jit.compile(*file, {name});
    CHECK(k.lowered(name) == "fill");
    CHECK(!k.cubin.empty());
  }
  // Two variants' definitions never share one program.
  CHECK_THROWS_AS(jit.compile(*file, {"fill -Dblock_size_x=64", "fill -Dblock_size_x=128"}), Error);
  // The definitions are what the program sees: without them it does not compile.
  CHECK_THROWS_WITH_AS(jit.compile(*file, {"fill"}), doctest::Contains("block_size_x"), CompileError);
  CHECK_THROWS_WITH_AS(jit.compile(*file, {"fill -Dblock_size_x=16"}), doctest::Contains("block_size_x is too small"),
                       CompileError);
}

TEST_CASE("params_as: template instantiates the entry with the parameters in order; no parameters, a plain function") {
  const std::string text = std::string(R"K(/* gpuk
family: kernel
sizes: [n]
params:
  A: {default: 2, values: [1, 2]}
  B: {default: 3, values: [3]}
args:
  - {name: y, array: int32, length: n, role: out}
launch:
  - {entry: set, grid: 1, block: 32}
*/
template <int A, int B> __global__ void set(int* y) { y[threadIdx.x] = A * 10 + B; }
)K");
  const auto file = std::make_shared<const KernelFile>(KernelFile::parse(text, "kernel/set.cu"));
  const Jit jit(JitOptions{"sm_90", {}, {}, false}, nullptr);
  const Variant v(file, {}, {{"A", 1}});
  CHECK(v.name_expression(file->launches[0]) == "set<1, 3>");
  CHECK(!jit.compile(*file, {"set<1, 3>"}).cubin.empty());
}
