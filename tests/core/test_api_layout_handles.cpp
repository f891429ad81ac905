// Prepared segmented and per-channel reductions without a GPU: what is checked before the GPU
// (tests/gpu/test_api_handles_gpu.cpp runs them on one).
#include <doctest/doctest.h>

#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"

using namespace gpuk;

namespace {
const Engine& handles_engine() {
  static const Engine e;
  return e;
}
bool no_gpu() {
  std::string why;
  return device_count(&why) == 0;
}
const auto x = reinterpret_cast<const float*>(0x1000);
const auto offsets = reinterpret_cast<const std::int64_t*>(0x2000);
const auto best = reinterpret_cast<reduce::Best<float>*>(0x3000);
}  // namespace

TEST_CASE("a segmented handle of max_segments = 0 prepares nothing and answers no segments") {
  auto none = reduce::prepare_segmented_argmax<float>(handles_engine(), 1000, 0);
  CHECK(none.max_segments() == 0);
  CHECK(none.scratch_bytes() == 0);
  CHECK(none.held_bytes() == 0);
  CHECK(none.sizes().operations().empty());
  none(x, offsets, best, 1000, 0, nullptr);  // segments = 0: nothing
  CHECK_THROWS_WITH_AS(none(x, offsets, best, 1000, 3, nullptr),
                       "this segmented reduction was prepared for up to 0 segments; 3 need a handle prepared for them",
                       ConfigError);
}

TEST_CASE("a per-channel handle of max_pixels = 0 prepares nothing; more pixels are refused") {
  auto none = reduce::prepare_per_channel_sum<std::int32_t>(handles_engine(), 0, 17, Scratch::caller);
  CHECK(none.channels() == 17);
  CHECK(none.max_pixels() == 0);
  CHECK(none.scratch_bytes() == 0);
  none(reinterpret_cast<const std::int32_t*>(0x1000), reinterpret_cast<std::int64_t*>(0x2000), 0, nullptr);
  CHECK_THROWS_WITH_AS(none(reinterpret_cast<const std::int32_t*>(0x1000), reinterpret_cast<std::int64_t*>(0x2000), 1,
                            nullptr),
                       "this per-channel reduction was prepared for up to 0 pixels; 1 need a handle prepared for them",
                       ConfigError);
}

TEST_CASE("segmented and per-channel handles check their shape before the GPU, with the config's words") {
  CHECK_THROWS_WITH_AS((void)reduce::prepare_per_channel_argmax<float>(handles_engine(), 100, 0),
                       doctest::Contains("channels must be between 1 and 1024, not 0"), ConfigError);
  CHECK_THROWS_WITH_AS((void)reduce::prepare_per_channel_argmax<float>(handles_engine(), 100, 1025),
                       doctest::Contains("channels must be between 1 and 1024, not 1025"), ConfigError);
  CHECK_THROWS_WITH_AS((void)reduce::prepare_per_channel_max<double>(handles_engine(), ~std::uint64_t{0} / 2, 17),
                       "max_pixels * channels overflows 64 bits", ConfigError);
  CHECK_THROWS_WITH_AS((void)reduce::prepare_segmented_sum<float>(handles_engine(), 1000, std::uint64_t{1} << 31),
                       doctest::Contains("segments must be between 1 and 2147483647, not 2147483648"), ConfigError);
  if (no_gpu()) {
    CHECK_THROWS_AS((void)reduce::prepare_segmented_argmax<float>(handles_engine(), 1 << 20, 1000), NoDeviceError);
    CHECK_THROWS_AS((void)reduce::prepare_per_channel_argmax<float>(handles_engine(), 480 * 640, 17), NoDeviceError);
  }
}

TEST_CASE("prepare_sizes with a step: n's that are not multiples are refused; a step of 0 is refused") {
  OperationSpec spec;
  spec.family = "reduce";
  spec.operation = "argmax";
  spec.n = 16;  // below step: no bucket holds a multiple of 17 up to 16
  spec.options = {{"channels", "17"}};
  PreparedSizes none = handles_engine().prepare_sizes(spec, 17);
  CHECK(none.step() == 17);
  CHECK(none.operations().empty());
  none.launch({x, best}, 0, nullptr);
  CHECK_THROWS_WITH_AS(none.launch({x, best}, 17, nullptr),
                       "reduce argmax was prepared for n up to 16; n = 17 needs a handle prepared for it", ConfigError);
  spec.n = 0;
  PreparedSizes zero = handles_engine().prepare_sizes(spec, 17);
  CHECK_THROWS_WITH_AS(zero.launch({x, best}, 5, nullptr),
                       "reduce argmax was prepared for n up to 0; n = 5 needs a handle prepared for it", ConfigError);
  spec.options.clear();
  CHECK_THROWS_WITH_AS((void)handles_engine().prepare_sizes(spec, 0), "prepare_sizes: step must be at least 1, not 0",
                       ConfigError);
  // The spec is checked at n = step: channels that do not divide it are the config's error.
  spec.options = {{"channels", "17"}};
  spec.n = 1000;
  CHECK_THROWS_WITH_AS((void)handles_engine().prepare_sizes(spec, 16), doctest::Contains("not a multiple of channels: 17"),
                       ConfigError);
}

TEST_CASE("per-channel answers on the host: no pixels, each channel's empty answer, nothing launched") {
  const auto answers = reduce::per_channel_argmax(handles_engine(), x, 0, 17, nullptr);
  REQUIRE(answers.size() == 17);
  for (const auto& a : answers) CHECK(a.index == -1);
  const auto sums = reduce::per_channel_sum(handles_engine(), reinterpret_cast<const std::int32_t*>(0x1000), 0, 3, nullptr);
  CHECK(sums == std::vector<std::int64_t>{0, 0, 0});
  auto none = reduce::prepare_per_channel_min<float>(handles_engine(), 0, 5);
  const auto mins = none(x, 0, nullptr);
  REQUIRE(mins.size() == 5);
  CHECK(mins[4].index == -1);
  CHECK(handles_engine().cached_operations() == 0);
}

TEST_CASE("segmented typed calls of no segments launch nothing, whatever n") {
  reduce::segmented_argmax(handles_engine(), x, offsets, best, 1000, 0, nullptr);
  reduce::segmented_sum(handles_engine(), x, offsets, offsets + 1, reinterpret_cast<double*>(0x3000), 0, 0, nullptr);
  reduce::per_channel_argmax(handles_engine(), x, best, 0, 17, nullptr);
  CHECK(handles_engine().cached_operations() == 0);
}
