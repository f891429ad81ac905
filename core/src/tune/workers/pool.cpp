// The worker processes of a sweep over several GPUs (tune/workers/pool.hpp): the parent's side.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "gpuk/error.hpp"
#include "tune/report/outcome_json.hpp"
#include "tune/workers/pool_impl.hpp"

namespace gpuk {

using nlohmann::json;
using detail::device_of;
using detail::exit_text;
using detail::LineReader;
using detail::send;
using detail::worker_main;

void WorkerPool::Impl::start(std::size_t w) {
  spawn(w);
  greet(w);
}

void WorkerPool::Impl::spawn(std::size_t w) {
  detail::WorkerProcess& p = procs[w];
  p.spawned = std::chrono::steady_clock::now();
  // Forked by the spawner (tune/workers/spawner.hpp), not here: this process runs compile threads and
  // CUDA (its compile wave's NVRTC) by now. The worker holds no pipe of another worker.
  const detail::Spawner::Worker started = spawner->start(p.info.ordinal);
  p.pid = started.pid;
  p.to = started.to;
  p.from = std::make_unique<LineReader>(started.from);
  p.busy.reset();
  p.adopted.clear();
  p.greeted = false;
}

void WorkerPool::Impl::greet(std::size_t w) {
  detail::WorkerProcess& p = procs[w];
  const auto hello = p.from->next();
  json j;
  if (hello) j = json::parse(*hello);
  if (!hello || !j.contains("hello")) {
    const std::string why = j.contains("error") ? j.at("error").get<std::string>() : "it ended before it started";
    reap(w);
    throw Error("the worker on GPU " + std::to_string(p.info.ordinal) + " could not start: " + why);
  }
  const DeviceInfo device = device_of(j.at("device"));
  const auto& l = j.at("limits");
  LaunchLimits limits;
  limits.n = l[0].get<std::int64_t>();
  limits.sm_count = l[1].get<int>();
  limits.elem_bytes = l[2].get<int>();
  limits.max_threads_per_block = l[3].get<int>();
  limits.max_shared_bytes = l[4].get<int>();
  if (j.contains("sizes")) limits.sizes = j.at("sizes").get<std::map<std::string, std::int64_t>>();  // a declared kernel's
  const auto leading = j.at("leading_args").get<std::vector<std::string>>();
  if (p.planned) {
    // The parent planned (and its wave compiled) for what it was told of this GPU: it must be
    // what the worker sees.
    const LaunchLimits& k = p.info.limits;
    if (device.name != p.info.device.name || device.arch() != p.info.device.arch() || limits.n != k.n ||
        limits.sm_count != k.sm_count || limits.elem_bytes != k.elem_bytes ||
        limits.max_threads_per_block != k.max_threads_per_block || limits.max_shared_bytes != k.max_shared_bytes ||
        leading != p.info.leading_args || j.at("flushed").get<bool>() != p.info.flushed) {
      reap(w);
      throw Error("internal: the worker on GPU " + std::to_string(p.info.ordinal) + " (" + device.name +
                  ") sees other launch limits than the parent planned for");
    }
    p.planned = false;
  }
  p.info.device = device;
  p.info.limits = limits;
  p.info.leading_args = leading;
  p.info.bytes_moved = j.at("bytes_moved");
  p.info.flushed = j.at("flushed");
  // Fork to ready: the worker's own clock reading (steady_clock is the machine's monotonic clock)
  // when it said hello, which may be well before this greeting.
  auto ready = std::chrono::steady_clock::now();
  if (j.contains("ready_ns"))
    ready = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(j.at("ready_ns").get<std::int64_t>()));
  p.info.start_seconds += std::max(0.0, std::chrono::duration<double>(ready - p.spawned).count());
  p.greeted = true;
  infos[w] = p.info;
  // Its queue: the compile wave's programs, and the rest to compile itself.
  std::vector<std::uint64_t> own;
  for (std::uint64_t point : p.queue) {
    if (programs.count(point)) adopt(w, point);
    else own.push_back(point);
  }
  if (!own.empty()) send(p.to, {{"op", "prepare"}, {"points", own}});
}

void WorkerPool::Impl::greet_all() {
  for (std::size_t w = 0; w < procs.size(); ++w)
    if (!procs[w].greeted && procs[w].from) greet(w);
}

void WorkerPool::Impl::adopt(std::size_t w, std::uint64_t point) {
  const auto it = programs.find(point);
  if (it == programs.end()) return;
  detail::WorkerProcess& p = procs[w];
  if (p.adopted.insert(it->second.get()).second) send(p.to, *it->second);
}

int WorkerPool::Impl::reap(std::size_t w) {
  detail::WorkerProcess& p = procs[w];
  if (p.to >= 0) ::close(p.to);
  if (p.from) ::close(p.from->fd());
  p.to = -1;
  p.from.reset();
  const int status = p.pid > 0 ? wait_process(p.pid) : 0;
  p.pid = -1;
  return status;
}

void WorkerPool::Impl::restart(std::size_t w) {
  reap(w);
  ++procs[w].info.restarts;
  start(w);
}

void WorkerPool::Impl::replace(std::size_t w, const json& answer) {
  if (answer.contains("dead")) {
    ++procs[w].info.restarts;
    start(w);
  } else {
    restart(w);
  }
}

void WorkerPool::Impl::dispatch(std::size_t w, std::uint64_t point) {
  detail::WorkerProcess& p = procs[w];
  p.busy = point;
  try {
    adopt(w, point);
    send(p.to, {{"op", "measure"}, {"point", point}});
  } catch (const Error&) {
    // It died while idle (killed from outside): a fresh one takes the point.
    ++p.info.restarts;
    start(w);
    p.busy = point;
    adopt(w, point);
    send(p.to, {{"op", "measure"}, {"point", point}});
  }
}

void WorkerPool::Impl::feed(const std::vector<std::size_t>& group) {
  for (std::size_t w : group) {
    detail::WorkerProcess& p = procs[w];
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

std::pair<std::size_t, json> WorkerPool::Impl::wait_one(const std::vector<std::size_t>& group) {
  return *wait_any(group, -1);
}

std::optional<std::pair<std::size_t, json>> WorkerPool::Impl::wait_any(const std::vector<std::size_t>& group,
                                                                        int also) {
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> who;
    for (std::size_t w : group) {
      detail::WorkerProcess& p = procs[w];
      if (!p.busy) continue;
      if (p.from->buffered()) return std::pair{w, read_answer(w)};
      fds.push_back({p.from->fd(), POLLIN, 0});
      who.push_back(w);
    }
    if (fds.empty() && also < 0) throw Error("internal: no worker is measuring anything");
    if (also >= 0) fds.push_back({also, POLLIN, 0});
    const int n = ::poll(fds.data(), fds.size(), -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(std::string("poll on the workers' pipes failed: ") + std::strerror(errno));
    for (std::size_t i = 0; i < who.size(); ++i)
      if (fds[i].revents) return std::pair{who[i], read_answer(who[i])};
    if (also >= 0 && fds.back().revents) return std::nullopt;
  }
}

json WorkerPool::Impl::read_answer(std::size_t w) {
  detail::WorkerProcess& p = procs[w];
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

std::pair<std::uint64_t, Outcome> WorkerPool::Impl::take_outcome(std::size_t w, const json& answer) {
  detail::WorkerProcess& p = procs[w];
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
  if (answer.contains("lost")) replace(w, answer);
  return {point, std::move(o)};
}

namespace {

// Workers told to quit end in their own time: a worker's exit tears down its CUDA context (0.4-0.7 s
// on an H200 machine), which a caller should not wait for. A thread waits for them (a worker still
// in a kernel past its time limit: a few seconds, then a kill); the next pool's workers start
// first, and it waits for the last pool's before they measure, so no two sweeps share a GPU.
class Exiting {
 public:
  void hand_over(std::vector<pid_t> pids) {
    std::lock_guard lock(mutex_);
    join();
    owner_ = ::getpid();
    reaper_ = std::make_unique<std::thread>([pids = std::move(pids)] {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      for (pid_t pid : pids) {
        int status = 0;
        for (;;) {
          const pid_t r = ::waitpid(pid, &status, WNOHANG);
          if (r != 0 && !(r < 0 && errno == EINTR)) break;  // ended, or not a child of this process
          if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      }
    });
  }
  void wait() {
    std::lock_guard lock(mutex_);
    join();
  }

 private:
  void join() {
    if (!reaper_) return;
    // In a fork of the process that started it, the thread does not exist (and the workers are
    // not this process's children): its handle is left, never joined.
    if (owner_ == ::getpid()) reaper_->join();
    else (void)reaper_.release();
    reaper_.reset();
  }
  std::mutex mutex_;
  std::unique_ptr<std::thread> reaper_;
  pid_t owner_ = 0;
};

// Never destroyed: a process that leaves while workers still end leaves them to end on their own.
Exiting& exiting() {
  static Exiting* e = new Exiting;
  return *e;
}

}  // namespace

WorkerPool::Impl::~Impl() {
  std::vector<pid_t> pids;
  for (auto& p : procs) {
    if (p.to >= 0) {
      try {
        send(p.to, {{"op", "quit"}});
      } catch (const Error&) {
      }
      ::close(p.to);
      p.to = -1;
    }
    if (p.from) ::close(p.from->fd());
    if (p.pid > 0) pids.push_back(p.pid);
  }
  exiting().hand_over(std::move(pids));
}

void wait_for_exiting_workers() { exiting().wait(); }

WorkerPool::WorkerPool(const Space& space, std::vector<int> ordinals, WorkerFactory factory, WaveOptions wave,
                       std::vector<WorkerInfo> planned)
    : impl_(std::make_unique<Impl>(space, std::move(factory), std::move(wave))) {
  // A worker that dies leaves a pipe without a reader: a write to it must fail, not kill gpuk.
  std::signal(SIGPIPE, SIG_IGN);
  if (ordinals.empty()) throw ConfigError("a pool of workers needs at least one GPU");
  if (!planned.empty() && planned.size() != ordinals.size())
    throw Error("internal: a pool of " + std::to_string(ordinals.size()) + " workers planned for " +
                std::to_string(planned.size()));
  impl_->spawner = std::make_unique<detail::Spawner>([impl = impl_.get()](int ordinal, int in, int out) -> int {
    worker_main(in, out, impl->space, impl->factory, ordinal);
  });
  impl_->procs.resize(ordinals.size());
  impl_->infos.resize(ordinals.size());
  for (std::size_t w = 0; w < ordinals.size(); ++w) {
    detail::WorkerProcess& p = impl_->procs[w];
    if (!planned.empty()) {
      p.info = planned[w];
      p.planned = true;
    }
    p.info.ordinal = ordinals[w];
    impl_->infos[w] = p.info;
  }
  // Every worker forked first, then each waited for: their starts (context, data, reference)
  // overlap. With the GPUs planned for, the greetings wait for the first request.
  for (std::size_t w = 0; w < ordinals.size(); ++w) impl_->spawn(w);
  wait_for_exiting_workers();  // the last pool's, while these start
  if (planned.empty()) impl_->greet_all();
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
  return detail::make_pool_measurer(*impl_, std::move(group));
}

std::string WorkerPool::progress_text() const {
  std::string out;
  for (const auto& w : impl_->infos)
    out += (out.empty() ? "" : ", ") + std::string("gpu") + std::to_string(w.ordinal) + " " + std::to_string(w.measured);
  return out;
}

namespace {

// A running, idle worker's answer to "stats" (null when it has none to give).
json ask_stats(detail::WorkerProcess& p) {
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
  impl_->greet_all();
  CompileStats sum = impl_->wave_stats;
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
  impl_->greet_all();
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
  impl_->greet_all();
  std::vector<SweepTimes> out;
  for (auto& p : impl_->procs) {
    SweepTimes t;
    const json answer = ask_stats(p);
    if (answer.is_object() && answer.contains("times")) t = detail::times_from_json(answer.at("times"));
    // Every process of this worker, fork to ready, as the parent saw it, less the current
    // process's data and reference (their own parts).
    t.start = std::max(0.0, p.info.start_seconds - t.data - t.reference);
    out.push_back(t);
  }
  return out;
}

}  // namespace gpuk
