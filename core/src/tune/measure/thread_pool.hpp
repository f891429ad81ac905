// A fixed set of threads for the bulk compiles of a sweep (tune/measure/bulk_compiler.hpp).
#pragma once
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuk {

// A fixed set of worker threads running jobs in the order they were submitted. On destruction,
// jobs not yet started are dropped and running ones are waited for.
class ThreadPool {
 public:
  // `nice`: each thread's nice value raised by that much (Linux: a thread's own priority), so that
  // the process's other work (a sweep's measuring thread, a pool's workers starting) comes first.
  explicit ThreadPool(int threads, int nice = 0) {
    for (int i = 0; i < threads; ++i)
      workers_.emplace_back([this, nice] {
        if (nice > 0) {
          const auto self = static_cast<id_t>(::syscall(SYS_gettid));
          errno = 0;
          const int now = ::getpriority(PRIO_PROCESS, self);
          if (errno == 0) (void)::setpriority(PRIO_PROCESS, self, std::min(19, now + nice));
        }
        for (;;) {
          std::function<void()> job;
          {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
            if (stop_) return;
            job = std::move(jobs_.front());
            jobs_.pop_front();
          }
          job();
        }
      });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      jobs_.clear();
    }
    ready_.notify_all();
    for (auto& w : workers_) w.join();
  }
  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    ready_.notify_one();
  }

 private:
  std::vector<std::thread> workers_;
  std::deque<std::function<void()>> jobs_;
  std::mutex mutex_;
  std::condition_variable ready_;
  bool stop_ = false;
};

}  // namespace gpuk
