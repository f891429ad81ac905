// The compile wave of a pooled sweep (tune/workers/pool.hpp): the parent compiles every program of
// variants once, on all cores, into the compile cache the workers share, and hands each program
// to the workers as it is done; they load its CUBINs from the cache instead of compiling.
// Not installed.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "tune/measure/bulk_compiler.hpp"

namespace gpuk::detail {

class CompileWave {
 public:
  // A program done: its points (space indices) and what the workers need to take it from the
  // cache. A point the parent's plan prunes comes alone, with no names: nothing to compile.
  struct Done {
    std::vector<std::uint64_t> points;
    CompiledProgram program;
  };

  // Plans each point for the GPU described by `limits` and `leading` (the group's first
  // worker's), as the workers do, so that the programs are the ones they look up in the cache.
  CompileWave(const Space& space, LaunchLimits limits, std::vector<std::string> leading,
              BulkCompiler::CompileProgram compile, int threads, CompileStats* stats);
  CompileWave(const CompileWave&) = delete;
  CompileWave& operator=(const CompileWave&) = delete;

  // Starts compiling the points not submitted before.
  void submit(const std::vector<std::uint64_t>& points);
  bool submitted(std::uint64_t point) const { return submitted_.count(point) > 0; }
  // Readable when a program is done (poll it beside the workers' pipes).
  int fd() const { return pipe_.fds[0]; }
  // The programs done since the last call.
  std::vector<Done> take_done();
  void add_times(SweepTimes& t) const { compiler_.add_times(t); }

 private:
  const Space& space_;
  const LaunchLimits limits_;
  const std::vector<std::string> leading_;
  std::set<std::uint64_t> submitted_;
  struct Pipe {
    int fds[2] = {-1, -1};
    Pipe();
    ~Pipe();
  } pipe_;  // before compiler_: open until its threads are gone
  std::mutex mutex_;
  std::vector<Done> done_;  // under mutex_
  BulkCompiler compiler_;   // last: its threads go before what they use
};

}  // namespace gpuk::detail
