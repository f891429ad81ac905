// The library API's argument errors, with the words a config's errors use, all before the GPU is
// touched: these run without one (tests/gpu/test_api_gpu.cpp runs the API itself).
#include <doctest/doctest.h>

#include "api/engine_internals.hpp"
#include "builtins.hpp"
#include "config/config.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/search.hpp"
#include "gpuk/sort.hpp"

#include <string>
#include <type_traits>

using namespace gpuk;

namespace {

Engine& engine() {
  static Engine e;  // the CLI's defaults: built-in kernels and plugins ($GPUK_KERNELS/PLUGINS are empty in tests)
  return e;
}

OperationSpec spec(const std::string& family, const std::string& operation, DType dtype, std::uint64_t n) {
  OperationSpec s;
  s.family = family;
  s.operation = operation;
  s.dtype = dtype;
  s.n = n;
  return s;
}

std::string prepare_error(const OperationSpec& s) {
  try {
    (void)engine().prepare(s);
  } catch (const NoDeviceError& e) {
    return "";  // valid: it got as far as the GPU
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The error the config reader gives for the same mistake.
using test::run_config_error;

// The API's message, found in the config's (which adds "c.yaml:L:C: ").
void same_words(const std::string& api, const std::string& config) {
  CAPTURE(api);
  CAPTURE(config);
  REQUIRE_FALSE(api.empty());
  CHECK(config.find(api) != std::string::npos);
}

}  // namespace

TEST_CASE("prepare refuses what a config would refuse, with the same words, before it needs a GPU") {
  // An unknown family, operation, option; a value an option does not allow.
  CHECK(prepare_error(spec("reduc", "argmax", DType::float32, 100)).find("no plugin for family 'reduc' (did you mean "
                                                                          "'reduce'?)") == 0);
  same_words(prepare_error(spec("reduce", "argmx", DType::float32, 100)),
             run_config_error("family: reduce\noperation: argmx\nsize: 100\n"));
  CHECK(prepare_error(spec("reduce", "argmx", DType::float32, 100))
            .find("the reduce family has no operation 'argmx' (did you mean 'argmax'?)") == 0);
  OperationSpec abs = spec("reduce", "argmax", DType::float32, 100);
  abs.options["abz"] = "true";
  CHECK(prepare_error(abs).find("the reduce family has no option 'abz' (did you mean 'abs'?)") == 0);
  OperationSpec order = spec("sort", "sort", DType::uint32, 100);
  order.options["order"] = "sideways";
  same_words(prepare_error(order), run_config_error("family: sort\noperation: sort\nsize: 100\norder: sideways\n"));
  // n = 0, as `size: 0`.
  same_words(prepare_error(spec("reduce", "sum", DType::float32, 0)), run_config_error("family: reduce\noperation: sum\nsize: 0\n"));
  CHECK(prepare_error(spec("reduce", "sum", DType::float32, 0)) == "size must be at least 1, not 0");
  // A dtype the family lacks.
  same_words(prepare_error(spec("search", "find", DType::uint64, 100)),
             run_config_error("family: search\noperation: find\ndtype: uint64\nsize: 100\n"));
  CHECK(prepare_error(spec("search", "find", DType::uint64, 100)) ==
        "unsupported dtype 'uint64' (did you mean 'int64'?); the search family supports int32, uint32, int64, float32, "
        "float64");
  // A kernel that does not exist, with "did you mean"; a value its metadata does not allow.
  OperationSpec kernel = spec("reduce", "argmax", DType::float32, 100);
  kernel.kernel = "onepas";
  same_words(prepare_error(kernel), run_config_error("family: reduce\noperation: argmax\nkernel: onepas\nsize: 100\n"));
  CHECK(prepare_error(kernel).find("no reduce kernel named 'onepas' (did you mean 'onepass'?)") == 0);
  kernel.kernel = "onepass";
  kernel.params["BLOCK"] = 3;
  same_words(prepare_error(kernel),
             run_config_error("family: reduce\noperation: argmax\nkernel: onepass\nparams: {BLOCK: 3}\nsize: 100\n"));
  // The family's own check of its options.
  OperationSpec both = spec("search", "find", DType::int32, 100);
  both.options["value"] = "3";
  both.options["value_index"] = "4";
  same_words(prepare_error(both), run_config_error("family: search\noperation: find\nsize: 100\nvalue: 3\nvalue_index: 4\n"));
}

TEST_CASE("a call's arrays are checked before anything is prepared: their count and null pointers") {
  const CUstream stream = nullptr;
  const OperationSpec argmax = spec("reduce", "argmax", DType::float32, 1000);
  const CUdeviceptr one[] = {0x1000};
  CHECK_THROWS_WITH_AS(engine().launch(argmax, one, stream),
                       "reduce argmax takes 2 arrays (input, result), not 1", ConfigError);
  const CUdeviceptr null_input[] = {0, 0x1000};
  CHECK_THROWS_WITH_AS(engine().launch(argmax, null_input, stream),
                       "reduce argmax: array 'input' is a null device pointer", ConfigError);
  const CUdeviceptr null_result[] = {0x1000, 0};
  CHECK_THROWS_WITH_AS(engine().launch(argmax, null_result, stream),
                       "reduce argmax: array 'result' is a null device pointer", ConfigError);
  OperationSpec zero = argmax;
  zero.n = 0;
  CHECK_THROWS_WITH_AS(engine().launch(zero, null_result, stream), "size must be at least 1, not 0", ConfigError);

  // The families' typed calls say the same.
  reduce::Best<float>* no_result = nullptr;
  CHECK_THROWS_WITH_AS(reduce::argmax(engine(), static_cast<const float*>(nullptr), 1000, no_result, stream),
                       "reduce argmax: array 'input' is a null device pointer", ConfigError);
  CHECK_THROWS_WITH_AS(search::find(engine(), reinterpret_cast<const int*>(0x1000), 1000, 7,
                                    static_cast<std::int64_t*>(nullptr), stream),
                       "search find: array 'result' is a null device pointer", ConfigError);
  CHECK_THROWS_WITH_AS(sort::pairs(engine(), reinterpret_cast<const float*>(0x1000), reinterpret_cast<float*>(0x2000),
                                   static_cast<const std::uint32_t*>(nullptr), reinterpret_cast<std::uint32_t*>(0x3000),
                                   1000, stream),
                       "sort sort_pairs: array 'values_in' is a null device pointer", ConfigError);
  // argsort's index type follows the size bucket: uint32 up to 2^32.
  CHECK_THROWS_WITH_AS(sort::argsort(engine(), reinterpret_cast<const float*>(0x1000), reinterpret_cast<float*>(0x2000),
                                     reinterpret_cast<std::uint64_t*>(0x3000), 1000, stream),
                       doctest::Contains("argsort of n = 1000 writes uint32 indices"), ConfigError);
}

TEST_CASE("a call refuses a dtype the family lacks and a kernel that does not exist, as prepare does") {
  const CUstream stream = nullptr;
  const auto input = reinterpret_cast<const std::uint64_t*>(0x1000);
  const auto result = reinterpret_cast<std::int64_t*>(0x2000);
  // Through the families' typed calls.
  CHECK_THROWS_WITH_AS(search::find(engine(), input, 100, std::uint64_t{7}, result, stream),
                       "unsupported dtype 'uint64' (did you mean 'int64'?); the search family supports int32, uint32, "
                       "int64, float32, float64",
                       ConfigError);
  CHECK_THROWS_WITH_AS((void)search::find(engine(), input, 100, std::uint64_t{7}, stream),
                       doctest::Contains("unsupported dtype 'uint64'"), ConfigError);
  // Through Engine::launch, with a kernel named.
  OperationSpec named = spec("reduce", "argmax", DType::float32, 100);
  named.kernel = "onepas";
  const CUdeviceptr arrays[] = {0x1000, 0x2000};
  CHECK_THROWS_WITH_AS(engine().launch(named, arrays, stream),
                       doctest::Contains("no reduce kernel named 'onepas' (did you mean 'onepass'?)"), ConfigError);
  // Engine::launch itself still refuses n = 0, as `size: 0`: only the typed calls make it a no-op.
  OperationSpec zero = spec("reduce", "sum", DType::float32, 0);
  CHECK_THROWS_WITH_AS(engine().launch(zero, arrays, stream), "size must be at least 1, not 0", ConfigError);
}

TEST_CASE("a typed call of n = 0 launches nothing, throws nothing and prepares nothing (as CUB and Thrust)") {
  const CUstream stream = nullptr;
  const Engine fresh;  // const: every typed call takes a const Engine&
  const auto f = reinterpret_cast<const float*>(0x1000);
  const auto u = reinterpret_cast<const std::uint32_t*>(0x1000);
  // Into device memory: nothing is written, so even null outputs are not looked at.
  reduce::argmax(fresh, f, static_cast<reduce::Best<float>*>(nullptr), 0, stream);
  reduce::sum(fresh, f, static_cast<double*>(nullptr), 0, stream);
  reduce::sum(fresh, f, 0, static_cast<double*>(nullptr), stream);  // the older order
  search::count(fresh, u, static_cast<std::int64_t*>(nullptr), 0, 42, stream);
  sort::keys(fresh, f, static_cast<float*>(nullptr), 0, stream);
  sort::pairs(fresh, f, static_cast<float*>(nullptr), static_cast<const int*>(nullptr), static_cast<int*>(nullptr), 0,
              stream);
  sort::argsort(fresh, f, static_cast<float*>(nullptr), static_cast<std::uint32_t*>(nullptr), 0, stream);
  // To the host: the empty input's answer.
  CHECK(reduce::argmax(fresh, f, 0, stream).index == -1);
  CHECK(reduce::argmin(fresh, f, 0, stream).index == -1);
  CHECK(reduce::max(fresh, f, 0, stream).index == -1);
  CHECK(reduce::min(fresh, f, 0, stream).index == -1);
  CHECK(reduce::sum(fresh, f, 0, stream) == 0.0);
  CHECK(search::find(fresh, u, 0, 42, stream) == -1);
  CHECK(search::any(fresh, u, 0, 42, stream) == -1);
  CHECK(search::count(fresh, u, 0, 42, stream) == 0);
  CHECK(fresh.cached_operations() == 0);
  CHECK(fresh.cached_bytes() == 0);
}

TEST_CASE("typed calls: one argument order, typed pointers, a search value of the input's type") {
  const CUstream stream = nullptr;
  const auto u = reinterpret_cast<const std::uint32_t*>(0x1000);
  const auto f = reinterpret_cast<const float*>(0x1000);
  // find(e, d_u32, ..., 42, ...): 42 is an int, converted to uint32 (T is deduced from d_in only).
  static_assert(std::is_same_v<decltype(search::find(engine(), u, 0, 42, stream)), std::int64_t>);
  // Device arrays first (inputs, outputs), then n, then the value, then the stream: the older
  // orders are kept beside it. Null outputs are named before anything is prepared.
  CHECK_THROWS_WITH_AS(search::find(engine(), u, static_cast<std::int64_t*>(nullptr), 100, 42, stream),
                       "search find: array 'result' is a null device pointer", ConfigError);
  CHECK_THROWS_WITH_AS(reduce::max(engine(), f, static_cast<reduce::Best<float>*>(nullptr), 100, stream),
                       "reduce max: array 'result' is a null device pointer", ConfigError);
  // A braced list of typed pointers where CUdeviceptr was needed.
  const auto best = reinterpret_cast<reduce::Best<float>*>(0x2000);
  CHECK_THROWS_WITH_AS(engine().launch(spec("reduce", "argmax", DType::float32, 100), {f, best, best}, stream),
                       "reduce argmax takes 2 arrays (input, result), not 3", ConfigError);
  CHECK_THROWS_WITH_AS(engine().launch(spec("reduce", "argmax", DType::float32, 100), {nullptr, best}, stream),
                       "reduce argmax: array 'input' is a null device pointer", ConfigError);
  CHECK_THROWS_WITH_AS(engine().launch(spec("reduce", "argmax", DType::float32, 100), {f, 0}, stream),
                       "reduce argmax: array 'result' is a null device pointer", ConfigError);
  // A pair's values are any trivially copyable 4- or 8-byte type, carried as uint32 / uint64.
  CHECK(std::string(sort::detail::value_name<int>()) == "uint32");
  CHECK(std::string(sort::detail::value_name<float>()) == "uint32");
  CHECK(std::string(sort::detail::value_name<double>()) == "uint64");
  CHECK_THROWS_WITH_AS(sort::pairs(engine(), f, reinterpret_cast<float*>(0x2000), static_cast<const int*>(nullptr),
                                   reinterpret_cast<int*>(0x3000), 1000, stream),
                       "sort sort_pairs: array 'values_in' is a null device pointer", ConfigError);
}

// What is refused at compile time: tests/api/compile_fail/ (ctest -R gpuk_compile_fail) checks
// the messages; here, the traits they rest on.
static_assert(is_dtype_v<int> && is_dtype_v<unsigned> && is_dtype_v<long> && is_dtype_v<unsigned long long> &&
              is_dtype_v<float> && is_dtype_v<double>);
static_assert(!is_dtype_v<bool> && !is_dtype_v<char> && !is_dtype_v<short> && !is_dtype_v<long double> &&
              !is_dtype_v<reduce::Best<float>>);
static_assert(dtype_of<long long>() == DType::int64 && dtype_of<unsigned long>() == DType::uint64 &&
              dtype_of<int>() == DType::int32 && dtype_of<const float>() == DType::float32);
static_assert(std::is_nothrow_move_constructible_v<Engine> && std::is_nothrow_move_assignable_v<Engine> &&
              !std::is_copy_constructible_v<Engine>);

TEST_CASE("an Engine moves: the moved-to one works, the moved-from one may be assigned") {
  Engine a;
  Engine b(std::move(a));
  const CUdeviceptr one[] = {0x1000};
  CHECK_THROWS_WITH_AS(b.launch(spec("reduce", "argmax", DType::float32, 1000), one, nullptr),
                       "reduce argmax takes 2 arrays (input, result), not 1", ConfigError);
  a = std::move(b);
  CHECK_FALSE(EngineInternals::plugins(a).names().empty());
}

TEST_CASE("a prepared handle checks its spec before the GPU; one of max_n = 0 serves n = 0 only") {
  const CUstream stream = nullptr;
  // max_n = 0: nothing is prepared (no GPU needed); n = 0 does nothing, a larger n is refused.
  auto none = sort::prepare_pairs<float, std::uint32_t>(engine(), 0);
  CHECK(none.max_n() == 0);
  CHECK(none.scratch_bytes() == 0);
  const auto k = reinterpret_cast<const float*>(0x1000);
  const auto ko = reinterpret_cast<float*>(0x2000);
  const auto v = reinterpret_cast<const std::uint32_t*>(0x3000);
  const auto vo = reinterpret_cast<std::uint32_t*>(0x4000);
  none(k, ko, v, vo, 0, stream);
  CHECK_THROWS_WITH_AS(none(k, ko, v, vo, 5, stream),
                       "sort sort_pairs was prepared for n up to 0; n = 5 needs a handle prepared for it", ConfigError);
  auto amax = reduce::prepare_argmax<float>(engine(), 0);
  CHECK(amax(k, 0, stream).index == -1);
  auto find = search::prepare_find<std::int32_t>(engine(), 0);
  CHECK(find(reinterpret_cast<const std::int32_t*>(0x1000), 0, 7, stream) == -1);
  // The spec is checked as prepare() checks it, before the GPU.
  CHECK_THROWS_WITH_AS((void)search::prepare_count<std::uint64_t>(engine(), 1000),
                       doctest::Contains("unsupported dtype 'uint64'"), ConfigError);
  OperationSpec bad = spec("reduce", "argmx", DType::float32, 1000);
  CHECK_THROWS_WITH_AS((void)engine().prepare_sizes(bad), doctest::Contains("has no operation 'argmx'"), ConfigError);
  std::string why;
  if (device_count(&why) == 0)
    CHECK_THROWS_AS((void)sort::prepare_keys<std::uint32_t>(engine(), 1 << 20), NoDeviceError);
}

TEST_CASE("the Engine's cache of typed calls' Operations: empty without a GPU, released on demand") {
  Engine e;
  CHECK(e.cached_operations() == 0);
  CHECK(e.cached_bytes() == 0);
  std::string why;
  if (device_count(&why) == 0) {
    // A call that got as far as the GPU and failed there holds nothing.
    CHECK_THROWS_AS(reduce::argmax(e, reinterpret_cast<const float*>(0x1000),
                                   reinterpret_cast<reduce::Best<float>*>(0x2000), 1000, nullptr),
                    NoDeviceError);
    CHECK(e.cached_operations() == 0);
  }
  e.release_cached();  // nothing cached: touches no GPU
  CHECK(e.cached_bytes() == 0);
}

TEST_CASE("the sizes an Operation serves: n's power-of-two bucket") {
  CHECK(bucket_first(1) == 1);
  CHECK(bucket_last(1) == 1);
  CHECK(bucket_first(1000) == 512);
  CHECK(bucket_last(1000) == 1023);
  CHECK(bucket_first(4096) == 4096);
  CHECK(bucket_last(4096) == 8191);
  CHECK(bucket_last(~std::uint64_t{0}) == ~std::uint64_t{0});
}

TEST_CASE("without a GPU, a valid prepare fails with the CLI's one sentence") {
  std::string why;
  if (device_count(&why) > 0) {
    MESSAGE("this machine has a GPU: the no-GPU message cannot be checked here");
    return;
  }
  CHECK_THROWS_WITH_AS((void)engine().prepare(spec("reduce", "argmax", DType::float32, 1000)),
                       doctest::Contains("needs an NVIDIA GPU"), NoDeviceError);
}
