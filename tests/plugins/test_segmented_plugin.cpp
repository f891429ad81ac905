// Segmented and per-channel reductions of the reduce family, without a GPU: the config keys and
// their errors, the generated segments, the CPU reference on edge cases, the family's choice of
// kernel and the refusal of a kernel that takes another layout.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "builtins.hpp"
#include "config/config.hpp"
#include "device/device.hpp"
#include "family_semantics.hpp"
#include "gpuk/error.hpp"
#include "reduce/reducer.hpp"
#include "run/choose.hpp"
#include "run/runner.hpp"

using namespace gpuk;

namespace {

using test::array;
using test::kernels;
using test::plugins;
using test::reducer;
using test::parse_run;
using test::run_config_error;

const std::string kArgmaxFloat32 = "family: reduce\noperation: argmax\ndtype: float32\n";

using test::test_gpu;

Choice choose(const std::string& yaml) {
  const RunSpec spec = parse_run(yaml);
  return choose_variant(problem_of(spec), variant_request(spec), plugins().get("reduce"), kernels(), test_gpu(), {});
}

// The scratch a variant asks for: where the Launcher refuses a kernel of another layout.
std::string launcher_error(const std::string& yaml) {
  const RunSpec spec = parse_run(yaml);
  const Problem problem = problem_of(spec);
  const FamilyPlugin& plugin = plugins().get("reduce");
  const Variant v(kernels().find("reduce", spec.kernel), plugin.template_args(problem), spec.params);
  LaunchLimits limits;
  limits.n = static_cast<std::int64_t>(spec.size);
  limits.sm_count = 132;
  limits.elem_bytes = 4;
  try {
    (void)plugin.make_launcher(problem)->scratch_bytes(plan_launches(v, limits));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::vector<reduce::Answer> segments(const HostArray& a, const std::vector<std::int64_t>& offsets, reduce::Op op,
                                     bool abs = false) {
  const std::vector<std::int64_t> begin(offsets.begin(), offsets.end() - 1), end(offsets.begin() + 1, offsets.end());
  return reducer().reduce_segments_on_cpu(a, begin, end, op, abs);
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST_CASE("segments and channels are reduce options, checked when a config is read") {
  // Absent unless given: a contiguous problem's options, and so its tuning key, are as before.
  CHECK(parse_run(kArgmaxFloat32 + "size: 1000\n").options == std::map<std::string, std::string>{{"abs", "false"}});
  CHECK(parse_run(kArgmaxFloat32 + "size: 1000\nsegments: 10\n").options.at("segments") == "10");
  CHECK(parse_run(kArgmaxFloat32 + "size: 1700\nchannels: 17\n").options.at("channels") == "17");
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nsegments: 10\nchannels: 2\n").find("do not go together") != std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nsegments: 0\n").find("segments must be between 1 and") != std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nsegments: {count: 3}\n").find("segments must be an integer") != std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nsegment_min: 3\n").find("give segments: N too") != std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nsegments: 10\nsegment_seed: 4\n").find("give segment_min") != std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nsegments: 10\nsegment_min: 200\n").find("need a size of at least") !=
        std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nsegments: 10\nsegment_max: 99\n").find("hold fewer than size") !=
        std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nsegments: 10\nsegment_min: 50\nsegment_max: 40\n").find("is below segment_min") !=
        std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nchannels: 17\n").find("not a multiple of channels: 17") != std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 2048\nchannels: 2048\n").find("channels must be between 1 and 1024") !=
        std::string::npos);
  CHECK(run_config_error(kArgmaxFloat32 + "size: 1000\nsegmnets: 10\n").find("did you mean 'segments'") != std::string::npos);
  for (const char* name : {"segmented_argmax.yaml", "segmented_per_channel.yaml"}) {
    CAPTURE(name);
    CHECK_NOTHROW(load_run_spec(test::source_dir() / "configs" / name, plugins(), kernels()));
  }
}

TEST_CASE("generated segments: equal lengths, or random lengths within [min, max] adding up to size") {
  const auto offsets_of = [](const std::string& yaml) {
    return reducer().generated_offsets(problem_of(parse_run(yaml)));
  };
  const auto equal = offsets_of(kArgmaxFloat32 + "size: 10\nsegments: 4\n");
  CHECK(equal == std::vector<std::int64_t>{0, 2, 5, 7, 10});
  // More segments than elements: some are empty.
  const auto sparse = offsets_of(kArgmaxFloat32 + "size: 2\nsegments: 4\n");
  CHECK(sparse.front() == 0);
  CHECK(sparse.back() == 2);
  const std::string random = kArgmaxFloat32 + "size: 600000\nsegments: 100\nsegment_min: 1000\nsegment_max: 20000\n";
  const auto r = offsets_of(random);
  REQUIRE(r.size() == 101);
  CHECK(r.front() == 0);
  CHECK(r.back() == 600000);
  std::int64_t shortest = r[1] - r[0], longest = shortest;
  for (std::size_t s = 0; s + 1 < r.size(); ++s) {
    shortest = std::min(shortest, r[s + 1] - r[s]);
    longest = std::max(longest, r[s + 1] - r[s]);
  }
  CHECK(shortest >= 1000);
  CHECK(longest <= 20000);
  CHECK(longest > shortest);
  CHECK(offsets_of(random) == r);  // the same seed, the same segments
  CHECK(offsets_of(random + "segment_seed: 2\n") != r);
  // Lengths pinned by the bounds: every segment has exactly size / segments.
  CHECK(offsets_of(kArgmaxFloat32 + "size: 30\nsegments: 3\nsegment_min: 10\nsegment_max: 10\n") ==
        std::vector<std::int64_t>{0, 10, 20, 30});
}

TEST_CASE("segmented argmax: relative index, the first of equal values, a NaN wins, an empty segment is CUB's identity with index -1") {
  const HostArray a = array<float>({3, 7, 7, 1, /**/ 5, /**/ -0.0f, 0.0f, /**/ 2, kNaN, 9, kNaN});
  const auto r = segments(a, {0, 4, 5, 5, 7, 11}, reduce::Op::argmax);
  REQUIRE(r.size() == 5);
  CHECK(r[0].float_value == 7);
  CHECK(r[0].index == 1);  // the first 7
  CHECK(r[1].float_value == 5);
  CHECK(r[1].index == 0);  // relative to the segment's start
  CHECK(r[2].float_value == static_cast<double>(std::numeric_limits<float>::lowest()));
  CHECK(r[2].index == -1);  // empty
  CHECK(r[3].index == 0);   // -0.0 and +0.0 are equal: the first
  CHECK(std::signbit(r[3].float_value));
  CHECK(std::isnan(r[4].float_value));
  CHECK(r[4].index == 1);  // the first NaN
}

TEST_CASE("segmented min, max, sum and argmin of |x|, and empty segments of each") {
  const HostArray a = array<std::int32_t>({-5, 2, -7, 4, /**/ 9});
  const std::vector<std::int64_t> offsets = {0, 4, 4, 5};
  const auto mn = segments(a, offsets, reduce::Op::min);
  CHECK(mn[0].int_value == -7);
  CHECK(mn[1].int_value == std::numeric_limits<std::int32_t>::max());
  CHECK(mn[1].index == -1);
  const auto mx = segments(a, offsets, reduce::Op::max);
  CHECK(mx[0].int_value == 4);
  CHECK(mx[1].int_value == std::numeric_limits<std::int32_t>::lowest());
  const auto sum = segments(a, offsets, reduce::Op::sum);
  CHECK(sum[0].int_value == -6);
  CHECK(sum[1].int_value == 0);
  CHECK(sum[2].int_value == 9);
  const auto amin = segments(a, offsets, reduce::Op::argmin, true);  // |x|: 5 2 7 4
  CHECK(amin[0].uint_value == 2);
  CHECK(amin[0].index == 1);
  CHECK(amin[2].index == 0);
  // A one-element segment and begin == end > 0 (empty, anywhere).
  const auto one = reducer().reduce_segments_on_cpu(a, {4, 3}, {5, 3}, reduce::Op::argmax, false);
  CHECK(one[0].int_value == 9);
  CHECK(one[0].index == 0);
  CHECK(one[1].index == -1);
}

TEST_CASE("per channel: the index is the pixel; ties go to the lowest pixel; a NaN wins") {
  // 4 pixels of 3 channels: channel 0 = 1 4 4 0, channel 1 = NaN 2 NaN 8, channel 2 = -1 -3 -1 -2.
  const HostArray a = array<float>({1, kNaN, -1, 4, 2, -3, 4, kNaN, -1, 0, 8, -2});
  const auto amax = reducer().reduce_channels_on_cpu(a, 3, reduce::Op::argmax, false);
  REQUIRE(amax.size() == 3);
  CHECK(amax[0].float_value == 4);
  CHECK(amax[0].index == 1);
  CHECK(std::isnan(amax[1].float_value));
  CHECK(amax[1].index == 0);
  CHECK(amax[2].float_value == -1);
  CHECK(amax[2].index == 0);
  const auto amin = reducer().reduce_channels_on_cpu(a, 3, reduce::Op::argmin, false);
  CHECK(amin[0].index == 3);
  CHECK(amin[2].index == 1);
  const auto sum = reducer().reduce_channels_on_cpu(a, 3, reduce::Op::sum, false);
  CHECK(sum[0].float_value == 9);
  CHECK(std::isnan(sum[1].float_value));
  CHECK(sum[2].float_value == -7);
  CHECK_THROWS_AS(reducer().reduce_channels_on_cpu(a, 5, reduce::Op::sum, false), Error);
}

TEST_CASE("the family picks a kernel for segments and channels: chunks for long segments, warps for short, per_channel") {
  CHECK(choose(kArgmaxFloat32 + "size: 2^24\nsegments: 1000\n").file->name == "segmented_chunks");
  CHECK(choose(kArgmaxFloat32 + "size: 100000\nsegments: 1000\n").file->name == "segmented_warps");
  const Choice c = choose(kArgmaxFloat32 + "size: 5222400\nchannels: 17\n");
  CHECK(c.file->name == "per_channel");
  const Choice wide = choose(kArgmaxFloat32 + "size: 600\nchannels: 600\n");
  CHECK(wide.params.at("BLOCK") == 1024);
  CHECK(choose(kArgmaxFloat32 + "size: 2^24\n").file->name != "segmented_chunks");
}

TEST_CASE("a kernel of another layout is refused before it runs, naming the kernels that fit") {
  CHECK(launcher_error(kArgmaxFloat32 + "size: 2^20\nsegments: 10\nkernel: onepass\n").find("segmented_chunks or segmented_warps") !=
        std::string::npos);
  CHECK(launcher_error(kArgmaxFloat32 + "size: 2^20\nkernel: segmented_chunks\n").find("it needs segments: N") !=
        std::string::npos);
  CHECK(launcher_error(kArgmaxFloat32 + "size: 1700\nchannels: 17\nkernel: segmented_warps\n").find("per_channel") !=
        std::string::npos);
  CHECK(launcher_error(kArgmaxFloat32 + "size: 5120\nchannels: 512\nkernel: per_channel\n").find("needs BLOCK >= 512") !=
        std::string::npos);
  CHECK(launcher_error(kArgmaxFloat32 + "size: 2^20\nsegments: 10\nkernel: segmented_chunks\n").empty());
}

TEST_CASE("per_channel's scratch holds a partial per block and channel (the grid it launches)") {
  const RunSpec spec = parse_run(kArgmaxFloat32 + "size: 5222400\nchannels: 17\nkernel: per_channel\n");
  const Problem problem = problem_of(spec);
  const FamilyPlugin& plugin = plugins().get("reduce");
  const Variant v(kernels().find("reduce", "per_channel"), plugin.template_args(problem), {});
  LaunchLimits limits;
  limits.n = 5222400;
  limits.sm_count = 132;
  limits.elem_bytes = 4;
  const LaunchPlan plan = plan_launches(v, limits);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].grid == 264);
  CHECK(plugin.make_launcher(problem)->scratch_bytes(plan) >= 256 + 264 * 17 * 16);
}
