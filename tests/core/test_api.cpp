// The library API's argument errors, with the words a config's errors use, all before the GPU is
// touched: these run without one (tests/gpu/test_api_gpu.cpp runs the API itself).
#include <doctest/doctest.h>

#include "builtins.hpp"
#include "config/config.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/search.hpp"
#include "gpuk/sort.hpp"

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
std::string config_error(const std::string& yaml) {
  try {
    parse_run_spec(yaml, "c.yaml", test::plugins(), test::kernels());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

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
             config_error("family: reduce\noperation: argmx\nsize: 100\n"));
  CHECK(prepare_error(spec("reduce", "argmx", DType::float32, 100))
            .find("the reduce family has no operation 'argmx' (did you mean 'argmax'?)") == 0);
  OperationSpec abs = spec("reduce", "argmax", DType::float32, 100);
  abs.options["abz"] = "true";
  CHECK(prepare_error(abs).find("the reduce family has no option 'abz' (did you mean 'abs'?)") == 0);
  OperationSpec order = spec("sort", "sort", DType::uint32, 100);
  order.options["order"] = "sideways";
  same_words(prepare_error(order), config_error("family: sort\noperation: sort\nsize: 100\norder: sideways\n"));
  // n = 0, as `size: 0`.
  same_words(prepare_error(spec("reduce", "sum", DType::float32, 0)), config_error("family: reduce\noperation: sum\nsize: 0\n"));
  CHECK(prepare_error(spec("reduce", "sum", DType::float32, 0)) == "size must be at least 1, not 0");
  // A dtype the family lacks.
  same_words(prepare_error(spec("search", "find", DType::uint64, 100)),
             config_error("family: search\noperation: find\ndtype: uint64\nsize: 100\n"));
  CHECK(prepare_error(spec("search", "find", DType::uint64, 100)) ==
        "unsupported dtype 'uint64' (did you mean 'int64'?); the search family supports int32, uint32, int64, float32, "
        "float64");
  // A kernel that does not exist, with "did you mean"; a value its metadata does not allow.
  OperationSpec kernel = spec("reduce", "argmax", DType::float32, 100);
  kernel.kernel = "onepas";
  same_words(prepare_error(kernel), config_error("family: reduce\noperation: argmax\nkernel: onepas\nsize: 100\n"));
  CHECK(prepare_error(kernel).find("no reduce kernel named 'onepas' (did you mean 'onepass'?)") == 0);
  kernel.kernel = "onepass";
  kernel.params["BLOCK"] = 3;
  same_words(prepare_error(kernel),
             config_error("family: reduce\noperation: argmax\nkernel: onepass\nparams: {BLOCK: 3}\nsize: 100\n"));
  // The family's own check of its options.
  OperationSpec both = spec("search", "find", DType::int32, 100);
  both.options["value"] = "3";
  both.options["value_index"] = "4";
  same_words(prepare_error(both), config_error("family: search\noperation: find\nsize: 100\nvalue: 3\nvalue_index: 4\n"));
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

TEST_CASE("a call refuses n = 0, a dtype the family lacks and a kernel that does not exist, as prepare does") {
  const CUstream stream = nullptr;
  const auto input = reinterpret_cast<const std::uint64_t*>(0x1000);
  const auto result = reinterpret_cast<std::int64_t*>(0x2000);
  // Through the families' typed calls.
  CHECK_THROWS_WITH_AS(reduce::sum(engine(), reinterpret_cast<const float*>(0x1000), 0,
                                   reinterpret_cast<double*>(0x2000), stream),
                       "size must be at least 1, not 0", ConfigError);
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
