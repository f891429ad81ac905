// Processes of a sweep: every process that touches the GPU for `gpuk tune` (a sweep, a matrix's
// cells, a pooled sweep's workers, the GPU count) is forked from one that never initialised CUDA,
// so that a variant that takes a CUDA context down ends only its own process.
#pragma once
#include <sys/types.h>

#include <functional>

namespace gpuk {

// The exit status of a process of a sweep whose CUDA context a variant took down: the sweep goes
// on from its journal in a fresh process.
inline constexpr int kGoOnExit = 75;

// Forks after flushing this process's output (the child must not repeat what is buffered). The
// child runs `child` and leaves with its status at once, without exit handlers (a kernel
// abandoned past its time limit may still run). Throws Error naming `what` when fork fails.
pid_t fork_process(const std::function<int()>& child, const char* what);

// Waits for the process (EINTR retried); its wait status.
int wait_process(pid_t pid);

// Runs `body(restarts)` in a fresh child process, again while it exits with kGoOnExit, at most
// `most` processes. Returns the last process's exit status; 1 when it died of a signal or the
// processes ran out (both said on stderr).
int run_isolated(const std::function<int(int restarts)>& body, int most = 1000);

}  // namespace gpuk
