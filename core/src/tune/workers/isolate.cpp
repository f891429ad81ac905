// Processes of a sweep (tune/workers/isolate.hpp).
#include "tune/workers/isolate.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "gpuk/error.hpp"

namespace gpuk {

pid_t fork_process(const std::function<int()>& child, const char* what) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot start ") + what + " (fork failed)");
  if (pid == 0) {
    int status = 1;
    try {
      status = child();
    } catch (...) {
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(status);
  }
  return pid;
}

int wait_process(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

int run_isolated(const std::function<int(int restarts)>& body, int most) {
  for (int restarts = 0;; ++restarts) {
    const int status = wait_process(fork_process([&] { return body(restarts); }, "the process of the sweep"));
    if (WIFEXITED(status) && WEXITSTATUS(status) == kGoOnExit) {
      if (restarts + 1 < most) continue;
      std::cerr << "gpuk: the sweep lost its CUDA context " << most << " times; it stops here\n";
      return 1;
    }
    if (WIFSIGNALED(status)) {
      std::cerr << "gpuk: the sweep's process died of signal " << WTERMSIG(status) << "\n";
      return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
}

}  // namespace gpuk
