// The Measurer over the workers of one model of a pooled sweep (tune/pool_impl.hpp): deals the
// points out, gathers the outcomes, and rechecks the leaders on one GPU.
#include <algorithm>
#include <map>
#include <set>

#include "gpuk/error.hpp"
#include "tune/outcome_json.hpp"
#include "tune/pool_impl.hpp"

namespace gpuk::detail {

using nlohmann::json;

namespace {

// A Measurer over the workers of one model.
class PoolMeasurer : public Measurer {
 public:
  PoolMeasurer(WorkerPool::Impl& pool, std::vector<std::size_t> group) : pool_(pool), group_(std::move(group)) {}

  LaunchLimits limits() const override { return pool_.procs[group_.front()].info.limits; }
  std::vector<std::string> leading_args() const override { return pool_.procs[group_.front()].info.leading_args; }

  void prepare(const Space& space, const std::vector<Candidate>& points) override {
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
    const std::uint64_t index = space.index_of(c);
    if (!ready_.count(index) && !in_flight(index) && !queued(index)) {
      // Not announced (a strategy that measures one point at a time): first in line.
      auto& p = pool_.procs[group_[next_++ % group_.size()]];
      p.queue.push_front(index);
    } else if (queued(index)) {
      // Wanted now: to the front of its queue.
      for (std::size_t w : group_) {
        auto& q = pool_.procs[w].queue;
        if (const auto it = std::find(q.begin(), q.end(), index); it != q.end()) {
          q.erase(it);
          q.push_front(index);
        }
      }
    }
    while (!ready_.count(index)) {
      pool_.feed(group_);
      auto [w, answer] = pool_.wait_one(group_);
      auto [point, outcome] = pool_.take_outcome(w, answer);
      ready_.emplace(point, std::move(outcome));
    }
    Outcome o = std::move(ready_.at(index));
    ready_.erase(index);
    done_.insert(index);
    return o;
  }

  std::vector<double> time(const Space& space, const Candidate& c, int repeats) override {
    // The leaders' recheck: every point on one GPU, after what is measuring has come back and
    // with what was announced but not started dropped.
    for (std::size_t w : group_) pool_.procs[w].queue.clear();
    while (any_busy()) {
      auto [w, answer] = pool_.wait_one(group_);
      auto [point, outcome] = pool_.take_outcome(w, answer);
      ready_.emplace(point, std::move(outcome));
    }
    const std::size_t w = group_.front();
    auto& p = pool_.procs[w];
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
};

}  // namespace

std::unique_ptr<Measurer> make_pool_measurer(WorkerPool::Impl& pool, std::vector<std::size_t> group) {
  return std::make_unique<PoolMeasurer>(pool, std::move(group));
}

}  // namespace gpuk::detail
