// The parent's side of a pooled sweep (tune/workers/pool.hpp): its worker processes and the scheduling
// of points over them; PoolMeasurer (pool_measurer.cpp) is the Measurer over one group. Not
// installed.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "tune/workers/pool.hpp"
#include "tune/workers/pool_wire.hpp"
#include "tune/workers/spawner.hpp"

namespace gpuk {

namespace detail {

struct WorkerProcess {
  WorkerInfo info;
  pid_t pid = -1;
  int to = -1;  // requests
  std::unique_ptr<LineReader> from;  // answers
  std::optional<std::uint64_t> busy;  // the point it is measuring
  std::deque<std::uint64_t> queue;    // points dealt to it, not yet sent
  std::chrono::steady_clock::time_point spawned;  // its current process's fork
  std::set<const nlohmann::json*> adopted;         // the wave's programs its current process has
  bool planned = false;  // info's device, limits and leading args came from the parent, not a greeting yet
  bool greeted = false;  // its current process has said hello
};

}  // namespace detail

struct WorkerPool::Impl {
  const Space& space;
  WorkerFactory factory;
  std::vector<detail::WorkerProcess> procs;
  std::vector<WorkerInfo> infos;  // a copy of procs[i].info for workers()
  WaveOptions wave;
  CompileStats wave_stats;  // the parent's compiles
  // The compile wave's programs: per point, the "adopt" request that gives a worker its program.
  std::map<std::uint64_t, std::shared_ptr<const nlohmann::json>> programs;
  std::unique_ptr<detail::Spawner> spawner;  // forks the workers (made before any compile thread)

  Impl(const Space& s, WorkerFactory f, WaveOptions w) : space(s), factory(std::move(f)), wave(std::move(w)) {}
  ~Impl();  // asks the workers to end; kills those that do not within a few seconds

  // A fresh process for worker w, ready to measure.
  void start(std::size_t w);
  // Starts worker w's process (through the spawner); greet() waits for it to be ready. Several workers spawned before
  // any is greeted set up their GPUs (context, data, reference) side by side.
  void spawn(std::size_t w);
  // Waits for worker w's process to report its GPU (throws the worker's own message when it
  // cannot start), then gives it the points already dealt to it.
  void greet(std::size_t w);
  // Greets every worker not greeted yet: at the first request to any (workers started with
  // their GPUs known set up their GPUs while the parent's compile wave runs).
  void greet_all();
  // Closes the pipes and waits for the process; its exit status.
  int reap(std::size_t w);
  // The worker's CUDA context is gone (or the worker is): a fresh process takes its place.
  void restart(std::size_t w);
  // An answer that says the worker lost its context or died: a fresh process takes its place.
  void replace(std::size_t w, const nlohmann::json& answer);
  // Gives worker w the compiled program of `point` unless its process has it (or it has none).
  void adopt(std::size_t w, std::uint64_t point);
  void dispatch(std::size_t w, std::uint64_t point);
  // Gives every idle worker of `group` its next point: its own queue first, then the longest other.
  void feed(const std::vector<std::size_t>& group);
  // Waits for one answer of a busy worker of `group`; returns the worker and the answer (an
  // outcome recorded as faulted when the worker died without one).
  std::pair<std::size_t, nlohmann::json> wait_one(const std::vector<std::size_t>& group);
  // The same, also woken by `also` (a compile wave's fd) becoming readable: then nullopt.
  std::optional<std::pair<std::size_t, nlohmann::json>> wait_any(const std::vector<std::size_t>& group, int also);
  nlohmann::json read_answer(std::size_t w);
  // Records an answer to a measure request; restarts the worker when it lost its context.
  std::pair<std::uint64_t, Outcome> take_outcome(std::size_t w, const nlohmann::json& answer);
};

namespace detail {

// A Measurer over the workers of one model.
std::unique_ptr<Measurer> make_pool_measurer(WorkerPool::Impl& pool, std::vector<std::size_t> group);

}  // namespace detail

}  // namespace gpuk
