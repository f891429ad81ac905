// A prepared handle's call on the host, without a GPU: prepared through the fake driver of
// tests/api/fake_driver.cpp (the kernels compiled by NVRTC for real, the modules and memory only
// handles), each call is counted at the driver table and at malloc. One call of any handle asks
// the driver for one kernel launch per planned launch and one context query, nothing else (no
// allocation, module load, copy, memset or wait), and allocates no host memory while n repeats or
// alternates between sizes it has met (a few plans are kept). Issue 28's "zero
// allocations and zero compiles after prepare", checked on every machine; the GPU side of it is
// tests/gpu/test_api_handles_gpu.cpp. The segmented sort's counts and refusals. And the Engine's
// public description of its device (Engine::device()), as the fake driver describes itself.
#include <doctest/doctest.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "api/driver_counts.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/search.hpp"
#include "gpuk/sort.hpp"

using namespace gpuk;
using counts::kMallocsCounted;

namespace {

struct Counted {
  std::uint64_t launches = 0, context_queries = 0, opt_ins = 0, other = 0, mallocs = 0;
};

// Runs `calls` with every driver entry point a call could reach counted, and mallocs counted.
Counted count(const std::function<void()>& calls) {
  const counts::CountedDriver counted(false);
  calls();
  counts::counting_mallocs = false;
  return {counts::launches.load(), counts::context_queries.load(), counts::opt_ins.load(), counts::other.load(),
          counts::mallocs.load()};
}

bool fake_driver_here() {
  std::string why;
  return device_count(&why) > 0 && Engine().device_name().find("fake") != std::string::npos;
}

}  // namespace

TEST_CASE("a prepared handle's call asks the driver for its launches and one context query, and allocates nothing") {
  if (!fake_driver_here()) {
    MESSAGE("SKIPPED: this program runs on tests/api/fake_driver.cpp (LD_LIBRARY_PATH=build/tests/fake_driver)");
    return;
  }
  EngineOptions options;
  options.tuning = TuningPolicy::none();  // the family's choice by size: few kernels to compile
  const Engine engine(options);
  const std::uint64_t max_n = 5000;
  const Stream stream;
  DeviceBuffer x(max_n * 8), out(max_n * 8), values(max_n * 8), values_out(max_n * 8), offsets(1024 * 8),
      best(1024 * 16);
  const auto* d_x = reinterpret_cast<const float*>(x.get());
  auto* d_best = reinterpret_cast<reduce::Best<float>*>(best.get());
  auto* d_sum = reinterpret_cast<double*>(best.get());
  auto* d_index = reinterpret_cast<std::int64_t*>(out.get());
  const auto* d_offsets = reinterpret_cast<const std::int64_t*>(offsets.get());

  auto amax = reduce::prepare_argmax<float>(engine, max_n);
  auto sum = reduce::prepare_sum<float>(engine, max_n);
  auto find = search::prepare_find<float>(engine, max_n);
  auto range = search::prepare_find_if_range<float>(engine, max_n);  // two values in the call's scalar
  auto seg = reduce::prepare_segmented_argmax<float>(engine, max_n, 100);
  auto channels = reduce::prepare_per_channel_argmax<float>(engine, max_n / 17, 17);
  auto sorter = sort::prepare_pairs<float, std::uint32_t>(engine, max_n);
  auto segsort = sort::prepare_segmented_pairs<float, std::uint32_t>(engine, max_n, 100);
  const auto* d_v = reinterpret_cast<const std::uint32_t*>(values.get());
  auto* d_vo = reinterpret_cast<std::uint32_t*>(values_out.get());
  auto* d_sorted = reinterpret_cast<float*>(out.get());

  struct Case {
    const char* what;
    std::function<void(std::uint64_t n)> call;
    std::uint64_t n;
  };
  const std::vector<Case> cases = {
      {"prepare_argmax", [&](std::uint64_t n) { amax(d_x, d_best, n, stream.get()); }, max_n},
      {"prepare_sum", [&](std::uint64_t n) { sum(d_x, d_sum, n, stream.get()); }, 777},
      {"prepare_find", [&](std::uint64_t n) { find(d_x, d_index, n, 1.5f, stream.get()); }, 4096},
      {"prepare_find_if_range", [&](std::uint64_t n) { range(d_x, d_index, n, 0.25f, 0.5f, stream.get()); }, 4097},
      {"prepare_segmented_argmax (100 segments)",
       [&](std::uint64_t n) { seg(d_x, d_offsets, d_best, n, 100, stream.get()); }, max_n},
      {"prepare_per_channel_argmax (17 channels)",
       [&](std::uint64_t n) { channels(d_x, d_best, n / 17, stream.get()); }, max_n},
      {"prepare_pairs<float, uint32>",
       [&](std::uint64_t n) { sorter(d_x, d_sorted, d_v, d_vo, n, stream.get()); }, 3000},
      {"prepare_segmented_pairs<float, uint32> (100 segments)",
       [&](std::uint64_t n) { segsort(d_x, d_sorted, d_v, d_vo, n, 100, d_offsets, d_offsets + 1, stream.get()); },
       max_n},
  };
  for (const Case& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    c.call(c.n);  // the first call at this n plans its launches (host-side arithmetic only)
    const Counted one = count([&] { c.call(c.n); });
    CHECK(one.launches >= 1);
    CHECK(one.context_queries == 1);
    CHECK(one.other == 0);
    CHECK(one.opt_ins <= one.launches);  // only a launch above 48 KiB of dynamic shared memory opts in
    if (kMallocsCounted) CHECK(one.mallocs == 0);
    // A thousand more calls ask for exactly a thousand times as much: nothing accumulates.
    const Counted many = count([&] {
      for (int i = 0; i < 1000; ++i) c.call(c.n);
    });
    CHECK(many.launches == 1000 * one.launches);
    CHECK(many.context_queries == 1000);
    CHECK(many.other == 0);
    CHECK(many.opt_ins == 1000 * one.opt_ins);
    if (kMallocsCounted) CHECK(many.mallocs == 0);
    // A new n (here in another size bucket) plans its launches again: host arithmetic and a few
    // small host allocations for the new plan (core's planner builds it as values), still no
    // driver call but the launches.
    const Counted other_n = count([&] { c.call(c.n / 3); });
    CHECK(other_n.other == 0);
    // Sizes met before are planned once: calls alternating between them allocate nothing.
    const std::uint64_t sizes[] = {c.n, c.n - 1, c.n / 3, c.n / 3 - 1};
    for (const std::uint64_t n : sizes) c.call(n);
    const Counted alternating = count([&] {
      for (int i = 0; i < 100; ++i) c.call(sizes[i % 4]);
    });
    CHECK(alternating.launches >= 100);
    CHECK(alternating.other == 0);
    if (kMallocsCounted) CHECK(alternating.mallocs == 0);
    MESSAGE(what << ": " << one.launches << " launch(es), " << one.opt_ins
                 << " shared-memory opt-in(s) and 1 context query per call, no other driver call, "
                 << (kMallocsCounted ? std::to_string(one.mallocs) + " mallocs" : std::string("mallocs not counted"))
                 << "; a call with a new n: " << other_n.other << " other driver calls, "
                 << (kMallocsCounted ? std::to_string(other_n.mallocs) : std::string("uncounted"))
                 << " mallocs (its new plan)");
  }
  if (!kMallocsCounted) MESSAGE("mallocs not counted: AddressSanitizer owns malloc in this build");
}

TEST_CASE("segmented sort from C++: the count is the launch's scalar, nothing is launched for none, refusals") {
  if (!fake_driver_here()) {
    MESSAGE("SKIPPED: this program runs on tests/api/fake_driver.cpp (LD_LIBRARY_PATH=build/tests/fake_driver)");
    return;
  }
  EngineOptions options;
  options.tuning = TuningPolicy::none();
  const Engine engine(options);
  const Stream stream;
  const std::uint64_t max_n = 3000;
  DeviceBuffer keys(max_n * 8), keys_out(max_n * 8), values(max_n * 8), values_out(max_n * 8), offsets(1001 * 8);
  const auto* d_k = reinterpret_cast<const std::int64_t*>(keys.get());
  auto* d_ko = reinterpret_cast<std::int64_t*>(keys_out.get());
  const auto* d_v = reinterpret_cast<const double*>(values.get());
  auto* d_vo = reinterpret_cast<double*>(values_out.get());
  const auto* d_off = reinterpret_cast<const std::int64_t*>(offsets.get());
  const sort::Options descending(sort::Order::descending);

  // More segments than keys are fine (the extra ones empty), as in CUB; the handle's smallest
  // size buckets are prepared for all 1000 of them.
  auto h = sort::prepare_segmented_pairs<std::int64_t, double>(engine, max_n, 1000, descending);
  CHECK(h.max_segments() == 1000);
  for (const std::uint64_t segments : {std::uint64_t{1}, std::uint64_t{37}, std::uint64_t{1000}}) {
    const std::uint64_t n = segments == 1000 ? 7 : 2999;
    const Counted c = count([&] { h(d_k, d_ko, d_v, d_vo, n, segments, d_off, d_off + 1, stream.get()); });
    // The warp bin's launch (a warp per segment, 8 a block), the block bin's (a grid striding
    // over the segments, no larger than their count), the merge's (a grid of its own).
    CHECK(c.launches == 3);
    CHECK(counts::recent_grids[0].load() == (segments + 7) / 8);
    CHECK(counts::recent_grids[1].load() == std::min<std::uint64_t>(segments, counts::recent_grids[2].load()));
    CHECK(counts::recent_grids[2].load() >= 1);
    CHECK(c.other == 0);
  }
  // n = 0 or no segments: nothing at all, on the handle and in the typed calls.
  const Counted none = count([&] {
    h(d_k, d_ko, d_v, d_vo, 0, 5, d_off, d_off + 1, stream.get());
    h(d_k, d_ko, d_v, d_vo, 100, 0, d_off, d_off + 1, stream.get());
    sort::segmented_keys(engine, d_k, d_ko, 0, 5, d_off, d_off + 1, stream.get());
    sort::segmented_pairs(engine, d_k, d_ko, d_v, d_vo, 100, 0, d_off, d_off + 1, stream.get());
  });
  CHECK(none.launches + none.context_queries + none.other == 0);
  // A typed call prepares its Operation for this count (the handle's variant: compiled once) and
  // launches it.
  const auto typed_call = [&] {
    sort::segmented_pairs(engine, d_k, d_ko, d_v, d_vo, 2000, 3, d_off, d_off + 1, stream.get(), descending);
  };
  typed_call();
  const Counted typed = count(typed_call);
  CHECK(typed.launches == 3);
  CHECK(counts::recent_grids[1].load() == 3);

  // Refused before anything is enqueued: more segments than prepared, outputs overlapping inputs.
  const Counted refused = count([&] {
    CHECK_THROWS_WITH_AS(h(d_k, d_ko, d_v, d_vo, 100, 1001, d_off, d_off + 1, stream.get()),
                         "this segmented sort was prepared for up to 1000 segments; 1001 need a handle prepared for "
                         "them",
                         ConfigError);
    CHECK_THROWS_WITH_AS(h(d_k, const_cast<std::int64_t*>(d_k), d_v, d_vo, 100, 4, d_off, d_off + 1, stream.get()),
                         doctest::Contains("keys_out and keys_in overlap; a segmented sort is out of place"),
                         ConfigError);
    auto* d_vo_in_keys = reinterpret_cast<double*>(d_ko + 50);
    CHECK_THROWS_WITH_AS(h(d_k, d_ko, d_v, d_vo_in_keys, 100, 4, d_off, d_off + 1, stream.get()),
                         doctest::Contains("keys_out and values_out overlap"), ConfigError);
    CHECK_THROWS_WITH_AS(h(d_k, d_ko, d_v, d_vo, 100, 4, d_off, reinterpret_cast<const std::int64_t*>(d_vo) + 99,
                           stream.get()),
                         doctest::Contains("values_out and end_offsets overlap"), ConfigError);
    CHECK_THROWS_WITH_AS(sort::segmented_keys(engine, d_k, d_ko, 100, 4, d_off, d_off + 1, stream.get(),
                                              sort::Options(sort::Order::ascending, 0, 16)),
                         doctest::Contains("segmented_sort sorts by the whole key"), ConfigError);
  });
  CHECK(refused.launches == 0);
  // A handle for no segments (or no keys) prepares nothing and serves only calls that launch nothing.
  auto empty = sort::prepare_segmented_keys<float>(engine, max_n, 0);
  CHECK(empty.scratch_bytes() == 0);
  CHECK_THROWS_AS(empty(reinterpret_cast<const float*>(d_k), reinterpret_cast<float*>(d_ko), 10, 1, d_off, d_off + 1,
                        stream.get()),
                  ConfigError);
}

TEST_CASE("the counters see what they claim to: a prepare and a typed call's first call are counted") {
  if (!fake_driver_here()) {
    MESSAGE("SKIPPED: this program runs on tests/api/fake_driver.cpp (LD_LIBRARY_PATH=build/tests/fake_driver)");
    return;
  }
  EngineOptions options;
  options.tuning = TuningPolicy::none();
  const Engine engine(options);
  const Stream stream;
  DeviceBuffer x(4096 * 4), best(16);
  const Counted prepare = count([&] { auto h = reduce::prepare_argmin<float>(engine, 3000); });
  CHECK(prepare.other > 0);  // allocations, module loads, a wait
  if (kMallocsCounted) CHECK(prepare.mallocs > 0);
  const auto* d_x = reinterpret_cast<const float*>(x.get());
  auto* d_best = reinterpret_cast<reduce::Best<float>*>(best.get());
  const Counted first = count([&] { reduce::argmax(engine, d_x, d_best, 3000, stream.get()); });
  CHECK(first.other > 0);
  CHECK(first.launches >= 1);
}

TEST_CASE("Engine::device() describes the GPU as the driver does, with the NVRTC gpuk compiles with") {
  if (!fake_driver_here()) {
    MESSAGE("SKIPPED: this program runs on tests/api/fake_driver.cpp (LD_LIBRARY_PATH=build/tests/fake_driver)");
    return;
  }
  const Engine engine;
  const DeviceDescription device = engine.device();  // gpuk/gpuk.hpp's: a complete type
  CHECK(device.ordinal == 0);
  CHECK(device.name == engine.device_name());
  CHECK(device.name.find("fake sm_90") == 0);
  // What tests/api/fake_driver.cpp says it is.
  CHECK(device.arch == "sm_90");
  CHECK(device.cc_major == 9);
  CHECK(device.cc_minor == 0);
  CHECK(device.sm_count == 132);
  CHECK(device.total_memory == std::uint64_t{80} << 30);
  CHECK(device.l2_bytes == 52428800);
  CHECK(device.peak_bandwidth_gbs == doctest::Approx(2.0 * 2619000e3 * (5120 / 8.0) / 1e9));
  CHECK(device.pci_bus_id.empty());  // the fake driver does not say
  CHECK(device.driver_version == 13000);
  int major = 0, minor = 0;
  REQUIRE(nvrtcVersion(&major, &minor) == NVRTC_SUCCESS);
  CHECK(device.nvrtc_version == std::to_string(major) + "." + std::to_string(minor));
}
