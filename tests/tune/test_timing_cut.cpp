// The cut of a sweep's slow variants (tune/sweep/timing_cut.hpp): one timed run for a verified
// variant already more than the factor behind the fastest median timed before it (no GPU).
#include <doctest/doctest.h>

#include "tune/sweep/timing_cut.hpp"

using namespace gpuk;

TEST_CASE("nothing is cut before a variant was timed in full, nor with a factor of 0") {
  TimingCut cut(4);
  CHECK_FALSE(cut.armed());
  CHECK_FALSE(cut.cuts(1e9));
  TimingCut off(0);
  off.timed(0.25);
  CHECK_FALSE(off.armed());
  CHECK_FALSE(off.cuts(1e9));
}

TEST_CASE("a first run over the factor times the fastest median is cut; one at or under it is not") {
  TimingCut cut(4);
  cut.timed(0.26);  // the argmax of 2^28 float32 on an H200: onepass's median, ms
  REQUIRE(cut.armed());
  CHECK(cut.cuts(1000.0));      // block_atomic BLOCK=64: one block reads the 1 GiB
  CHECK(cut.cuts(0.26 * 4.01));
  CHECK_FALSE(cut.cuts(0.26 * 4));
  CHECK_FALSE(cut.cuts(0.30));  // a close runner-up is timed in full
}

TEST_CASE("the fastest median only goes down; a zero or negative median is ignored") {
  TimingCut cut(4);
  cut.timed(0.5);
  cut.timed(0.3);
  cut.timed(0.9);
  cut.timed(0);
  cut.timed(-1);
  CHECK(cut.fastest_ms() == doctest::Approx(0.3));
  CHECK(cut.cuts(1.21));
  CHECK_FALSE(cut.cuts(1.19));
}
