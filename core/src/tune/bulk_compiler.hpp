// The bulk compiles of a sweep: the variants of one kernel file in as few NVRTC programs as there
// are threads, on a thread pool, into the compile cache, while the GPU measures what is ready.
#pragma once
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jit/jit.hpp"
#include "tune/measurer.hpp"
#include "tune/thread_pool.hpp"

namespace gpuk {

// One NVRTC program's worth of variants of one kernel file.
struct Chunk {
  std::shared_ptr<const KernelFile> file;
  std::vector<std::string> names;
  std::shared_future<void> done;
  // Filled by the compiling thread before `done` is ready: per name, its CUBIN or its error.
  std::vector<std::shared_ptr<const CompiledKernels>> compiled;
  std::vector<std::string> errors;

  std::size_t index_of(const std::string& name) const;
};

class BulkCompiler {
 public:
  // threads 0: every core. `stats`, when given, counts the programs and variants.
  BulkCompiler(JitOptions options, const CompileCache* cache, int threads, CompileStats* stats);

  int threads() const { return threads_; }
  const Jit& jit() const { return jit_; }
  // Compiles the chunk in the background (chunk->done is set here), counting `variants`.
  void submit(const std::shared_ptr<Chunk>& chunk, int variants);
  // NVRTC time summed over the threads, and the span from the first compile's start to the
  // last one's end, into `t`.
  void add_times(SweepTimes& t) const;

 private:
  void compile(Chunk& chunk);
  std::shared_ptr<const CompiledKernels> compile_one(const Chunk& chunk, const std::vector<std::string>& names);

  int threads_;
  Jit jit_;
  CompileStats* stats_;
  mutable std::mutex mutex_;
  std::optional<std::chrono::steady_clock::time_point> first_;  // under mutex_
  std::chrono::steady_clock::time_point last_;
  double sum_ = 0;
  ThreadPool pool_;  // last: its threads go before what they use
};

// The first "error: ..." line of an NVRTC log.
std::string compile_error_of(const std::string& message);

}  // namespace gpuk
