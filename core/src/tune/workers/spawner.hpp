// Worker processes for a parent that runs threads and CUDA. fork() in a process with other
// threads copies into the child every lock those threads hold at that instant (stdio's, while one
// prints; a JIT's; the loader's), and the child waits on them forever; and a process forked after
// its parent called cuInit cannot use the GPU. So the parent forks one helper process first, while
// it has no other thread doing work and no CUDA, and the helper, which has one thread and never
// touches CUDA, forks every worker on request.
//
// Each worker is the parent's to wait for and to kill, as if forked by it: the parent becomes
// the subreaper of its descendants (prctl PR_SET_CHILD_SUBREAPER) and the helper forks each worker
// through a short-lived intermediate process, so that the worker is the parent's child by the
// time start() returns (waitpid works). Linux only, as the pool is.
#pragma once
#include <sys/types.h>

#include <functional>

namespace gpuk::detail {

class Spawner {
 public:
  // What a worker runs, given its slot and its ends of two pipes (requests in, answers out); its
  // exit status. It runs in a copy of this process as it is when the Spawner is made.
  using Body = std::function<int(int slot, int in_fd, int out_fd)>;

  // Forks the helper now. Call before this process starts threads that work (compile threads)
  // and before it initialises CUDA; throws Error when CUDA is initialised already.
  explicit Spawner(Body body);
  ~Spawner();  // ends the helper (the workers it started live on; the caller ends them)
  Spawner(const Spawner&) = delete;
  Spawner& operator=(const Spawner&) = delete;

  struct Worker {
    pid_t pid = -1;
    int to = -1;    // its requests' pipe, write end (close-on-exec)
    int from = -1;  // its answers' pipe, read end (close-on-exec)
  };
  // A fresh worker process running body(slot, ...). Throws Error when it cannot be forked.
  // Not thread-safe: one caller at a time.
  Worker start(int slot);

 private:
  int socket_ = -1;
  pid_t helper_ = -1;
};

}  // namespace gpuk::detail
