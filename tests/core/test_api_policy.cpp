// The library API's TuningPolicy and caller-owned scratch without a GPU: what is checked before the
// GPU (tests/gpu/test_api_policy_gpu.cpp runs them on one).
#include <doctest/doctest.h>

#include <fstream>

#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/sort.hpp"
#include "helpers.hpp"

using namespace gpuk;

TEST_CASE("TuningPolicy: the default is the user's database; a given file is read when the Engine is made") {
  const EngineOptions defaults;
  CHECK(defaults.tuning.source == TuningPolicy::Source::user_database);
  CHECK(TuningPolicy::shipped_only().source == TuningPolicy::Source::shipped_only);
  CHECK(TuningPolicy::none().source == TuningPolicy::Source::none);
  test::TempDir dir;
  const TuningPolicy given = TuningPolicy::from_file(dir.path() / "pinned.json");
  CHECK(given.source == TuningPolicy::Source::file);
  CHECK(given.file == dir.path() / "pinned.json");

  EngineOptions missing;
  missing.tuning = given;
  try {
    Engine e(missing);
    FAIL("an Engine was made with a tuning file that does not exist");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("pinned.json: the tuning file does not exist") != std::string::npos);
  }
  std::ofstream(dir.path() / "pinned.json") << "this is not JSON";
  CHECK_THROWS_AS(Engine{missing}, ConfigError);  // braces: "Engine(missing)" would declare one
  // The other policies read nothing up front.
  for (const TuningPolicy& p : {TuningPolicy::user_database(), TuningPolicy::shipped_only(), TuningPolicy::none()}) {
    EngineOptions o;
    o.tuning = p;
    CHECK_NOTHROW(Engine{o});
  }
}

TEST_CASE("prepared handles: an owned or caller's scratch; a handle of max_n = 0 needs none") {
  const Engine e;
  // max_n = 0 prepares nothing (no GPU needed): nothing to hold, nothing to give.
  auto sorter = sort::prepare_pairs<float, std::uint32_t>(e, 0, {}, Scratch::caller);
  CHECK(sorter.scratch_bytes() == 0);
  CHECK(sorter.held_bytes() == 0);
  CHECK_NOTHROW(sorter.use_scratch(CUdeviceptr{0}, 0, nullptr));
  auto amax = reduce::prepare_argmax<float>(e, 0, Scratch::caller);
  CHECK(amax.scratch_bytes() == 0);
  auto keys = sort::prepare_argsort<double>(e, 0, sort::Order::descending);
  keys(nullptr, nullptr, nullptr, 0, nullptr);  // n = 0: nothing
  // A spec error is caught before the GPU, whoever owns the scratch.
  CHECK_THROWS_AS(sort::prepare_keys<float>(e, 100, sort::Options(sort::Order::ascending, 0, 33), Scratch::caller),
                  ConfigError);
  // argsort's handle writes uint32 indices: a max_n whose bucket passes 2^32 is refused.
  CHECK_THROWS_AS(sort::prepare_argsort<float>(e, std::uint64_t{1} << 32), ConfigError);
}
