// The bulk compiles of a sweep (tune/bulk_compiler.hpp) with a fake NVRTC: programs cut by
// thread, a failing program split to find the variant at fault, and a chunk another process
// compiled taken as it was (its errors kept, nothing counted as compiled). No GPU, no NVRTC.
#include <doctest/doctest.h>

#include <map>
#include <mutex>

#include "gpuk/error.hpp"
#include "tune/bulk_compiler.hpp"
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

TEST_CASE("the points are cut into one program per thread, by kernel file, each name once per program") {
  const Space space = test::metadata_space({test::tune_kernel()});
  std::vector<PlannedPoint> points;
  for (std::uint64_t i = 0; i < 7; ++i) points.push_back({space.at(i), {"a" + std::to_string(i % 5), "shared"}});
  std::vector<std::vector<Candidate>> members;
  const auto chunks = group_into_chunks(space, points, 3, &members);
  REQUIRE(chunks.size() == 3);  // ceil(7 / 3) = 3 points a program: 3, 3, 1
  CHECK(members[0].size() == 3);
  CHECK(members[2].size() == 1);
  CHECK(chunks[0]->names == std::vector<std::string>{"a0", "shared", "a1", "a2"});
  CHECK(chunks[2]->names == std::vector<std::string>{"a1", "shared"});
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
