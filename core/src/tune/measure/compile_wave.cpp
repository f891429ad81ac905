// The compile wave of a pooled sweep (tune/measure/compile_wave.hpp).
#include "tune/measure/compile_wave.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "gpuk/error.hpp"
#include "run/prepare.hpp"

namespace gpuk::detail {

CompileWave::CompileWave(const Space& space, LaunchLimits limits, std::vector<std::string> leading,
                         BulkCompiler::CompileProgram compile, int threads, CompileStats* stats)
    : space_(space), limits_(limits), leading_(std::move(leading)), compiler_(std::move(compile), threads, stats) {}

CompileWave::Pipe::Pipe() {
  if (::pipe(fds) != 0) throw Error("cannot create the pipe of the compile wave");
  for (int fd : fds) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
}

CompileWave::Pipe::~Pipe() {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
}

void CompileWave::submit(const std::vector<std::uint64_t>& points) {
  std::vector<PlannedPoint> planned;
  std::vector<std::uint64_t> unplanned;
  for (std::uint64_t index : points) {
    if (!submitted_.insert(index).second) continue;
    const Candidate c = space_.at(index);
    LaunchPlan plan;
    if (space_.prune(c, leading_, limits_, &plan)) unplanned.push_back(index);
    else planned.push_back({c, kernel_names(plan)});
  }
  if (!unplanned.empty()) {
    std::lock_guard lock(mutex_);
    for (std::uint64_t index : unplanned) done_.push_back({{index}, {}});
    (void)!::write(pipe_.fds[1], "p", 1);
  }
  if (planned.empty()) return;
  std::vector<std::vector<Candidate>> members;
  const auto chunks = group_into_chunks(space_, planned, compiler_.threads(), &members);
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    const std::shared_ptr<Chunk> chunk = chunks[k];
    Done done;
    for (const auto& c : members[k]) done.points.push_back(space_.index_of(c));
    done.program.points = members[k];
    done.program.names = chunk->names;
    compiler_.submit(chunk, static_cast<int>(members[k].size()), [this, chunk, done = std::move(done)]() mutable {
      done.program.errors = chunk->errors;
      std::lock_guard lock(mutex_);
      done_.push_back(std::move(done));
      (void)!::write(pipe_.fds[1], "c", 1);
    });
  }
}

std::vector<CompileWave::Done> CompileWave::take_done() {
  char drain[256];
  while (::read(pipe_.fds[0], drain, sizeof drain) > 0) {
  }
  std::lock_guard lock(mutex_);
  std::vector<Done> out;
  out.swap(done_);
  return out;
}

}  // namespace gpuk::detail
