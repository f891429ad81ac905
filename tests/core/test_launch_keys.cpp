// `when:` and `repeat:` on a launch entry: a launch sequence that depends on the problem or
// repeats is described in the kernel's metadata, parsed and checked with the file's own lines,
// and evaluated into the plan.
#include <doctest/doctest.h>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "kernel/kernel_file.hpp"

using namespace gpuk;

namespace {

// A two-way sort in the shape of radix.cu: a one-block launch for small n, else a histogram and
// one pass per digit.
const char* kPasses = R"(/* gpuk
family: sort
operations: [sort]
params:
  BLOCK: {default: 256, values: [128, 256]}
  BITS: {default: 8, values: [4, 8]}
  SMALL: {default: 1, values: [0, 1]}
launch:
  - entry: one_block
    when: SMALL && n <= BLOCK * 4
    grid: 1
    block: BLOCK
  - entry: histogram
    when: SMALL == 0 || n > BLOCK * 4
    grid: 4
    block: BLOCK
  - entry: digit_pass
    when: SMALL == 0 || n > BLOCK * 4
    repeat: ceil_div(elem_bytes * 8, BITS)
    grid: ceil_div(n, BLOCK)
    block: BLOCK
*/
template <class S, int BLOCK, int BITS, int SMALL> __global__ void one_block(int a) {}
template <class S, int BLOCK, int BITS, int SMALL> __global__ void histogram(int a) {}
template <class S, int BLOCK, int BITS, int SMALL> __global__ void digit_pass(int a) {}
)";

using test::replace;

std::string launch_error_of(const std::string& source) {
  try {
    KernelFile::parse(source, "k.cu");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

LaunchPlan plan(const std::string& source, std::int64_t n, int elem_bytes,
                const std::map<std::string, std::int64_t>& params = {}) {
  const auto file = std::make_shared<const KernelFile>(KernelFile::parse(source, "k.cu"));
  return plan_launches(Variant(file, {"S"}, params), {n, 132, elem_bytes, 1024, 48 * 1024});
}

std::vector<std::string> entries(const LaunchPlan& p) {
  std::vector<std::string> out;
  for (const auto& l : p.launches)
    out.push_back(l.name_expression.substr(0, l.name_expression.find('<')) + " x" + std::to_string(l.repeat));
  return out;
}

}  // namespace

TEST_CASE("when: and repeat: are parsed with the launch") {
  const KernelFile k = KernelFile::parse(kPasses, "k.cu");
  REQUIRE(k.launches.size() == 3);
  REQUIRE(k.launches[0].when.has_value());
  CHECK(k.launches[0].when->text() == "SMALL && n <= BLOCK * 4");
  CHECK_FALSE(k.launches[0].repeat.has_value());
  REQUIRE(k.launches[2].repeat.has_value());
  CHECK(k.launches[2].repeat->text() == "ceil_div(elem_bytes * 8, BITS)");
}

TEST_CASE("a launch whose when is 0 is left out of the plan; repeat is evaluated into it") {
  // Small: the one-block launch alone.
  CHECK(entries(plan(kPasses, 1000, 4)) == std::vector<std::string>{"one_block x1"});
  // Above it, or with SMALL = 0: the histogram once and a pass per digit of the key.
  CHECK(entries(plan(kPasses, 1025, 4)) == std::vector<std::string>{"histogram x1", "digit_pass x4"});
  CHECK(entries(plan(kPasses, 10, 4, {{"SMALL", 0}})) == std::vector<std::string>{"histogram x1", "digit_pass x4"});
  CHECK(entries(plan(kPasses, 1 << 20, 8)) == std::vector<std::string>{"histogram x1", "digit_pass x8"});
  CHECK(entries(plan(kPasses, 1 << 20, 4, {{"BITS", 4}})) == std::vector<std::string>{"histogram x1", "digit_pass x8"});
  // Launches without the keys run once, always.
  CHECK(plan(kPasses, 1 << 20, 4).launches[0].repeat == 1);
}

TEST_CASE("when and repeat errors name the kernel file's line") {
  // Syntax: at parse time, with the line and the column of the token that is wrong (the
  // expression's column folded into the file's).
  CHECK(launch_error_of(replace(kPasses, "when: SMALL && n <= BLOCK * 4", "when: SMALL &&"))
            .find("k.cu:10:19: when 'SMALL &&': unexpected end of expression") == 0);
  CHECK(launch_error_of(replace(kPasses, "repeat: ceil_div(elem_bytes * 8, BITS)", "repeat: (BITS"))
            .find("k.cu:19:18: repeat '(BITS': expected ')'") == 0);
  CHECK(launch_error_of(replace(kPasses, "repeat: ceil_div", "repeats: ceil_div")).find("k.cu:19:5: unknown key 'repeats'") == 0);
  // Values: when planned, with the launch's line.
  try {
    plan(replace(kPasses, "repeat: ceil_div(elem_bytes * 8, BITS)", "repeat: BITS - 8"), 1 << 20, 4);
    FAIL("a repeat of 0 was planned");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("k.cu:17: repeat 'BITS - 8' of k BLOCK=256 BITS=8 SMALL=1 is 0 for n = 1048576; "
                                     "it must be between 1 and 65536 (use when: to leave a launch out)") == 0);
  }
  // An unknown name: when the file is loaded (so `gpuk check` catches it), not when planned.
  CHECK(launch_error_of(replace(kPasses, "when: SMALL && n <= BLOCK * 4", "when: SMALL && n <= WIDTH"))
            .find("k.cu:10:25: when 'SMALL && n <= WIDTH' names 'WIDTH', which is not a parameter") == 0);
  // Every launch left out: nothing would run.
  const std::string none = replace(replace(kPasses, "when: SMALL == 0 || n > BLOCK * 4", "when: 0"),
                                   "when: SMALL == 0 || n > BLOCK * 4", "when: 0");
  CHECK_THROWS_WITH_AS(plan(none, 1 << 20, 4), doctest::Contains("no launch of k BLOCK=256 BITS=8 SMALL=1 runs for n = 1048576"),
                       ConfigError);
}
