// The Measurer over the workers of one model of a pooled sweep (tune/workers/pool_impl.hpp): deals the
// points out, gathers the outcomes, and rechecks the leaders on one GPU.
#include <algorithm>
#include <map>
#include <set>

#include "gpuk/error.hpp"
#include "tune/report/outcome_json.hpp"
#include "tune/measure/compile_wave.hpp"
#include "tune/workers/pool_impl.hpp"
#include "tune/sweep/stopwatch.hpp"

namespace gpuk::detail {

using nlohmann::json;

namespace {

// A Measurer over the workers of one model.
class PoolMeasurer : public Measurer {
 public:
  PoolMeasurer(WorkerPool::Impl& pool, std::vector<std::size_t> group) : pool_(pool), group_(std::move(group)) {
    const WorkerInfo& first = pool_.procs[group_.front()].info;
    if (pool_.wave.compiler)
      if (auto compile = pool_.wave.compiler(first))
        wave_ = std::make_unique<CompileWave>(pool_.space, first.limits, first.leading_args, std::move(compile),
                                              pool_.wave.threads, &pool_.wave_stats);
  }

  LaunchLimits limits() const override { return pool_.procs[group_.front()].info.limits; }
  std::vector<std::string> leading_args() const override { return pool_.procs[group_.front()].info.leading_args; }

  void prepare(const Space& space, const std::vector<Candidate>& points) override {
    if (wave_) return prepare_in_wave(space, points);
    pool_.greet_all();
    // Dealt round-robin; each worker compiles its share in the background. Points measured
    // already (the recheck's leaders) are timed again on the group's first worker: it compiles
    // those it has not, in bulk, now, rather than one at a time when each is timed.
    std::vector<std::vector<std::uint64_t>> shares(group_.size());
    std::vector<std::uint64_t> again;
    for (const Candidate& c : points) {
      const std::uint64_t index = space.index_of(c);
      if (done_.count(index)) {
        again.push_back(index);
        continue;
      }
      if (ready_.count(index) || in_flight(index) || queued(index)) continue;
      shares[next_++ % group_.size()].push_back(index);
    }
    if (!again.empty()) send(pool_.procs[group_.front()].to, {{"op", "prepare"}, {"points", again}});
    for (std::size_t k = 0; k < group_.size(); ++k) {
      if (shares[k].empty()) continue;
      auto& p = pool_.procs[group_[k]];
      p.queue.insert(p.queue.end(), shares[k].begin(), shares[k].end());
      send(p.to, {{"op", "prepare"}, {"points", shares[k]}});
    }
  }

  Outcome measure(const Space& space, const Candidate& c) override {
    const Stopwatch measuring(in_measure_);
    pool_.greet_all();
    const std::uint64_t index = space.index_of(c);
    if (!ready_.count(index) && !in_flight(index) && !queued(index) && !compiling_.count(index)) {
      // Not announced (a strategy that measures one point at a time): first in line.
      if (!wave_ || wave_->submitted(index)) deal(index, true);
      else compile({index});
    }
    wanted_ = index;
    while (!ready_.count(index)) {
      if (wave_) take_compiled();
      to_front(index);
      pool_.feed(group_);
      const bool idle = !any_busy();
      std::optional<std::pair<std::size_t, json>> got;
      {
        double waited = 0;
        {
          const Stopwatch waiting(waited);
          got = pool_.wait_any(group_, wave_ ? wave_->fd() : -1);
        }
        if (idle) compile_wait_ += waited;  // no worker had anything to measure: the compiles
      }
      if (!got) continue;  // a program compiled
      auto [point, outcome] = pool_.take_outcome(got->first, got->second);
      ready_.emplace(point, std::move(outcome));
    }
    Outcome o = std::move(ready_.at(index));
    ready_.erase(index);
    done_.insert(index);
    return o;
  }

  SweepTimes times() const override {
    SweepTimes t;
    if (!wave_) return t;  // tune() counts the time inside measure()
    wave_->add_times(t);
    t.compile_wait = compile_wait_;
    t.measure = std::max(0.0, in_measure_ - compile_wait_);
    return t;
  }

  std::vector<double> time(const Space& space, const Candidate& c, int repeats) override {
    // The leaders' recheck: every point on one GPU, after what is measuring has come back and
    // with what was announced but not started dropped.
    pool_.greet_all();
    for (std::size_t w : group_) pool_.procs[w].queue.clear();
    compiling_.clear();  // compiled all the same, not dealt out
    while (any_busy()) {
      auto [w, answer] = pool_.wait_one(group_);
      auto [point, outcome] = pool_.take_outcome(w, answer);
      ready_.emplace(point, std::move(outcome));
    }
    const std::size_t w = group_.front();
    auto& p = pool_.procs[w];
    pool_.adopt(w, space.index_of(c));
    send(p.to, {{"op", "time"}, {"point", space.index_of(c)}, {"repeats", repeats}});
    p.busy = space.index_of(c);
    const json answer = pool_.read_answer(w);
    p.busy.reset();
    if (answer.contains("samples")) return answer.at("samples").get<std::vector<double>>();
    if (answer.contains("lost")) {
      Outcome o = outcome_from_json(answer.at("outcome"));
      o.device = p.info.ordinal;
      const std::string why = answer.at("lost");
      pool_.replace(w, answer);
      throw ContextLost(why, std::move(o));
    }
    const std::string why = answer.contains("aborted") ? answer.at("aborted").get<std::string>() : answer.value("error", "no answer");
    throw SweepAborted("the worker on GPU " + std::to_string(p.info.ordinal) + ": " + why);
  }

 private:
  // With the compile wave: a point compiled before (or pruned) is dealt at once; the others go
  // to the wave, and are dealt as their programs are done. Leaders timed again go to the first
  // worker's process (its program, where it lacks it).
  void prepare_in_wave(const Space& space, const std::vector<Candidate>& points) {
    std::vector<std::uint64_t> fresh;
    for (const Candidate& c : points) {
      const std::uint64_t index = space.index_of(c);
      if (done_.count(index)) {
        pool_.adopt(group_.front(), index);
        continue;
      }
      if (ready_.count(index) || in_flight(index) || queued(index) || compiling_.count(index)) continue;
      if (wave_->submitted(index)) deal(index, false);
      else fresh.push_back(index);
    }
    compile(fresh);
  }

  void compile(const std::vector<std::uint64_t>& points) {
    if (points.empty()) return;
    compiling_.insert(points.begin(), points.end());
    wave_->submit(points);
  }

  // The programs the wave has done: to every worker of the group (each loads it from the cache
  // in the background), and their points dealt out.
  void take_compiled() {
    for (auto& done : wave_->take_done()) {
      if (!done.program.names.empty()) {
        json request = {{"op", "adopt"}, {"points", done.points}, {"names", done.program.names},
                        {"errors", done.program.errors}};
        const auto shared = std::make_shared<const json>(std::move(request));
        for (std::uint64_t point : done.points) pool_.programs[point] = shared;
        for (std::size_t w : group_) {
          try {
            pool_.adopt(w, done.points.front());
          } catch (const Error&) {
            // A worker that died idle: found and replaced when a point is dealt to it.
          }
        }
      }
      for (std::uint64_t point : done.points)
        if (compiling_.erase(point)) deal(point, point == wanted_);
    }
  }

  // Into the next worker's queue (at its front when it is wanted now).
  void deal(std::uint64_t index, bool front) {
    auto& q = pool_.procs[group_[next_++ % group_.size()]].queue;
    if (front) q.push_front(index);
    else q.push_back(index);
  }

  // Wanted now: to the front of its queue.
  void to_front(std::uint64_t index) {
    for (std::size_t w : group_) {
      auto& q = pool_.procs[w].queue;
      if (const auto it = std::find(q.begin(), q.end(), index); it != q.end() && it != q.begin()) {
        q.erase(it);
        q.push_front(index);
      }
    }
  }

  bool queued(std::uint64_t index) const {
    for (std::size_t w : group_) {
      const auto& q = pool_.procs[w].queue;
      if (std::find(q.begin(), q.end(), index) != q.end()) return true;
    }
    return false;
  }
  bool in_flight(std::uint64_t index) const {
    for (std::size_t w : group_)
      if (pool_.procs[w].busy == index) return true;
    return false;
  }
  bool any_busy() const {
    for (std::size_t w : group_)
      if (pool_.procs[w].busy) return true;
    return false;
  }

  WorkerPool::Impl& pool_;
  std::vector<std::size_t> group_;
  std::map<std::uint64_t, Outcome> ready_;  // measured ahead of being asked
  std::set<std::uint64_t> done_;            // returned by measure()
  std::size_t next_ = 0;
  std::unique_ptr<CompileWave> wave_;       // the parent compiles (WaveOptions), or none
  std::set<std::uint64_t> compiling_;       // in the wave, to be dealt out when compiled
  std::optional<std::uint64_t> wanted_;     // the point measure() waits for
  double in_measure_ = 0, compile_wait_ = 0;
};

}  // namespace

std::unique_ptr<Measurer> make_pool_measurer(WorkerPool::Impl& pool, std::vector<std::size_t> group) {
  return std::make_unique<PoolMeasurer>(pool, std::move(group));
}

}  // namespace gpuk::detail
