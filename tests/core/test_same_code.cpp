// Which template parameters an entry's code cannot depend on (jit/same_code.hpp): read from the
// source, conservatively. tests/jit/test_same_code_jit.cpp shows the machine code is the same.
#include <doctest/doctest.h>

#include "helpers.hpp"
#include "jit/same_code.hpp"
#include "kernel/kernel_file.hpp"

using namespace gpuk;

namespace {

// GRID only shapes the launch; UNROLL is used in the body; BLOCK in __launch_bounds__.
const char* kMeta = R"(/* gpuk
family: reduce
operations: [max]
params:
  BLOCK: {default: 256, values: [128, 256]}
  UNROLL: {default: 4, values: [1, 4]}
  GRID: {default: 64, values: [32, 64, 128]}
launch:
  - entry: k
    grid: GRID
    block: BLOCK
*/
)";

KernelFile file_of(const std::string& code) { return KernelFile::parse(std::string(kMeta) + code, "k.cu"); }

const std::string kR = "gpuk::Reduce<float, gpuk::ReduceOp::Max, false>";

std::vector<std::string> unused_of(const std::string& code) { return SameCode(file_of(code)).unused("k"); }

}  // namespace

TEST_CASE("a parameter the entry's code never names is unused; its argument becomes the default") {
  const KernelFile f = file_of(R"(
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void __launch_bounds__(BLOCK) k(float* out) {
  // GRID is only in this comment
  for (int u = 0; u < UNROLL; ++u) out[u] = 0;
}
)");
  const SameCode same(f);
  CHECK(same.unused("k") == std::vector<std::string>{"GRID"});
  CHECK(same.canonical("k<" + kR + ", 128, 1, 32>") == "k<" + kR + ", 128, 1, 64>");
  CHECK(same.canonical("k<" + kR + ", 128, 1, 64>") == "k<" + kR + ", 128, 1, 64>");
  CHECK(same.unused("other").empty());
  CHECK(same.canonical("other<" + kR + ", 128, 1, 32>") == "other<" + kR + ", 128, 1, 32>");

  const SharedNames s = shared_names(same, {"k<" + kR + ", 128, 1, 32>", "k<" + kR + ", 128, 1, 128>",
                                            "k<" + kR + ", 256, 1, 32>"});
  CHECK(s.renamed);
  CHECK(s.compile == std::vector<std::string>{"k<" + kR + ", 128, 1, 64>", "k<" + kR + ", 256, 1, 64>"});
  CHECK(s.at == std::vector<std::size_t>{0, 0, 1});
}

TEST_CASE("a parameter named anywhere in the entry's declarator or body is used") {
  CHECK(unused_of(R"(
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void __launch_bounds__(BLOCK, GRID) k(float* out) { out[0] = UNROLL; }
)").empty());
  // in a helper's template arguments, a pragma, a nested lambda
  CHECK(unused_of(R"(
template <int G> __device__ int helper() { return G; }
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void k(float* out) {
#pragma unroll UNROLL
  for (int i = 0; i < 4; ++i) out[i] = [] { return helper<GRID>() + BLOCK; }();
}
)").empty());
}

TEST_CASE("the entry's own names count, not the metadata's, and an unnamed parameter is unused") {
  CHECK(unused_of(R"(
template <class R, int B, int U, int G>
__global__ void k(float* out) { out[0] = B + U + GRID_SIZE; }
)") == std::vector<std::string>{"GRID"});
  CHECK(unused_of(R"(
template <class R, int BLOCK, int UNROLL, int>
__global__ void k(float* out) { out[0] = BLOCK + UNROLL; }
)") == std::vector<std::string>{"GRID"});
}

TEST_CASE("nothing is dropped where a macro could carry the name, or the code could hold the function's name") {
  // A #define that names it (the body uses the macro, not the parameter).
  CHECK(unused_of(R"(
#define BLOCKS_OF_GRID (GRID * 2)
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void k(float* out) { out[0] = BLOCK + UNROLL + BLOCKS_OF_GRID; }
)").empty());
  // __PRETTY_FUNCTION__ (or assert, which prints it) holds every template argument.
  CHECK(unused_of(R"(
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void k(float* out) { out[0] = BLOCK + UNROLL + sizeof(__PRETTY_FUNCTION__); }
)").empty());
  CHECK(unused_of(R"(
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void k(float* out) { assert(BLOCK > UNROLL); }
)").empty());
  // A header that cannot be read: its macros are unknown (a file parsed on its own has no include path).
  CHECK(unused_of(R"(
#include "gpuk/reduce.cuh"
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void k(float* out) { out[0] = BLOCK + UNROLL; }
)").empty());
}

TEST_CASE("nothing is dropped from an entry declared twice, specialised, or written with a pack") {
  CHECK(unused_of(R"(
template <class R, int BLOCK, int UNROLL, int GRID> __global__ void k(float* out);
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void k(float* out) { out[0] = BLOCK + UNROLL; }
)").empty());
  CHECK(unused_of(R"(
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void k(float* out) { out[0] = BLOCK + UNROLL; }
template <> __global__ void k<float, 1, 1, 1>(float* out) { out[0] = 1; }
)").empty());
  CHECK(unused_of(R"(
template <class R, int BLOCK, int... REST>
__global__ void k(float* out) { out[0] = BLOCK; }
)").empty());
  // A name expression with another argument count than the template has is left as it is.
  const KernelFile f = file_of(R"(
template <class R, int BLOCK, int UNROLL, int GRID>
__global__ void k(float* out) { out[0] = BLOCK + UNROLL; }
)");
  CHECK(SameCode(f).canonical("k<128, 1, 32>") == "k<128, 1, 32>");
}

TEST_CASE("the built-in kernels: launch-shape parameters are unused where only the grid reads them") {
  const KernelLibrary kernels{{test::kernels_dir()}};
  const auto onepass = kernels.find("reduce", "onepass");
  CHECK(SameCode(*onepass).unused("reduce_onepass") == (std::vector<std::string>{"BLOCKS_PER_SM", "WAVES"}));
  const auto radix = kernels.find("sort", "radix");
  const SameCode same(*radix);
  CHECK(same.unused("radix_histogram") == std::vector<std::string>{"SMALL", "MIN_BLOCKS", "VLOAD"});
  CHECK(same.unused("radix_pass") == std::vector<std::string>{"SMALL"});
  // block_partials' GRID is its grid-stride step: used.
  CHECK(SameCode(*kernels.find("reduce", "block_partials")).unused("reduce_block_partials").empty());
}
