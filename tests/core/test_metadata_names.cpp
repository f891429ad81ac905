// A kernel file's metadata is checked when it is loaded, so that `gpuk check` (no GPU) catches what
// a launch would: every name in every expression, and every operation against the family's.
#include <doctest/doctest.h>

#include "builtins.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"

using namespace gpuk;

namespace {

// A reduce kernel file whose launch block holds `launch` and whose metadata ends with `extra`.
std::string kernel(const std::string& launch, const std::string& extra = "") {
  return "/* gpuk\nfamily: reduce\noperations: [max]\nparams:\n  BLOCK: {default: 256, values: [128, 256]}\n"
         "launch:\n" + launch + extra + "*/\ntemplate <class R, int BLOCK> __global__ void k() {}\n";
}

std::string load_error(const std::string& source) {
  try {
    KernelFile::parse(source, "mine.cu");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

using test::contains;

}  // namespace

TEST_CASE("an unknown name in a grid expression fails at load with file:line:col and a suggestion") {
  const std::string e = load_error(kernel("  - entry: k\n    grid: ceil_div(n, BLOK)\n    block: BLOCK\n"));
  CAPTURE(e);
  // Line 8 of the file; the expression starts at column 11, the name 12 characters into it.
  CHECK(contains(e, "mine.cu:8:23: grid 'ceil_div(n, BLOK)' names 'BLOK', which is not a parameter"));
  CHECK(contains(e, "(did you mean 'BLOCK'?)"));
  CHECK(contains(e, "the parameters BLOCK and n, sm_count, elem_bytes, vec"));
}

TEST_CASE("every metadata expression is resolved: block, shared, when, repeat, constraints, scratch") {
  const std::string launch = "  - entry: k\n    grid: 1\n    block: BLOCK\n";
  CHECK(contains(load_error(kernel("  - entry: k\n    grid: 1\n    block: BLOCKS\n")), "block 'BLOCKS' names 'BLOCKS'"));
  CHECK(contains(load_error(kernel(launch + "    shared: BLOCK * elem_byte\n")), "names 'elem_byte'"));
  CHECK(contains(load_error(kernel(launch + "    when: m > 4\n")), "when 'm > 4' names 'm'"));
  CHECK(contains(load_error(kernel(launch + "    repeat: passes\n")), "repeat 'passes' names 'passes'"));
  const std::string constraint = load_error(kernel(launch, "constraints:\n  - BLOCK * UNROLL <= 1024\n"));
  CAPTURE(constraint);
  CHECK(contains(constraint, "mine.cu:11:13: constraint 'BLOCK * UNROLL <= 1024' names 'UNROLL'"));
  const std::string scratch = load_error(kernel(launch, "scratch: \"sm_cnt * 2\"\n"));
  CAPTURE(scratch);
  CHECK(contains(scratch, "mine.cu:10:11: scratch 'sm_cnt * 2' names 'sm_cnt'"));  // past the opening quote
  CHECK(contains(scratch, "(did you mean 'sm_count'?)"));
}

TEST_CASE("the built-in names and the file's parameters all resolve") {
  CHECK(load_error(kernel("  - entry: k\n    grid: min(ceil_div(n, BLOCK * vec), sm_count * 4)\n    block: BLOCK\n"
                          "    shared: BLOCK * elem_bytes\n    when: n > 0\n    repeat: 1\n",
                          "constraints:\n  - BLOCK <= 1024\nscratch: sm_count\n")) == "");
}

TEST_CASE("every built-in kernel file resolves its names") {
  for (const auto& e : test::kernels().errors()) FAIL_CHECK(e);
  CHECK(!test::kernels().files().empty());
}

TEST_CASE("an operation the family does not have fails check_operations with the place and a suggestion") {
  const KernelFile file = KernelFile::parse(
      "/* gpuk\nfamily: reduce\noperations: [max, argmaxx]\nlaunch:\n  - {entry: k, grid: 1, block: 32}\n*/\n"
      "template <class R> __global__ void k() {}\n",
      "mine.cu");
  const auto& reduce = test::plugins().get("reduce");
  std::string e;
  try {
    check_operations(file, reduce.operations());
  } catch (const ConfigError& error) {
    e = error.what();
  }
  CAPTURE(e);
  CHECK(contains(e, "mine.cu:3:19: the reduce family has no operation 'argmaxx' (did you mean 'argmax'?)"));
  CHECK(contains(e, "its operations: max, min, sum, argmax, argmin"));
  for (const auto& f : test::kernels().files()) CHECK_NOTHROW(check_operations(*f, test::plugins().get(f->family).operations()));
}

TEST_CASE("an unknown kernel name says where kernels were read from and hints at --kernels") {
  std::string e;
  try {
    test::kernels().find("reduce", "onepas");
  } catch (const ConfigError& error) {
    e = error.what();
  }
  CHECK(contains(e, "no reduce kernel named 'onepas' (did you mean 'onepass'?)"));
  CHECK(contains(e, "--kernels DIR"));
}
