// NVRTC in processes of its own. Measured on an H200 host with 16 cores (2026-12-02): 64 small
// programs took 0.97 s on 16 threads of one process, no faster than on 4 (1.06 s), where 16
// processes took 0.54 s; NVRTC's work does not spread over the threads of one process. A sweep
// therefore forks compile processes when it starts (before its compile threads exist), and each
// compile thread hands its programs to one of them over a socket.
//
// A compile process is a fork of the sweep's process that calls nothing but NVRTC (never CUDA)
// and reads requests until its socket closes. One that dies (NVRTC crashed on a program) fails
// that program with the signal named; its place is not refilled (a fork could catch another
// thread inside NVRTC), and when none is left NVRTC runs in the calling thread.
// GPUK_COMPILE_PROCESSES=0 runs every program in the calling thread.
#pragma once
#include <sys/types.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "jit/nvrtc_program.hpp"

namespace gpuk {

class NvrtcProcesses {
 public:
  // `count` processes at `nice` above this process's priority (0 or fewer started: the error
  // goes to the caller; nvrtc_processes() below says none instead).
  NvrtcProcesses(int count, int nice);
  ~NvrtcProcesses();
  NvrtcProcesses(const NvrtcProcesses&) = delete;
  NvrtcProcesses& operator=(const NvrtcProcesses&) = delete;

  // The program compiled by an idle process (waiting for one); in the calling thread when
  // every process has died.
  NvrtcOutcome compile(const NvrtcRequest& request);
  int alive() const;
  std::vector<pid_t> pids() const;  // for tests
  pid_t owner() const { return owner_; }  // the process that forked them (a fork of it has none)

 private:
  struct Slot {
    pid_t pid = -1;
    int fd = -1;
    bool busy = false;
  };
  int end(Slot& slot);  // closes its socket and waits for it: its wait status
  std::vector<Slot> slots_;
  pid_t owner_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
};

// At least `count` compile processes, or nullptr: GPUK_COMPILE_PROCESSES=0, count < 2, or the
// fork failed (said once on stderr). Kept for the process's life and shared by its sweeps (a
// script's next tune forks nothing, and the precompiled headers stay), replaced by a larger set
// when a sweep asks for more.
// A process forked from the one that started them (a sweep's worker) gets a set of its own: the
// inherited sockets are its parent's.
std::shared_ptr<NvrtcProcesses> nvrtc_processes(int count, int nice);

// Ends the kept set now (closes the sockets, waits for the processes, removes their precompiled
// headers' folders): for a process that leaves by _exit, which runs no destructor.
void end_nvrtc_processes();

}  // namespace gpuk
