// The bulk compiles of a sweep (tune/bulk_compiler.hpp).
#include "tune/bulk_compiler.hpp"

#include <algorithm>

#include "gpuk/error.hpp"

namespace gpuk {

std::size_t Chunk::index_of(const std::string& name) const {
  return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

std::string compile_error_of(const std::string& message) {
  const auto at = message.find("error");
  if (at == std::string::npos) return "NVRTC could not compile it";
  std::string line = message.substr(at, message.find('\n', at) - at);
  return line.size() > 100 ? line.substr(0, 97) + "..." : line;
}

BulkCompiler::BulkCompiler(JitOptions options, const CompileCache* cache, int threads, CompileStats* stats)
    : threads_(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      jit_(std::move(options), cache), stats_(stats), pool_(threads_) {}

void BulkCompiler::submit(const std::shared_ptr<Chunk>& chunk, int variants) {
  {
    std::lock_guard lock(mutex_);
    if (stats_) stats_->variants += variants;
  }
  auto promise = std::make_shared<std::promise<void>>();
  chunk->done = promise->get_future().share();
  pool_.submit([this, chunk, promise] {
    compile(*chunk);
    promise->set_value();
  });
}

void BulkCompiler::add_times(SweepTimes& t) const {
  std::lock_guard lock(mutex_);
  t.compile_sum = sum_;
  if (first_ && last_ > *first_) t.compile_wall = std::chrono::duration<double>(last_ - *first_).count();
}

std::shared_ptr<const CompiledKernels> BulkCompiler::compile_one(const Chunk& chunk,
                                                                 const std::vector<std::string>& names) {
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (!first_) first_ = start;
  }
  std::shared_ptr<const CompiledKernels> c;
  std::string error;
  try {
    c = std::make_shared<const CompiledKernels>(jit_.compile(*chunk.file, names));
  } catch (const Error& e) {
    error = e.what();
  }
  {
    std::lock_guard lock(mutex_);
    const auto end = std::chrono::steady_clock::now();
    const double took = std::chrono::duration<double>(end - start).count();
    last_ = end;
    sum_ += took;
    if (stats_) {
      ++stats_->programs;
      if (c && c->from_cache) ++stats_->from_cache;
      stats_->seconds += took;
    }
  }
  if (!c) throw CompileError(error);
  return c;
}

// On a pool thread: one program for the chunk; when it fails, one per name, to find the
// variants at fault (one bad instantiation fails the whole program).
void BulkCompiler::compile(Chunk& chunk) {
  chunk.compiled.assign(chunk.names.size(), nullptr);
  chunk.errors.assign(chunk.names.size(), {});
  try {
    const auto c = compile_one(chunk, chunk.names);
    std::fill(chunk.compiled.begin(), chunk.compiled.end(), c);
    return;
  } catch (const CompileError& e) {
    if (chunk.names.size() == 1) {
      chunk.errors[0] = e.what();
      return;
    }
  }
  for (std::size_t i = 0; i < chunk.names.size(); ++i) {
    try {
      chunk.compiled[i] = compile_one(chunk, {chunk.names[i]});
    } catch (const CompileError& e) {
      chunk.errors[i] = e.what();
    }
  }
}

}  // namespace gpuk
