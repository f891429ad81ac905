// The bulk compiles of a sweep (tune/bulk_compiler.hpp).
#include "tune/bulk_compiler.hpp"

#include <algorithm>
#include <map>

#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "run/device.hpp"

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

std::vector<std::shared_ptr<Chunk>> group_into_chunks(const Space& space, const std::vector<PlannedPoint>& points,
                                                      int threads, std::vector<std::vector<Candidate>>* members) {
  std::map<std::size_t, std::vector<const PlannedPoint*>> by_file;
  for (const auto& p : points) by_file[p.point.file].push_back(&p);
  const auto t = static_cast<std::size_t>(std::max(1, threads));
  const std::size_t per_program = (points.size() + t - 1) / t;
  std::vector<std::shared_ptr<Chunk>> out;
  if (members) members->clear();
  for (auto& [f, planned] : by_file) {
    for (std::size_t begin = 0; begin < planned.size(); begin += per_program) {
      auto chunk = std::make_shared<Chunk>();
      chunk->file_index = f;
      chunk->file = space.files()[f].file;
      std::vector<Candidate> in;
      const std::size_t end = std::min(planned.size(), begin + per_program);
      for (std::size_t i = begin; i < end; ++i) {
        in.push_back(planned[i]->point);
        for (const auto& name : planned[i]->names)
          if (std::find(chunk->names.begin(), chunk->names.end(), name) == chunk->names.end())
            chunk->names.push_back(name);
      }
      out.push_back(std::move(chunk));
      if (members) members->push_back(std::move(in));
    }
  }
  return out;
}

BulkCompiler::BulkCompiler(CompileProgram compile, int threads, CompileStats* stats)
    : compile_(std::move(compile)),
      threads_(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      stats_(stats), pool_(threads_) {}

void BulkCompiler::run(const std::shared_ptr<Chunk>& chunk, int variants, std::function<void(Chunk&)> job) {
  {
    std::lock_guard lock(mutex_);
    if (stats_) stats_->variants += variants;
  }
  auto promise = std::make_shared<std::promise<void>>();
  chunk->done = promise->get_future().share();
  pool_.submit([chunk, promise, job = std::move(job)] {
    job(*chunk);
    promise->set_value();
  });
}

void BulkCompiler::submit(const std::shared_ptr<Chunk>& chunk, int variants, std::function<void()> on_done) {
  run(chunk, variants, [this, on_done = std::move(on_done)](Chunk& c) {
    compile(c);
    if (on_done) on_done();
  });
}

void BulkCompiler::adopt(const std::shared_ptr<Chunk>& chunk, std::vector<std::string> errors) {
  errors.resize(chunk->names.size());
  const bool all_compiled = std::all_of(errors.begin(), errors.end(), [](const std::string& e) { return e.empty(); });
  // Taken from the cache, not compiled: the statistics count compiles only (`variants` aside).
  run(chunk, 0, [this, all_compiled, errors = std::move(errors)](Chunk& c) {
    if (all_compiled) {
      c.compiled.assign(c.names.size(), compile_one(c, c.names, false));
      c.errors.assign(c.names.size(), {});
      return;
    }
    c.compiled.assign(c.names.size(), nullptr);
    c.errors = errors;
    for (std::size_t i = 0; i < c.names.size(); ++i) {
      if (!c.errors[i].empty()) continue;
      try {
        c.compiled[i] = compile_one(c, {c.names[i]}, false);
      } catch (const CompileError& e) {
        c.errors[i] = e.what();
      }
    }
  });
}

void BulkCompiler::add_times(SweepTimes& t) const {
  std::lock_guard lock(mutex_);
  t.compile_sum = sum_;
  if (first_ && last_ > *first_) t.compile_wall = std::chrono::duration<double>(last_ - *first_).count();
}

std::shared_ptr<const CompiledKernels> BulkCompiler::compile_one(const Chunk& chunk,
                                                                 const std::vector<std::string>& names, bool count) {
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (!first_) first_ = start;
  }
  std::shared_ptr<const CompiledKernels> c;
  std::string error;
  try {
    c = std::make_shared<const CompiledKernels>(compile_(*chunk.file, names));
  } catch (const Error& e) {
    error = e.what();
  }
  {
    std::lock_guard lock(mutex_);
    const auto end = std::chrono::steady_clock::now();
    const double took = std::chrono::duration<double>(end - start).count();
    last_ = end;
    sum_ += took;
    if (stats_ && count) {
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
