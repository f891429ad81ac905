// The worker processes of a sweep over several GPUs (tune/pool.hpp).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "gpuk/error.hpp"
#include "tune/isolate.hpp"
#include "tune/outcome_json.hpp"
#include "tune/pool.hpp"

namespace gpuk {

using nlohmann::json;

// --- Device lists ----------------------------------------------------------------------------

std::vector<int> parse_device_list(const std::string& text, int count) {
  const std::string there = count == 0   ? "there is no GPU"
                            : count == 1 ? "there is 1 GPU (ordinal 0)"
                                         : "there are " + std::to_string(count) + " GPUs (ordinals 0 to " +
                                               std::to_string(count - 1) + ")";
  std::vector<int> out;
  if (text == "all") {
    if (count == 0) throw ConfigError("--devices all: " + there);
    for (int i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    int ordinal = -1;
    try {
      ordinal = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || ordinal < 0)
      throw ConfigError("--devices takes 'all' or GPU ordinals separated by commas (0,1), not '" + text + "'");
    if (ordinal >= count) throw ConfigError("--devices " + text + ": GPU " + item + " does not exist; " + there);
    out.push_back(ordinal);
  }
  if (out.empty()) throw ConfigError("--devices takes 'all' or GPU ordinals separated by commas (0,1), not '" + text + "'");
  return out;
}

int count_devices_in_child(std::string* why) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error("cannot create a pipe to count the GPUs");
  const pid_t pid = fork_process(
      [&] {
        ::close(fds[0]);
        std::string reason;
        const int n = device_count(&reason);
        const std::string msg = std::to_string(n) + " " + reason;
        (void)!::write(fds[1], msg.data(), msg.size());
        return 0;
      },
      "a process to count the GPUs");
  ::close(fds[1]);
  std::string msg;
  char buf[512];
  for (;;) {
    const ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got > 0) msg.append(buf, static_cast<std::size_t>(got));
    else if (got == 0 || errno != EINTR) break;
  }
  ::close(fds[0]);
  (void)wait_process(pid);
  const std::size_t space = msg.find(' ');
  if (msg.empty() || space == std::string::npos) {
    if (why) *why = "the process that counts the GPUs died";
    return 0;
  }
  if (why) *why = msg.substr(space + 1);
  return std::stoi(msg.substr(0, space));
}

// --- Lines of JSON over pipes ----------------------------------------------------------------

namespace {

constexpr int kLostExit = kGoOnExit;  // a worker whose CUDA context a variant took down

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("a worker's pipe closed");
    done += static_cast<std::size_t>(n);
  }
}

void send(int fd, const json& message) { write_all(fd, message.dump() + "\n"); }

// Reads lines from a pipe; next() blocks, ready() says whether a whole line is buffered.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  int fd() const { return fd_; }
  bool buffered() const { return buffer_.find('\n') != std::string::npos; }
  // The next line, or nullopt at the end of the stream.
  std::optional<std::string> next() {
    for (;;) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      char chunk[65536];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
};

json device_json(const DeviceInfo& d) {
  return {{"ordinal", d.ordinal}, {"name", d.name}, {"cc_major", d.cc_major}, {"cc_minor", d.cc_minor},
          {"sm_count", d.sm_count}, {"max_threads_per_block", d.max_threads_per_block},
          {"max_shared_per_block_optin", d.max_shared_per_block_optin}, {"l2_bytes", d.l2_bytes},
          {"total_memory", d.total_memory}, {"peak_bandwidth_gbs", d.peak_bandwidth_gbs},
          {"driver_version", d.driver_version}, {"pci_bus_id", d.pci_bus_id}};
}

DeviceInfo device_of(const json& j) {
  DeviceInfo d;
  d.ordinal = j.at("ordinal");
  d.name = j.at("name");
  d.cc_major = j.at("cc_major");
  d.cc_minor = j.at("cc_minor");
  d.sm_count = j.at("sm_count");
  d.max_threads_per_block = j.at("max_threads_per_block");
  d.max_shared_per_block_optin = j.at("max_shared_per_block_optin");
  d.l2_bytes = j.at("l2_bytes");
  d.total_memory = j.at("total_memory");
  d.peak_bandwidth_gbs = j.at("peak_bandwidth_gbs");
  d.driver_version = j.at("driver_version");
  d.pci_bus_id = j.value("pci_bus_id", std::string());
  return d;
}

// The worker process: serves requests until "quit" or the end of its input, then leaves without
// exit handlers (a kernel abandoned past its time limit may still run).
[[noreturn]] void worker_main(int in_fd, int out_fd, const Space& space, const WorkerFactory& factory, int ordinal) {
  int code = 0;
  try {
    const std::unique_ptr<WorkerSession> session = factory(ordinal);
    Measurer& m = session->measurer();
    const LaunchLimits l = m.limits();
    send(out_fd, {{"hello", true},
                  {"device", device_json(session->info())},
                  {"limits", {l.n, l.sm_count, l.elem_bytes, l.max_threads_per_block, l.max_shared_bytes}},
                  {"leading_args", m.leading_args()},
                  {"bytes_moved", session->bytes_moved()},
                  {"flushed", session->flushed()}});
    LineReader in(in_fd);
    while (const auto line = in.next()) {
      const json request = json::parse(*line);
      const std::string op = request.at("op");
      if (op == "quit") break;
      if (op == "stats") {
        const CompileStats s = session->compile_stats();
        const SweepTimes t = session->times();
        send(out_fd, {{"stats", {s.programs, s.from_cache, s.variants, s.seconds}},
                      {"times", {t.start, t.data, t.reference, t.compile_wall, t.compile_sum, t.compile_wait,
                                 t.measure, t.verify, t.recheck, t.save, t.total}},
                      {"notes", m.notes()}});
        continue;
      }
      if (op == "prepare") {
        std::vector<Candidate> points;
        for (const auto& i : request.at("points")) points.push_back(space.at(i.get<std::uint64_t>()));
        m.prepare(space, points);
        continue;
      }
      const Candidate c = space.at(request.at("point").get<std::uint64_t>());
      try {
        if (op == "measure") send(out_fd, {{"outcome", outcome_to_json(m.measure(space, c))}});
        else send(out_fd, {{"samples", m.time(space, c, request.at("repeats").get<int>())}});
      } catch (const ContextLost& e) {
        send(out_fd, {{"outcome", outcome_to_json(e.outcome)}, {"lost", e.what()}});
        code = kLostExit;
        break;
      } catch (const SweepAborted& e) {
        send(out_fd, {{"aborted", e.what()}});
        code = 1;
        break;
      }
    }
  } catch (const std::exception& e) {
    try {
      send(out_fd, {{"error", e.what()}});
    } catch (const std::exception&) {
    }
    code = 1;
  }
  std::_Exit(code);
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return "died of signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

}  // namespace

// --- The pool --------------------------------------------------------------------------------

struct WorkerProcess {
  WorkerInfo info;
  pid_t pid = -1;
  int to = -1;  // requests
  std::unique_ptr<LineReader> from;  // answers
  std::optional<std::uint64_t> busy;  // the point it is measuring
  std::deque<std::uint64_t> queue;    // points dealt to it, not yet sent
  std::chrono::steady_clock::time_point spawned;  // its current process's fork
};

struct WorkerPool::Impl {
  const Space& space;
  WorkerFactory factory;
  std::vector<WorkerProcess> procs;
  std::vector<WorkerInfo> infos;  // a copy of procs[i].info for workers()

  Impl(const Space& s, WorkerFactory f) : space(s), factory(std::move(f)) {}

  // A fresh process for worker w, ready to measure.
  void start(std::size_t w) {
    spawn(w);
    greet(w);
  }

  // Forks worker w's process; greet() waits for it to be ready. Several workers spawned before
  // any is greeted set up their GPUs (context, data, reference) side by side.
  void spawn(std::size_t w) {
    WorkerProcess& p = procs[w];
    if (cuda_initialised())
      throw Error("internal: the process that forks the GPU workers has initialised CUDA itself, so they could not "
                  "use the GPU");
    int down[2], up[2];
    if (::pipe(down) != 0 || ::pipe(up) != 0) throw Error("cannot create the pipes of a worker process");
    p.spawned = std::chrono::steady_clock::now();
    const pid_t pid = fork_process(
        [&]() -> int {
          // Only its own pipe ends: the parent sees a worker's end when that worker ends.
          for (const auto& other : procs) {
            if (other.to >= 0) ::close(other.to);
            if (other.from) ::close(other.from->fd());
          }
          ::close(down[1]);
          ::close(up[0]);
          worker_main(down[0], up[1], space, factory, p.info.ordinal);
        },
        "a worker process");
    ::close(down[0]);
    ::close(up[1]);
    ::fcntl(down[1], F_SETFD, FD_CLOEXEC);
    ::fcntl(up[0], F_SETFD, FD_CLOEXEC);
    p.pid = pid;
    p.to = down[1];
    p.from = std::make_unique<LineReader>(up[0]);
    p.busy.reset();
  }

  // Waits for worker w's process to report its GPU (throws the worker's own message when it
  // cannot start), then gives it the points already dealt to it.
  void greet(std::size_t w) {
    WorkerProcess& p = procs[w];
    const auto hello = p.from->next();
    json j;
    if (hello) j = json::parse(*hello);
    if (!hello || !j.contains("hello")) {
      const std::string why = j.contains("error") ? j.at("error").get<std::string>() : "it ended before it started";
      reap(w);
      throw Error("the worker on GPU " + std::to_string(p.info.ordinal) + " could not start: " + why);
    }
    p.info.device = device_of(j.at("device"));
    const auto& l = j.at("limits");
    p.info.limits.n = l[0].get<std::int64_t>();
    p.info.limits.sm_count = l[1].get<int>();
    p.info.limits.elem_bytes = l[2].get<int>();
    p.info.limits.max_threads_per_block = l[3].get<int>();
    p.info.limits.max_shared_bytes = l[4].get<int>();
    p.info.leading_args = j.at("leading_args").get<std::vector<std::string>>();
    p.info.bytes_moved = j.at("bytes_moved");
    p.info.flushed = j.at("flushed");
    p.info.start_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - p.spawned).count();
    infos[w] = p.info;
    if (!p.queue.empty()) send(p.to, {{"op", "prepare"}, {"points", p.queue}});
  }

  // Closes the pipes and waits for the process; its exit status.
  int reap(std::size_t w) {
    WorkerProcess& p = procs[w];
    if (p.to >= 0) ::close(p.to);
    if (p.from) ::close(p.from->fd());
    p.to = -1;
    p.from.reset();
    const int status = p.pid > 0 ? wait_process(p.pid) : 0;
    p.pid = -1;
    return status;
  }

  // The worker's CUDA context is gone (or the worker is): a fresh process takes its place.
  void restart(std::size_t w) {
    reap(w);
    ++procs[w].info.restarts;
    start(w);
  }

  void dispatch(std::size_t w, std::uint64_t point) {
    WorkerProcess& p = procs[w];
    p.busy = point;
    try {
      send(p.to, {{"op", "measure"}, {"point", point}});
    } catch (const Error&) {
      // It died while idle (killed from outside): a fresh one takes the point.
      ++p.info.restarts;
      start(w);
      p.busy = point;
      send(p.to, {{"op", "measure"}, {"point", point}});
    }
  }

  // Gives every idle worker of `group` its next point: its own queue first, then the longest other.
  void feed(const std::vector<std::size_t>& group) {
    for (std::size_t w : group) {
      WorkerProcess& p = procs[w];
      if (p.busy) continue;
      if (!p.queue.empty()) {
        const std::uint64_t point = p.queue.front();
        p.queue.pop_front();
        dispatch(w, point);
        continue;
      }
      std::size_t longest = w;
      for (std::size_t o : group)
        if (procs[o].queue.size() > procs[longest].queue.size()) longest = o;
      if (procs[longest].queue.empty()) continue;
      const std::uint64_t point = procs[longest].queue.back();  // its owner would come to it last
      procs[longest].queue.pop_back();
      dispatch(w, point);
    }
  }

  // Waits for one answer of a busy worker of `group`; returns the worker and the answer (an
  // outcome recorded as faulted when the worker died without one).
  std::pair<std::size_t, json> wait_one(const std::vector<std::size_t>& group) {
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<std::size_t> who;
      for (std::size_t w : group) {
        WorkerProcess& p = procs[w];
        if (!p.busy) continue;
        if (p.from->buffered()) return {w, read_answer(w)};
        fds.push_back({p.from->fd(), POLLIN, 0});
        who.push_back(w);
      }
      if (fds.empty()) throw Error("internal: no worker is measuring anything");
      const int n = ::poll(fds.data(), fds.size(), -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(std::string("poll on the workers' pipes failed: ") + std::strerror(errno));
      for (std::size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents) return {who[i], read_answer(who[i])};
    }
  }

  json read_answer(std::size_t w) {
    WorkerProcess& p = procs[w];
    const auto line = p.from->next();
    if (line) return json::parse(*line);
    // The worker died without an answer (a crash of the process itself, or a kill).
    const int status = reap(w);
    Outcome o;
    o.status = Status::faulted;
    o.why = "the worker process " + exit_text(status);
    o.detail = "the worker process on GPU " + std::to_string(p.info.ordinal) + " " + exit_text(status) +
               " while it measured this variant";
    return {{"outcome", outcome_to_json(o)}, {"lost", o.detail}, {"dead", true}};
  }

  // Records an answer to a measure request; restarts the worker when it lost its context.
  std::pair<std::uint64_t, Outcome> take_outcome(std::size_t w, const json& answer) {
    WorkerProcess& p = procs[w];
    const std::uint64_t point = *p.busy;
    p.busy.reset();
    if (answer.contains("aborted") || answer.contains("error")) {
      const std::string why = (answer.contains("aborted") ? answer.at("aborted") : answer.at("error")).get<std::string>();
      throw SweepAborted("the worker on GPU " + std::to_string(p.info.ordinal) + ": " + why);
    }
    Outcome o = outcome_from_json(answer.at("outcome"));
    o.device = p.info.ordinal;
    ++p.info.measured;
    infos[w].measured = p.info.measured;
    if (answer.contains("lost")) {
      if (answer.contains("dead")) {
        ++p.info.restarts;
        start(w);
      } else {
        restart(w);
      }
    }
    return {point, std::move(o)};
  }

  ~Impl() {
    for (auto& p : procs)
      if (p.to >= 0) {
        try {
          send(p.to, {{"op", "quit"}});
        } catch (const Error&) {
        }
        ::close(p.to);
        p.to = -1;
      }
    // A worker still in a kernel past its time limit may not answer: a few seconds, then a kill.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (auto& p : procs) {
      if (p.pid <= 0) continue;
      int status = 0;
      while (::waitpid(p.pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          ::kill(p.pid, SIGKILL);
          ::waitpid(p.pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (p.from) ::close(p.from->fd());
    }
  }
};

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
      if (answer.contains("dead")) {
        ++p.info.restarts;
        pool_.start(w);
      } else {
        pool_.restart(w);
      }
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

WorkerPool::WorkerPool(const Space& space, std::vector<int> ordinals, WorkerFactory factory)
    : impl_(std::make_unique<Impl>(space, std::move(factory))) {
  // A worker that dies leaves a pipe without a reader: a write to it must fail, not kill gpuk.
  std::signal(SIGPIPE, SIG_IGN);
  if (ordinals.empty()) throw ConfigError("a pool of workers needs at least one GPU");
  impl_->procs.resize(ordinals.size());
  impl_->infos.resize(ordinals.size());
  for (std::size_t w = 0; w < ordinals.size(); ++w) impl_->procs[w].info.ordinal = ordinals[w];
  // Every worker forked first, then each waited for: their starts (context, data, reference) overlap.
  for (std::size_t w = 0; w < ordinals.size(); ++w) impl_->spawn(w);
  for (std::size_t w = 0; w < ordinals.size(); ++w) impl_->greet(w);
}

WorkerPool::~WorkerPool() = default;

const std::vector<WorkerInfo>& WorkerPool::workers() const { return impl_->infos; }

std::vector<std::vector<std::size_t>> WorkerPool::group_by_model() const {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::string> names;
  for (std::size_t w = 0; w < impl_->infos.size(); ++w) {
    const std::string& name = impl_->infos[w].device.name;
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      names.push_back(name);
      groups.push_back({w});
    } else {
      groups[static_cast<std::size_t>(it - names.begin())].push_back(w);
    }
  }
  return groups;
}

std::unique_ptr<Measurer> WorkerPool::measurer(std::vector<std::size_t> group) {
  if (group.empty()) throw Error("internal: a measurer over no worker");
  return std::make_unique<PoolMeasurer>(*impl_, std::move(group));
}

std::string WorkerPool::progress_text() const {
  std::string out;
  for (const auto& w : impl_->infos)
    out += (out.empty() ? "" : ", ") + std::string("gpu") + std::to_string(w.ordinal) + " " + std::to_string(w.measured);
  return out;
}

namespace {

// A running, idle worker's answer to "stats" (null when it has none to give).
json ask_stats(WorkerProcess& p) {
  if (p.to < 0 || p.busy) return nullptr;
  try {
    send(p.to, {{"op", "stats"}});
    const auto line = p.from->next();
    if (line) return json::parse(*line);
  } catch (const std::exception&) {
  }
  return nullptr;
}

}  // namespace

CompileStats WorkerPool::compile_stats() {
  CompileStats sum;
  for (auto& p : impl_->procs) {
    const json answer = ask_stats(p);
    if (!answer.is_object() || !answer.contains("stats")) continue;
    const json& j = answer.at("stats");
    sum.programs += j[0].get<int>();
    sum.from_cache += j[1].get<int>();
    sum.variants += j[2].get<int>();
    sum.seconds += j[3].get<double>();
  }
  return sum;
}

std::vector<std::string> WorkerPool::notes() {
  std::vector<std::string> out;
  for (auto& p : impl_->procs) {
    const json answer = ask_stats(p);
    if (!answer.is_object() || !answer.contains("notes")) continue;
    for (const auto& note : answer.at("notes"))
      out.push_back("GPU " + std::to_string(p.info.ordinal) + ": " + note.get<std::string>());
  }
  return out;
}

std::vector<SweepTimes> WorkerPool::worker_times() {
  std::vector<SweepTimes> out;
  for (auto& p : impl_->procs) {
    SweepTimes t;
    const json answer = ask_stats(p);
    if (answer.is_object() && answer.contains("times")) {
      const auto v = answer.at("times").get<std::vector<double>>();
      if (v.size() == 11) {
        t = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]};
      }
    }
    // Every process of this worker, fork to ready, as the parent saw it, less the current
    // process's data and reference (their own parts).
    t.start = std::max(0.0, p.info.start_seconds - t.data - t.reference);
    out.push_back(t);
  }
  return out;
}

}  // namespace gpuk
