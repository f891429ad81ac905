#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "builtins.hpp"
#include "family_semantics.hpp"
#include "gpuk/error.hpp"
#include "reduce/reducer.hpp"

using namespace gpuk;

namespace {

using test::plugins;
using test::array;
using test::reducer;

}  // namespace

TEST_CASE("the reduce plugin loads from the plugin directory and describes itself") {
  CHECK(plugins().errors().empty());
  const FamilyPlugin& reduce = plugins().get("reduce");
  CHECK(reduce.operations() == std::vector<std::string>{"max", "min", "sum", "argmax", "argmin", "argminmax"});
  CHECK(reduce.default_kernel() == "onepass");
  std::vector<std::string> options;
  for (const auto& o : reduce.options()) options.push_back(o.name);
  CHECK(options == std::vector<std::string>{"abs", "segments", "segment_min", "segment_max", "segment_seed", "channels"});
}

TEST_CASE("asking for a family that has no plugin names the families there are") {
  CHECK_THROWS_WITH_AS(plugins().get("fft"), doctest::Contains("families found: kernel, reduce, search, sort"), ConfigError);
}

TEST_CASE("a shared library that is not a gpuk plugin is refused with a reason") {
  const test::TempDir dir;
  std::filesystem::copy_file(test::plugin_dir() / "libgpuk_family_reduce.so", dir.path() / "libgpuk_family_reduce.so");
  // Any shared library without gpuk_plugin_info: the C math library. (A copy of libgpuk_core
  // would load core twice, which AddressSanitizer rightly calls an ODR violation.)
  void* handle = dlopen("libm.so.6", RTLD_NOW);
  REQUIRE(handle != nullptr);
  Dl_info libm{};
  REQUIRE(dladdr(dlsym(handle, "cos"), &libm) != 0);
  std::filesystem::copy_file(libm.dli_fname, dir.path() / "libgpuk_family_bogus.so");
  const PluginRegistry registry({dir.path()});
  REQUIRE(registry.errors().size() == 1);
  CHECK(registry.errors()[0].find("not a gpuk plugin") != std::string::npos);
  CHECK(registry.find("reduce") != nullptr);
}

TEST_CASE("argmax returns the first of equal maxima") {
  const auto a = reducer().reduce_on_cpu(array<float>({1, 5, 3, 5, 5}), reduce::Op::argmax, false);
  CHECK(a.float_value == 5);
  CHECK(a.index == 1);
  const auto b = reducer().reduce_on_cpu(array<float>({4, -1, 2, -1}), reduce::Op::argmin, false);
  CHECK(b.index == 1);
}

TEST_CASE("a NaN wins, and the first NaN's index is returned") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (reduce::Op op : {reduce::Op::argmax, reduce::Op::argmin}) {
    const auto a = reducer().reduce_on_cpu(array<float>({1, nan, 9, nan}), op, false);
    CHECK(std::isnan(a.float_value));
    CHECK(a.index == 1);
  }
  CHECK(std::isnan(reducer().reduce_on_cpu(array<float>({1, nan, 9}), reduce::Op::max, false).float_value));
}

TEST_CASE("max of all-negative data is negative (the write-ups started at 0)") {
  CHECK(reducer().reduce_on_cpu(array<float>({-3, -1, -2}), reduce::Op::max, false).float_value == -1);
  CHECK(reducer().reduce_on_cpu(array<std::int32_t>({-3, -7}), reduce::Op::argmax, false).index == 0);
}

TEST_CASE("abs reduces |x|, and |INT_MIN| does not overflow") {
  const auto a = reducer().reduce_on_cpu(array<float>({0.5f, -0.9f, 0.7f}), reduce::Op::argmax, true);
  CHECK(a.float_value == doctest::Approx(0.9));
  CHECK(a.index == 1);
  const std::int32_t int_min = std::numeric_limits<std::int32_t>::min();
  const auto b = reducer().reduce_on_cpu(array<std::int32_t>({5, int_min, -7}), reduce::Op::argmax, true);
  CHECK(b.uint_value == 2147483648u);
  CHECK(b.index == 1);
}

TEST_CASE("int32 sums accumulate in 64 bits") {
  const std::int32_t big = std::numeric_limits<std::int32_t>::max();
  CHECK(reducer().reduce_on_cpu(array<std::int32_t>({big, big, 2}), reduce::Op::sum, false).int_value ==
        2 * std::int64_t{big} + 2);
}

TEST_CASE("the plugin spells the reduce policy for every operation, dtype and abs") {
  const KernelLibrary library({test::kernels_dir()});
  const auto file = library.find("reduce", "onepass");
  const auto sets = plugins().get("reduce").all_template_args(*file);
  CHECK(sets.size() == 6 * file->dtypes.size() * 2);  // argminmax too
  CHECK(std::find(sets.begin(), sets.end(),
                  std::vector<std::string>{"gpuk::Reduce<float, gpuk::ReduceOp::ArgMax, true>"}) != sets.end());
}

namespace {

// A family that does nothing, and one whose construction throws: what a plugin's create() meets.
struct Quiet : FamilyPlugin {
  std::string name() const override { return "quiet"; }
  std::string description() const override { return ""; }
  std::vector<std::string> operations() const override { return {}; }
  std::vector<DType> dtypes() const override { return {}; }
  std::vector<OptionSpec> options() const override { return {}; }
  std::string default_kernel() const override { return ""; }
  std::vector<std::string> template_args(const Problem&) const override { return {}; }
  std::vector<std::vector<std::string>> all_template_args(const KernelFile&) const override { return {}; }
  std::unique_ptr<Launcher> make_launcher(const Problem&) const override { return nullptr; }
  std::unique_ptr<Workload> make_workload(const Problem&, InputView) const override { return nullptr; }
};
struct Refuses : Quiet {
  Refuses() { throw ConfigError("the family's tables do not load"); }
};

}  // namespace

TEST_CASE("a plugin's create() stops an exception at the C edge and returns why as a value") {
  char why[64] = "untouched";
  FamilyPlugin* made = create_plugin<Quiet>(why, sizeof why);
  REQUIRE(made != nullptr);
  CHECK(made->name() == "quiet");
  CHECK(std::string(why) == "untouched");
  destroy_plugin(made);
  CHECK(create_plugin<Refuses>(why, sizeof why) == nullptr);
  CHECK(std::string(why) == "the family's tables do not load");
  char small[8];
  CHECK(create_plugin<Refuses>(small, sizeof small) == nullptr);
  CHECK(std::string(small) == "the fam");  // cut to the buffer, NUL-terminated
  CHECK(create_plugin<Refuses>(nullptr, 0) == nullptr);
}
