// The bulk compiles of a sweep: the variants of one kernel file in small NVRTC programs, each kernel
// compiled once however many variants share its code, on a thread pool, into the compile cache,
// while the GPU measures what is ready.
#pragma once
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jit/jit.hpp"
#include "jit/same_code.hpp"
#include "tune/sweep/measurer.hpp"
#include "tune/sweep/space.hpp"
#include "tune/measure/thread_pool.hpp"

namespace gpuk {

struct DeviceInfo;
class KernelLibrary;

// One NVRTC program's worth of variants of one kernel file.
struct Chunk {
  std::size_t file_index = 0;  // in the space's files
  std::shared_ptr<const KernelFile> file;
  std::vector<std::string> names;
  std::shared_future<void> done;
  // Filled by the compiling thread before `done` is ready: per name, its CUBIN or its error.
  std::vector<std::shared_ptr<const CompiledKernels>> compiled;
  std::vector<std::string> errors;

  std::size_t index_of(const std::string& name) const;
};

// A point to compile and the kernels (name expressions) its launches need.
struct PlannedPoint {
  Candidate point;
  std::vector<std::string> names;
};
// The programs for `points` (new ones, in the order given), by kernel file. Points whose kernels
// are the same machine code (jit/same_code.hpp: they differ only in parameters the entries do not
// use) form one group, compiled once. A program holds one group, so that the GPU gets its first
// variant soonest and kernels of unequal cost spread evenly over the threads; only past 8 groups
// per thread does it hold several: a group, then those that share the most kernels with it (the
// histogram kernel of radix sort variants that differ in the pass kernel's parameters), else the
// next in order.
std::vector<std::shared_ptr<Chunk>> group_into_chunks(const Space& space, const std::vector<PlannedPoint>& points,
                                                      int threads, std::vector<std::vector<Candidate>>* members);

class BulkCompiler {
 public:
  // How much lower the compile threads' priority is than the rest of the process (nice): a
  // sweep's measuring thread, and a pool's workers starting beside the parent's compile wave,
  // take the cores first when there are fewer cores than threads.
  static constexpr int kCompileNice = 5;
  // One NVRTC program (Jit::compile, or a test's fake): throws CompileError when it fails.
  using CompileProgram = std::function<CompiledKernels(const KernelFile&, const std::vector<std::string>&)>;
  // threads 0: every core. `stats`, when given, counts the programs and variants.
  BulkCompiler(CompileProgram compile, int threads, CompileStats* stats);

  int threads() const { return threads_; }
  // Compiles the chunk in the background (chunk->done is set here), counting `variants`;
  // `on_done` (optional) is called on the compiling thread once it is done.
  void submit(const std::shared_ptr<Chunk>& chunk, int variants, std::function<void()> on_done = {});
  // A chunk another process compiled into the compile cache with these per-name errors ("" for
  // a name that compiled): the names that compiled are taken (from the cache, as that process
  // compiled them: in one program when none failed, else one by one); the errors are kept as
  // they are, not compiled again.
  void adopt(const std::shared_ptr<Chunk>& chunk, std::vector<std::string> errors);
  // NVRTC time summed over the threads, and the span from the first compile's start to the
  // last one's end, into `t`.
  void add_times(SweepTimes& t) const;

 private:
  void run(const std::shared_ptr<Chunk>& chunk, int variants, std::function<void(Chunk&)> job);
  void compile(Chunk& chunk);
  // One program of the chunk (names of one set of -D definitions: programs_by_defines).
  void compile_program(Chunk& chunk, const std::vector<std::string>& names);
  // One program; `count`: into the statistics (a compile, not a chunk adopted from the cache).
  std::shared_ptr<const CompiledKernels> compile_one(const Chunk& chunk, const std::vector<std::string>& names,
                                                     bool count = true);
  // The file's SameCode, read once per compiler.
  const SameCode& same_code(const std::shared_ptr<const KernelFile>& file);
  std::string renamed_note(const Chunk& chunk, const std::vector<std::string>& names, const SharedNames& shared);

  CompileProgram compile_;
  int threads_;
  CompileStats* stats_;
  mutable std::mutex mutex_;
  std::optional<std::chrono::steady_clock::time_point> first_;  // under mutex_
  std::chrono::steady_clock::time_point last_;
  double sum_ = 0;
  std::vector<std::pair<std::shared_ptr<const KernelFile>, std::unique_ptr<const SameCode>>> same_code_;  // under mutex_
  ThreadPool pool_;  // last: its threads go before what they use
};

// The first "error: ..." line of an NVRTC log.
std::string compile_error_of(const std::string& message);

}  // namespace gpuk
