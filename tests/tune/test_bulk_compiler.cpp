// The bulk compiles of a sweep (tune/measure/bulk_compiler.hpp) with a fake NVRTC: programs of one point
// (several past 8 per thread), variants of the same machine code compiled once, a failing program
// split to find the variant at fault, and a chunk another process compiled taken as it was (its
// errors kept, nothing counted as compiled). No GPU, no NVRTC.
#include <doctest/doctest.h>

#include <map>
#include <mutex>

#include "gpuk/error.hpp"
#include "tune/measure/bulk_compiler.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

// NVRTC as a map: a program with the name "bad" in it fails; each call is counted.
struct FakeNvrtc {
  std::mutex mutex;
  std::vector<std::vector<std::string>> calls;
  BulkCompiler::CompileProgram fn() {
    return [this](const KernelFile&, const std::vector<std::string>& names) {
      {
        const std::lock_guard lock(mutex);
        calls.push_back(names);
      }
      for (const auto& n : names)
        if (n == "bad") throw CompileError("k.cu:3:1: error: bad is not a type");
      CompiledKernels k;
      k.name_expressions = names;
      k.lowered_names = names;
      return k;
    };
  }
};

std::shared_ptr<Chunk> chunk_of(std::vector<std::string> names) {
  auto c = std::make_shared<Chunk>();
  c->file = test::tune_kernel();
  c->names = std::move(names);
  return c;
}

}  // namespace

TEST_CASE("one program per point, by kernel file, each name once per program") {
  const Space space = test::metadata_space({test::tune_kernel()});
  std::vector<PlannedPoint> points;
  for (std::uint64_t i = 0; i < 7; ++i) points.push_back({space.at(i), {"a" + std::to_string(i), "shared"}});
  std::vector<std::vector<Candidate>> members;
  const auto chunks = group_into_chunks(space, points, 3, &members);
  REQUIRE(chunks.size() == 7);  // under 8 per thread: the GPU gets the first soonest
  CHECK(members[0].size() == 1);
  CHECK(chunks[0]->names == std::vector<std::string>{"a0", "shared"});
  CHECK(chunks[6]->names == std::vector<std::string>{"a6", "shared"});
}

TEST_CASE("past 8 programs per thread, a program holds several points: those sharing kernels first") {
  const Space space = test::metadata_space({test::tune_kernel()});
  std::vector<PlannedPoint> points;
  // Point i needs its own kernel and one of two shared ones, by parity: alike ones are not adjacent.
  for (std::uint64_t i = 0; i < 18; ++i)
    points.push_back({space.at(i), {"own" + std::to_string(i), i % 2 ? "odd" : "even"}});
  std::vector<std::vector<Candidate>> members;
  const auto chunks = group_into_chunks(space, points, 1, &members);
  REQUIRE(chunks.size() == 6);  // ceil(18 / 8) = 3 points a program, one thread
  CHECK(chunks[0]->names == std::vector<std::string>{"own0", "even", "own2", "own4"});
  CHECK(chunks[1]->names == std::vector<std::string>{"own1", "odd", "own3", "own5"});
  CHECK(chunks[2]->names == std::vector<std::string>{"own6", "even", "own8", "own10"});
  CHECK(members[5].size() == 3);
}

// Only GRID's grid: BLOCK is in __launch_bounds__, UNROLL in the body.
const char* kGridOnly = R"(/* gpuk
family: reduce
operations: [max]
params:
  BLOCK: {default: 256, values: [128, 256]}
  UNROLL: {default: 2, values: [1, 2]}
  GRID: {default: 64, values: [32, 64, 128]}
launch:
  - entry: g
    grid: GRID
    block: BLOCK
*/
template <class R, int BLOCK, int UNROLL, int GRID> __global__ void __launch_bounds__(BLOCK) g(int* out) { *out = UNROLL; }
)";

std::string g_name(int block, int unroll, int grid) {
  return "g<R, " + std::to_string(block) + ", " + std::to_string(unroll) + ", " + std::to_string(grid) + ">";
}

TEST_CASE("points that differ only in parameters no entry uses form one group: one program, one kernel") {
  const auto file = test::tune_kernel(kGridOnly, "g.cu");
  const Space space = test::metadata_space({file});
  std::vector<PlannedPoint> points;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const auto p = space.params(space.at(i));
    points.push_back({space.at(i), {g_name(static_cast<int>(p.at("BLOCK")), static_cast<int>(p.at("UNROLL")),
                                           static_cast<int>(p.at("GRID")))}});
  }
  std::vector<std::vector<Candidate>> members;
  const auto chunks = group_into_chunks(space, points, 4, &members);
  REQUIRE(chunks.size() == 4);  // BLOCK x UNROLL: GRID's three values in each
  for (const auto& m : members) CHECK(m.size() == 3);
  CHECK(chunks[0]->names == std::vector<std::string>{g_name(128, 1, 32), g_name(128, 1, 64), g_name(128, 1, 128)});

  // The program compiles the one kernel, under its canonical name (GRID at its default), and each
  // variant's name is loaded as it.
  FakeNvrtc nvrtc;
  CompileStats stats;
  BulkCompiler compiler(nvrtc.fn(), 2, &stats);
  compiler.submit(chunks[0], 3);
  chunks[0]->done.wait();
  REQUIRE(nvrtc.calls.size() == 1);
  CHECK(nvrtc.calls[0] == std::vector<std::string>{g_name(128, 1, 64)});
  for (std::size_t i = 0; i < 3; ++i) {
    REQUIRE(chunks[0]->compiled[i] != nullptr);
    CHECK(chunks[0]->compiled[i]->lowered(chunks[0]->names[i]) == g_name(128, 1, 64));
  }
  CHECK(stats.programs == 1);
  CHECK(stats.variants == 3);
}

TEST_CASE("a compile error of a kernel compiled under another name says which and why") {
  const auto file = test::tune_kernel(kGridOnly, "g.cu");
  FakeNvrtc nvrtc;
  BulkCompiler compiler(
      [&](const KernelFile& f, const std::vector<std::string>& names) -> CompiledKernels {
        if (names == std::vector<std::string>{g_name(256, 2, 64)}) throw CompileError("g.cu:14:1: error: too big");
        return nvrtc.fn()(f, names);
      },
      1, nullptr);
  auto chunk = std::make_shared<Chunk>();
  chunk->file = file;
  chunk->names = {g_name(256, 2, 128)};
  compiler.submit(chunk, 1);
  chunk->done.wait();
  CHECK(chunk->compiled[0] == nullptr);
  CHECK(chunk->errors[0].find("error: too big") != std::string::npos);
  CHECK(chunk->errors[0].find("compiled as " + g_name(256, 2, 64) + ", the same machine code as " +
                              g_name(256, 2, 128) + ": g does not use GRID") != std::string::npos);
}

TEST_CASE("a failing program is split: the variant at fault gets the error, the others compile") {
  FakeNvrtc nvrtc;
  CompileStats stats;
  BulkCompiler compiler(nvrtc.fn(), 2, &stats);
  const auto chunk = chunk_of({"good", "bad", "fine"});
  compiler.submit(chunk, 3);
  chunk->done.wait();
  CHECK(chunk->errors[0].empty());
  CHECK(chunk->errors[1].find("bad is not a type") != std::string::npos);
  CHECK(chunk->compiled[2] != nullptr);
  CHECK(nvrtc.calls.size() == 4);  // the program, then each name alone
  CHECK(stats.programs == 4);
  CHECK(stats.variants == 3);
  SweepTimes t;
  compiler.add_times(t);
  CHECK(t.compile_sum >= 0);
}

TEST_CASE("a chunk compiled elsewhere is taken as it was: one program when it compiled, its errors kept") {
  FakeNvrtc nvrtc;
  CompileStats stats;
  BulkCompiler compiler(nvrtc.fn(), 2, &stats);
  const auto whole = chunk_of({"good", "fine"});
  compiler.adopt(whole, {"", ""});
  whole->done.wait();
  REQUIRE(nvrtc.calls.size() == 1);
  CHECK(nvrtc.calls[0] == std::vector<std::string>{"good", "fine"});  // the same program: the same cache key
  CHECK(whole->compiled[0] == whole->compiled[1]);

  const auto split = chunk_of({"good", "bad", "fine"});
  compiler.adopt(split, {"", "k.cu:3:1: error: bad is not a type", ""});
  split->done.wait();
  REQUIRE(nvrtc.calls.size() == 3);  // the two that compiled, alone, as the other process split them
  CHECK(nvrtc.calls[1] == std::vector<std::string>{"good"});
  CHECK(nvrtc.calls[2] == std::vector<std::string>{"fine"});
  CHECK(split->errors[1] == "k.cu:3:1: error: bad is not a type");
  CHECK(split->compiled[1] == nullptr);
  // Taken, not compiled: the statistics count the compiles of this process only.
  CHECK(stats.programs == 0);
  CHECK(stats.variants == 0);
}
