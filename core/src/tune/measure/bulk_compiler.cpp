// The bulk compiles of a sweep (tune/measure/bulk_compiler.hpp).
#include "tune/measure/bulk_compiler.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "jit/same_code.hpp"
#include "kernel/kernel_file.hpp"

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

namespace {

// Points whose kernels are the same machine code (jit/same_code.hpp): one group, one compile.
struct CodeGroup {
  std::vector<const PlannedPoint*> points;
  std::vector<std::string> code;  // the kernels' canonical names
};

// How far ahead a program looks for groups that share kernels with it.
constexpr std::size_t kShareWindow = 64;
// Programs per compile thread before groups share a program: one group per program gives the
// GPU its first variant soonest and spreads kernels of unequal cost (0.05 to 0.7 s of NVRTC each)
// evenly over the threads; NVRTC's own cost per program (about 45 ms) is then a tenth or less.
constexpr std::size_t kProgramsPerThread = 8;

}  // namespace

std::vector<std::shared_ptr<Chunk>> group_into_chunks(const Space& space, const std::vector<PlannedPoint>& points,
                                                      int threads, std::vector<std::vector<Candidate>>* members) {
  std::map<std::size_t, std::vector<const PlannedPoint*>> by_file;
  for (const auto& p : points) by_file[p.point.file].push_back(&p);
  std::map<std::size_t, std::vector<CodeGroup>> groups;
  std::size_t group_count = 0;
  for (const auto& [f, planned] : by_file) {
    const SameCode same(*space.files()[f].file);
    std::map<std::vector<std::string>, std::size_t> index;
    auto& mine = groups[f];
    for (const PlannedPoint* p : planned) {
      std::vector<std::string> code;
      for (const auto& name : p->names) code.push_back(same.canonical(name));
      const auto [it, fresh] = index.emplace(code, mine.size());
      if (fresh) mine.push_back({{}, std::move(code)});
      mine[it->second].points.push_back(p);
    }
    group_count += mine.size();
  }
  const auto t = static_cast<std::size_t>(std::max(1, threads));
  const std::size_t per_program = (group_count + kProgramsPerThread * t - 1) / (kProgramsPerThread * t);
  std::vector<std::shared_ptr<Chunk>> out;
  if (members) members->clear();
  for (auto& [f, list] : groups) {
    std::vector<bool> taken(list.size(), false);
    for (std::size_t first = 0; first < list.size(); ++first) {
      if (taken[first]) continue;
      // The program: this group, then those that share the most kernels with it (the next in
      // order when none does), up to per_program groups.
      std::vector<std::size_t> chosen{first};
      taken[first] = true;
      std::set<std::string> code(list[first].code.begin(), list[first].code.end());
      // A file whose parameters are -D definitions holds one variant per program (its
      // definitions are the program's).
      const bool one_variant = space.files()[f].file->params_as == ParamsAs::defines;
      while (!one_variant && chosen.size() < per_program) {
        std::size_t best = list.size(), best_shared = 0;
        for (std::size_t j = first + 1; j < list.size() && j <= first + kShareWindow; ++j) {
          if (taken[j]) continue;
          if (best == list.size()) best = j;  // the next in order, unless one shares
          const auto shared = static_cast<std::size_t>(
              std::count_if(list[j].code.begin(), list[j].code.end(), [&](const std::string& n) { return code.count(n) > 0; }));
          if (shared > best_shared) best = j, best_shared = shared;
        }
        if (best == list.size())
          for (std::size_t j = first + 1; j < list.size() && best == list.size(); ++j)
            if (!taken[j]) best = j;
        if (best == list.size()) break;
        taken[best] = true;
        chosen.push_back(best);
        code.insert(list[best].code.begin(), list[best].code.end());
      }
      auto chunk = std::make_shared<Chunk>();
      chunk->file_index = f;
      chunk->file = space.files()[f].file;
      std::vector<Candidate> in;
      for (std::size_t g : chosen)
        for (const PlannedPoint* p : list[g].points) {
          in.push_back(p->point);
          for (const auto& name : p->names)
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
      stats_(stats), pool_(threads_, kCompileNice) {}

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
      c.compiled.assign(c.names.size(), nullptr);
      c.errors.assign(c.names.size(), {});
      for (const auto& program : programs_by_defines(c.names)) {
        const auto compiled = compile_one(c, program, false);
        for (const auto& name : program) c.compiled[c.index_of(name)] = compiled;
      }
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

const SameCode& BulkCompiler::same_code(const std::shared_ptr<const KernelFile>& file) {
  std::lock_guard lock(mutex_);
  for (const auto& [f, same] : same_code_)
    if (f == file) return *same;
  same_code_.emplace_back(file, std::make_unique<const SameCode>(*file));
  return *same_code_.back().second;
}

// Said with a compile error: the names NVRTC was given instead of the variants' own.
std::string BulkCompiler::renamed_note(const Chunk& chunk, const std::vector<std::string>& names,
                                       const SharedNames& shared) {
  const SameCode& same = same_code(chunk.file);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& as = shared.compile[shared.at[i]];
    if (as == names[i]) continue;
    const std::string entry = names[i].substr(0, names[i].find('<'));
    std::string params;
    for (const auto& p : same.unused(entry)) params += (params.empty() ? "" : ", ") + p;
    return "(compiled as " + as + ", the same machine code as " + names[i] + ": " + entry + " does not use " + params +
           "; jit/same_code.hpp)";
  }
  return {};
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
  // Kernels that are the same machine code under several names are compiled once, under one.
  const SharedNames shared = shared_names(same_code(chunk.file), names);
  try {
    if (!shared.renamed) {
      c = std::make_shared<const CompiledKernels>(compile_(*chunk.file, names));
    } else {
      CompiledKernels as = compile_(*chunk.file, shared.compile);
      std::vector<std::string> lowered;
      for (std::size_t i = 0; i < names.size(); ++i) lowered.push_back(as.lowered(shared.compile[shared.at[i]]));
      as.name_expressions = names;
      as.lowered_names = std::move(lowered);
      c = std::make_shared<const CompiledKernels>(std::move(as));
    }
  } catch (const Error& e) {
    error = e.what();
    if (shared.renamed) error += "\n" + renamed_note(chunk, names, shared);
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

// On a pool thread: one program for the chunk (one per set of -D definitions, when a launch has
// its own); when it fails, one per name, to find the variants at fault (one bad instantiation
// fails the whole program).
void BulkCompiler::compile(Chunk& chunk) {
  chunk.compiled.assign(chunk.names.size(), nullptr);
  chunk.errors.assign(chunk.names.size(), {});
  for (const auto& program : programs_by_defines(chunk.names)) compile_program(chunk, program);
}

void BulkCompiler::compile_program(Chunk& chunk, const std::vector<std::string>& names) {
  try {
    const auto c = compile_one(chunk, names);
    for (const auto& name : names) chunk.compiled[chunk.index_of(name)] = c;
    return;
  } catch (const CompileError& e) {
    if (names.size() == 1) {
      chunk.errors[chunk.index_of(names[0])] = e.what();
      return;
    }
  }
  for (const auto& name : names) {
    try {
      chunk.compiled[chunk.index_of(name)] = compile_one(chunk, {name});
    } catch (const CompileError& e) {
      chunk.errors[chunk.index_of(name)] = e.what();
    }
  }
}

}  // namespace gpuk
