// Host memory: a size whose host arrays (input, CPU reference, outputs) exceed what the machine has
// is refused with both figures before any data is generated, not ended by the OOM killer.
#include <doctest/doctest.h>

#include <fstream>
#include <limits>

#include "builtins.hpp"
#include "config/config.hpp"
#include "device/host_memory.hpp"
#include "gpuk/error.hpp"
#include "plugin/plugin.hpp"
#include "run/host_side.hpp"

using namespace gpuk;

namespace {

std::uint64_t mem_total() {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  std::uint64_t kb = 0;
  while (in >> name >> kb >> unit)
    if (name == "MemTotal:") return kb * 1024;
  return 0;
}

RunSpec spec_of(const std::string& family, const std::string& operation, const std::string& dtype,
                const std::string& size) {
  return parse_run_spec("family: " + family + "\noperation: " + operation + "\ndtype: " + dtype + "\nsize: " + size +
                            "\n",
                        "huge.yaml", test::plugins(), test::kernels());
}

}  // namespace

TEST_CASE("byte counts saturate instead of wrapping round") {
  CHECK(bytes_for(1000, 8) == 8000);
  CHECK(bytes_for(std::uint64_t{1} << 62, 8) == std::numeric_limits<std::uint64_t>::max());
  CHECK(add_bytes(std::numeric_limits<std::uint64_t>::max() - 1, 5) == std::numeric_limits<std::uint64_t>::max());
  CHECK(add_bytes(2, 3) == 5);
}

TEST_CASE("the memory available is there and no more than the machine has") {
  const HostMemory m = available_host_memory();
  CHECK(m.available > 0);
  if (const std::uint64_t total = mem_total()) CHECK(m.available <= total);
  CHECK_FALSE(m.source.empty());
}

TEST_CASE("each family counts its host arrays: at least the input, the sort its copies of keys and values") {
  for (const FamilyPlugin* plugin : test::plugins().all()) {
    CAPTURE(plugin->name());
    if (plugin->operations().empty()) continue;  // the kernel family: each kernel declares its own (tests/declared)
    const RunSpec spec = spec_of(plugin->name(), plugin->operations().front(), "int64", "1000000");
    CHECK(plugin->host_bytes(problem_of(spec)) >= 8'000'000);
  }
  const FamilyPlugin& sort = test::plugins().get("sort");
  CHECK(sort.host_bytes(problem_of(spec_of("sort", "sort", "uint32", "1000000"))) >= 4 * 4'000'000);
  CHECK(sort.host_bytes(problem_of(spec_of("sort", "argsort", "uint32", "1000000"))) >= 4 * 8'000'000);
}

TEST_CASE("a size whose host arrays exceed the machine's memory is refused with the bytes needed and available") {
  const std::uint64_t available = available_host_memory().available;
  for (const FamilyPlugin* plugin : test::plugins().all()) {
    CAPTURE(plugin->name());
    if (plugin->operations().empty()) continue;  // the kernel family: each kernel declares its own (tests/declared)
    // 2^50 float32 (4 PiB): more than any machine; a check, nothing is allocated.
    const RunSpec spec = spec_of(plugin->name(), plugin->operations().front(), "float32", "2^50");
    const std::uint64_t needed = plugin->host_bytes(problem_of(spec));
    REQUIRE(needed > available);
    try {
      refuse_if_host_memory_short(spec, *plugin);
      FAIL("a run of 2^50 elements was not refused");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find("needs " + std::to_string(needed) + " bytes") != std::string::npos);
      CHECK(what.find("of host memory") != std::string::npos);
      CHECK(what.find("available (") != std::string::npos);
    }
  }
  // A size whose byte count overflows 64 bits is refused too, not wrapped round to a few bytes.
  const RunSpec wraps = spec_of("reduce", "max", "float64", "2^62");
  CHECK_THROWS_WITH_AS(refuse_if_host_memory_short(wraps, test::plugins().get("reduce")),
                       doctest::Contains("needs more than 18446744073709551615 bytes"), Error);
  // A small run passes.
  const RunSpec small = spec_of("sort", "sort_pairs", "float64", "1000");
  CHECK_NOTHROW(refuse_if_host_memory_short(small, test::plugins().get("sort")));
}
