#include <doctest/doctest.h>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "kernel/kernel_file.hpp"

using namespace gpuk;

namespace {

const char* kTiny = R"(/* gpuk
family: reduce
operations: [max, argmax]
summary: a test kernel
params:
  BLOCK: {default: 256, values: [64, 128, 256, 512]}
  UNROLL: {default: 4, pow2: [1, 8]}
constraints:
  - BLOCK * UNROLL <= 2048
launch:
  - entry: tiny
    grid: min(ceil_div(n, BLOCK * UNROLL), sm_count * 2)
    block: BLOCK
scratch: sm_count * 2
*/
template <class R, int BLOCK, int UNROLL>
__global__ void tiny(const typename R::T* in, long long n) {}
)";

using test::replace;

std::string kernel_error_of(const std::string& source, const std::string& name = "k.cu") {
  try {
    KernelFile::parse(source, name);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the metadata block names family, operations, parameters and launches") {
  const KernelFile k = KernelFile::parse(kTiny, "dir/tiny.cu");
  CHECK(k.name == "tiny");
  CHECK(k.family == "reduce");
  CHECK(k.supports("argmax"));
  CHECK_FALSE(k.supports("sum"));
  REQUIRE(k.params.size() == 2);
  CHECK(k.params[0].name == "BLOCK");
  CHECK(k.params[1].values == std::vector<std::int64_t>{1, 2, 4, 8});
  CHECK(k.params[1].line == 7);
  REQUIRE(k.launches.size() == 1);
  CHECK(k.launches[0].entry == "tiny");
  CHECK(k.dtypes.size() == all_dtypes().size());
}

TEST_CASE("a kernel file without a metadata block is refused at line 1") {
  const std::string e = kernel_error_of("__global__ void k() {}\n", "kernels/x.cu");
  CHECK(e.find("kernels/x.cu:1:1:") == 0);
  CHECK(e.find("metadata block") != std::string::npos);
}

TEST_CASE("metadata errors name the kernel file's own line and column") {
  // 'familly' sits on line 2 of the file, column 1.
  const std::string e = kernel_error_of(replace(kTiny, "family:", "familly:"));
  CHECK(e.find("k.cu:2:1: unknown key 'familly'") == 0);
  CHECK(e.find("did you mean 'family'") != std::string::npos);

  const std::string bad_default = kernel_error_of(replace(kTiny, "default: 256", "default: 100"));
  CHECK(bad_default.find("k.cu:6:") == 0);
  CHECK(bad_default.find("not among its allowed values") != std::string::npos);

  const std::string bad_expr = kernel_error_of(replace(kTiny, "block: BLOCK", "block: BLOCK *"));
  CHECK(bad_expr.find("k.cu:13:") == 0);

  const std::string no_entry = kernel_error_of(replace(kTiny, "entry: tiny", "entry: tinny"));
  CHECK(no_entry.find("not defined in this file") != std::string::npos);

  CHECK(kernel_error_of(replace(kTiny, "*/", "")).find("not closed") != std::string::npos);
  CHECK(kernel_error_of(replace(kTiny, "operations: [max, argmax]", "operations: [max, argmax")).find("not valid YAML") !=
        std::string::npos);
}

TEST_CASE("a variant fills defaults and spells its NVRTC name expression") {
  auto k = std::make_shared<const KernelFile>(KernelFile::parse(kTiny, "tiny.cu"));
  const Variant v(k, {"gpuk::Reduce<float, gpuk::ReduceOp::ArgMax, true>"}, {{"UNROLL", 2}});
  CHECK(v.name_expression(k->launches[0]) == "tiny<gpuk::Reduce<float, gpuk::ReduceOp::ArgMax, true>, 256, 2>");
  CHECK(v.label() == "tiny BLOCK=256 UNROLL=2");
}

TEST_CASE("a parameter value the metadata does not allow is refused, with the allowed values") {
  auto k = std::make_shared<const KernelFile>(KernelFile::parse(kTiny, "tiny.cu"));
  CHECK_THROWS_WITH_AS(Variant(k, {}, {{"BLOCK", 100}}), doctest::Contains("allows 64, 128, 256, 512"), ConfigError);
  CHECK_THROWS_WITH_AS(Variant(k, {}, {{"BLOK", 64}}), doctest::Contains("did you mean 'BLOCK'"), ConfigError);
}

TEST_CASE("constraints between parameters rule variants out") {
  auto k = std::make_shared<const KernelFile>(KernelFile::parse(kTiny, "tiny.cu"));
  CHECK_NOTHROW(Variant(k, {}, {{"BLOCK", 256}, {"UNROLL", 8}}));
  CHECK_THROWS_WITH_AS(Variant(k, {}, {{"BLOCK", 512}, {"UNROLL", 8}}), doctest::Contains("BLOCK * UNROLL <= 2048"),
                       ConfigError);
}

TEST_CASE("launch geometry follows n and the device") {
  auto k = std::make_shared<const KernelFile>(KernelFile::parse(kTiny, "tiny.cu"));
  const Variant v(k, {"R"}, {});
  // 250,000 elements in tiles of 1024: 245 tiles, capped at 132 SMs x 2.
  LaunchPlan plan = plan_launches(v, {250000, 132, 4, 1024, 48 * 1024});
  CHECK(plan.launches[0].grid == 245);
  CHECK(plan.launches[0].block == 256);
  CHECK(plan.scratch_slots == 264);
  plan = plan_launches(v, {std::int64_t{1} << 28, 132, 4, 1024, 48 * 1024});
  CHECK(plan.launches[0].grid == 264);
  // A block the device cannot run is refused with the device's limit.
  CHECK_THROWS_WITH_AS(plan_launches(v, {1000, 132, 4, 128, 48 * 1024}), doctest::Contains("1 to 128 threads"),
                       ConfigError);
}

TEST_CASE("every built-in kernel file parses, and each family's files are found") {
  const KernelLibrary library({test::kernels_dir()});
  for (const auto& e : library.errors()) FAIL_CHECK(e);
  const auto reduce = library.family("reduce");
  CHECK(reduce.size() >= 7);
  for (const char* name : {"single_thread", "block_atomic", "shared_atomic", "block_partials", "warp_shuffle",
                           "vecmax_tree", "onepass"})
    CHECK_NOTHROW(library.find("reduce", name));
  CHECK_THROWS_WITH_AS(library.find("reduce", "onepas"), doctest::Contains("did you mean 'onepass'"), ConfigError);
}

TEST_CASE("a kernel file dropped into an extra directory is picked up and shadows a built-in one") {
  const test::TempDir dir;
  dir.write("mine/tiny.cu", kTiny);
  dir.write("mine/onepass.cu", replace(kTiny, "summary: a test kernel", "summary: my own onepass"));
  const KernelLibrary library({test::kernels_dir(), dir.path()});
  CHECK(library.find("reduce", "tiny")->summary == "a test kernel");
  CHECK(library.find("reduce", "onepass")->summary == "my own onepass");
  CHECK(library.include_dirs().size() == 1);  // only kernels_src/ has an include/ folder
}

TEST_CASE("a broken drop-in file is reported, and the others still load") {
  const test::TempDir dir;
  dir.write("broken.cu", "/* gpuk\nfamily: reduce\n*/\n__global__ void k() {}\n");
  dir.write("tiny.cu", kTiny);
  const KernelLibrary library({dir.path()});
  REQUIRE(library.errors().size() == 1);
  CHECK(library.errors()[0].find("broken.cu:2:1") != std::string::npos);
  CHECK_NOTHROW(library.find("reduce", "tiny"));
  CHECK_THROWS_WITH_AS(library.find("reduce", "broken"), doctest::Contains("has no 'operations'"), ConfigError);
}

TEST_CASE("a drop-in file without a metadata block is plain CUDA: kept, found only to be declared") {
  const test::TempDir dir;
  dir.write("plain.cu", "__global__ void k() {}\n");
  const KernelLibrary library({dir.path()});
  CHECK(library.errors().empty());
  CHECK_THROWS_WITH_AS(library.find("reduce", "plain"), doctest::Contains("plain.cu:1:1: a kernel file must start with its metadata block"), ConfigError);
  CHECK(library.find_declarable("kernel", "plain")->plain);
}
