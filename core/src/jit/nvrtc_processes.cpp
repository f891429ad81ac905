// NVRTC in processes of its own (jit/nvrtc_processes.hpp).
#include "jit/nvrtc_processes.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "gpuk/error.hpp"

namespace gpuk {

namespace {

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool send_message(int fd, const std::string& bytes) {
  const std::uint64_t n = bytes.size();
  return write_all(fd, reinterpret_cast<const char*>(&n), sizeof n) && write_all(fd, bytes.data(), bytes.size());
}

bool receive_message(int fd, std::string& bytes) {
  std::uint64_t n = 0;
  if (!read_all(fd, reinterpret_cast<char*>(&n), sizeof n) || n > (std::uint64_t{1} << 36)) return false;
  bytes.resize(n);
  return read_all(fd, bytes.data(), n);
}

std::filesystem::path pch_folder(pid_t pid) {
  return std::filesystem::temp_directory_path() / ("gpuk-pch-" + std::to_string(pid));
}

// The compile process: requests in, outcomes out, until the socket closes.
[[noreturn]] void serve(int fd, int nice) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGCHLD}) ::signal(s, SIG_DFL);
  // Every other descriptor (the other processes' sockets, CUDA's) closed: an end of file here
  // means the sweep is gone.
  if (fd != 3) {
    ::dup2(fd, 3);
    fd = 3;
  }
  if (::syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
    for (int other = 4; other < 4096; ++other) ::close(other);
  // NVRTC's messages reach the caller in the program's log; ptxas also prints its errors, which
  // would reach the sweep's output from every process.
  if (const int null = ::open("/dev/null", O_RDWR); null >= 0) {
    ::dup2(null, 1);
    ::dup2(null, 2);
    if (null > 3) ::close(null);
  }
  if (nice > 0) {
    errno = 0;
    const int now = ::getpriority(PRIO_PROCESS, 0);
    if (errno == 0) (void)::setpriority(PRIO_PROCESS, 0, std::min(19, now + nice));
  }
  // Its precompiled headers' folder, removed by the process that started it.
  // Private (0700): a header planted there would be compiled into the variants. Taken only when
  // this process made it.
  const std::string pch_dir = pch_folder(::getpid()).string();
  const bool have_pch_dir = ::mkdir(pch_dir.c_str(), 0700) == 0;
  std::string bytes, cwd;
  for (;;) {
    NvrtcRequest request;
    if (!receive_message(fd, bytes) || !decode(bytes, request)) {
      // The sweep closed the socket, or left without closing it (ended by _exit or a signal):
      // nothing else would remove the folder.
      std::error_code ec;
      if (have_pch_dir) std::filesystem::remove_all(pch_dir, ec);
      ::_exit(0);
    }
    if (!request.cwd.empty() && request.cwd != cwd && ::chdir(request.cwd.c_str()) == 0) cwd = request.cwd;
    NvrtcOutcome outcome;
    try {
      outcome = run_nvrtc(request, have_pch_dir ? &pch_dir : nullptr);
    } catch (const std::exception& e) {
      outcome.error = e.what();
    }
    if (!send_message(fd, encode(outcome))) ::_exit(0);
  }
}

std::string ended(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::sigdescr_np(sig);
    return "NVRTC's compile process died of signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  }
  if (WIFEXITED(status)) return "NVRTC's compile process exited with status " + std::to_string(WEXITSTATUS(status));
  return "NVRTC's compile process ended";
}

}  // namespace

NvrtcProcesses::NvrtcProcesses(int count, int nice) : owner_(::getpid()) {
  for (int i = 0; i < count; ++i) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) break;
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      serve(fds[1], nice);
    }
    ::close(fds[1]);
    if (pid < 0) {
      ::close(fds[0]);
      break;
    }
    slots_.push_back({pid, fds[0], false});
  }
  if (slots_.empty()) throw Error("cannot start NVRTC's compile processes: " + std::string(std::strerror(errno)));
}

NvrtcProcesses::~NvrtcProcesses() {
  if (owner_ != ::getpid()) return;  // a fork's copy: the processes are its parent's
  for (Slot& s : slots_) end(s);
}

int NvrtcProcesses::end(Slot& slot) {
  if (slot.fd >= 0) ::close(slot.fd);  // its end of file: it leaves
  slot.fd = -1;
  int status = 0;
  if (slot.pid > 0) {
    while (::waitpid(slot.pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::error_code ec;
    std::filesystem::remove_all(pch_folder(slot.pid), ec);
  }
  slot.pid = -1;
  return status;
}

int NvrtcProcesses::alive() const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const Slot& s : slots_) n += s.pid > 0 ? 1 : 0;
  return n;
}

std::vector<pid_t> NvrtcProcesses::pids() const {
  std::lock_guard lock(mutex_);
  std::vector<pid_t> out;
  for (const Slot& s : slots_)
    if (s.pid > 0) out.push_back(s.pid);
  return out;
}

NvrtcOutcome NvrtcProcesses::compile(const NvrtcRequest& request) {
  Slot* slot = nullptr;
  {
    std::unique_lock lock(mutex_);
    const auto find = [this, &slot] {
      bool any = false;
      for (Slot& s : slots_) {
        if (s.pid <= 0) continue;
        any = true;
        if (!s.busy) {
          slot = &s;
          return true;
        }
      }
      return !any;  // none alive: stop waiting
    };
    idle_.wait(lock, find);
    if (slot) slot->busy = true;
  }
  if (!slot) return run_nvrtc(request);
  std::string bytes;
  NvrtcOutcome outcome;
  NvrtcRequest here = request;
  std::error_code ec;
  here.cwd = std::filesystem::current_path(ec).string();
  const bool answered = send_message(slot->fd, encode(here)) && receive_message(slot->fd, bytes) && decode(bytes, outcome);
  std::lock_guard lock(mutex_);
  slot->busy = false;
  if (!answered) {
    outcome = NvrtcOutcome{};
    outcome.error = ended(end(*slot));
  }
  idle_.notify_all();
  return outcome;
}

namespace {

std::mutex& kept_mutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<NvrtcProcesses>& kept_processes() {
  static std::shared_ptr<NvrtcProcesses> kept;
  return kept;
}

}  // namespace

void end_nvrtc_processes() {
  std::shared_ptr<NvrtcProcesses> last;
  {
    std::lock_guard lock(kept_mutex());
    last = std::move(kept_processes());
  }
}

std::shared_ptr<NvrtcProcesses> nvrtc_processes(int count, int nice) {
  if (const char* e = std::getenv("GPUK_COMPILE_PROCESSES"); e && std::string(e) == "0") return nullptr;
  if (count < 2) return nullptr;
  std::lock_guard lock(kept_mutex());
  std::shared_ptr<NvrtcProcesses>& kept = kept_processes();
  if (kept && kept->owner() != ::getpid()) kept.reset();  // inherited through a fork: the parent's
  if (kept && kept->alive() >= count) return kept;
  try {
    kept = std::make_shared<NvrtcProcesses>(count, nice);
    return kept;
  } catch (const Error& e) {
    static std::once_flag said;
    std::call_once(said, [&] { std::cerr << "gpuk: " << e.what() << "; NVRTC runs in the compile threads\n"; });
    return nullptr;
  }
}

}  // namespace gpuk
