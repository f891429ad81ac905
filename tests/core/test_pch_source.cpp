// A program made for NVRTC's precompiled header (core/src/jit/pch_source.hpp) and the include
// tree it depends on (core/src/jit/include_tree.hpp): no NVRTC, CI.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "helpers.hpp"
#include "jit/include_tree.hpp"
#include "jit/pch_source.hpp"

using namespace gpuk;

namespace {

IncludeTree tree_naming(std::initializer_list<const char*> words) {
  IncludeTree t;
  for (const char* w : words) t.identifiers.insert(w);
  return t;
}

}  // namespace

TEST_CASE("the definitions go after the leading #include block, with a #line back to the file's own lines") {
  const std::string source =
      "// a kernel\n/* gpuk\n   more */\n#include <cub/block/block_reduce.cuh>\n\n#define N 4\n#ifndef block_size_x\n"
      "#define block_size_x 32\n#endif\n__global__ void k() {}\n";
  const auto out = hoist_definitions(source, "k.cu", {"-Dblock_size_x=64", "-Duse_shared=1", "-Dflag"}, tree_naming({"cub"}));
  REQUIRE(out);
  CHECK(*out ==
        "// a kernel\n/* gpuk\n   more */\n#include <cub/block/block_reduce.cuh>\n\n#define N 4\n"
        "namespace gpuk_pch_end {}\n#define block_size_x 64\n#define use_shared 1\n#define flag 1\n#line 7 \"k.cu\"\n"
        "#ifndef block_size_x\n#define block_size_x 32\n#endif\n__global__ void k() {}\n");
}

TEST_CASE("no hoisting where the headers could see a difference, or nothing is gained") {
  const std::string source = "#include \"params.h\"\n__global__ void k() {}\n";
  // A header that names a parameter reads it: the definition must come first.
  CHECK_FALSE(hoist_definitions(source, "k.cu", {"-Dtile=4"}, tree_naming({"tile"})));
  CHECK(hoist_definitions(source, "k.cu", {"-Dtile=4"}, tree_naming({"tiles"})));
  // No #include before the code; an #include of a macro; an #if before the includes.
  CHECK_FALSE(hoist_definitions("__global__ void k() {}\n#include <x.h>\n", "k.cu", {"-Dtile=4"}, {}));
  CHECK_FALSE(hoist_definitions("#include HEADER\n__global__ void k() {}\n", "k.cu", {"-Dtile=4"}, {}));
  CHECK_FALSE(hoist_definitions("#if tile > 2\n#include <x.h>\n#endif\nint k;\n", "k.cu", {"-Dtile=4"}, {}));
  // A comment left open; a name a #line cannot hold.
  CHECK_FALSE(hoist_definitions("#include <x.h>\n/* open\n", "k.cu", {"-Dtile=4"}, {}));
  CHECK_FALSE(hoist_definitions(source, "a\"b.cu", {"-Dtile=4"}, {}));
  CHECK_FALSE(hoist_definitions(source, "k.cu", {"-Itile"}, {}));
}

TEST_CASE("the include tree: every header once, its identifiers and size, read again when one changes") {
  const test::TempDir dir;
  dir.write("inc/a.cuh", "#pragma once\n#include \"b.cuh\"\nint alpha_1;\n");
  const auto b = dir.write("inc/b.cuh", "#include \"a.cuh\"\nint beta;\n");
  const std::string source = "#include <a.cuh>\n#include \"missing.cuh\"\n";
  const auto first = include_tree(source, dir.path(), {dir.path() / "inc"});
  CHECK(first->identifiers.count("alpha_1") == 1);
  CHECK(first->identifiers.count("beta") == 1);
  CHECK(first->identifiers.count("missing") == 0);
  CHECK(first->bytes == std::string("#pragma once\n#include \"b.cuh\"\nint alpha_1;\n#include \"a.cuh\"\nint beta;\n").size());
  CHECK(include_tree(source, dir.path(), {dir.path() / "inc"}) == first);  // remembered
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  test::TempDir().write("x", "");  // (a write elsewhere: nothing)
  dir.write("inc/b.cuh", "#include \"a.cuh\"\nint gamma;\n");
  const auto changed = include_tree(source, dir.path(), {dir.path() / "inc"});
  CHECK(changed->digest != first->digest);
  CHECK(changed->identifiers.count("gamma") == 1);
  // A header that appears where the search looked first is the one taken.
  dir.write("a.cuh", "int delta;\n");
  const auto shadowed = include_tree(source, dir.path(), {dir.path() / "inc"});
  CHECK(shadowed->identifiers.count("delta") == 1);
  CHECK(shadowed->identifiers.count("gamma") == 0);
  (void)b;
}

TEST_CASE("a fixed definition the headers use, whose value names a moved one, keeps the definitions on the command line") {
  const std::string source = "#include <h.cuh>\n__global__ void k() {}\n";
  const std::vector<std::string> fixed = {"-Dgrid_size_x=((1000 + block_size_x - 1) / block_size_x)", "-Dkernel_tuner=1"};
  CHECK_FALSE(hoist_definitions(source, "k.cu", {"-Dblock_size_x=64"}, tree_naming({"grid_size_x"}), fixed));
  CHECK(hoist_definitions(source, "k.cu", {"-Dblock_size_x=64"}, tree_naming({"kernel_tuner"}), fixed));
  CHECK(hoist_definitions(source, "k.cu", {"-Dblock_size_x=64"}, tree_naming({}), fixed));
}

TEST_CASE("the include tree follows a chain of headers no deeper than a compiler would") {
  const test::TempDir dir;
  for (int i = 0; i < 400; ++i)
    dir.write("h" + std::to_string(i) + ".cuh", "#include \"h" + std::to_string(i + 1) + ".cuh\"\nint v" + std::to_string(i) + ";\n");
  const auto tree = include_tree("#include \"h0.cuh\"\n", dir.path(), {});
  CHECK(tree->identifiers.count("v0") == 1);
  CHECK(tree->identifiers.count("v200") == 1);
  CHECK(tree->identifiers.count("v399") == 0);
}
