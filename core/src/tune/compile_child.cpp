// Compiles in a child process (tune/compile_child.hpp).
#include "tune/compile_child.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "gpuk/error.hpp"
#include "tune/isolate.hpp"

namespace gpuk {

namespace {

constexpr int kCompiled = 0, kCompileError = 2;
constexpr std::size_t kMessageLimit = 32 * 1024;  // within a pipe's buffer: the child never blocks

// What the child wrote. Read after the child ended and without waiting for the pipe's end: a
// worker forked meanwhile by another thread holds a copy of the write end.
std::string drain(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got > 0) text.append(buf, static_cast<std::size_t>(got));
    else if (got < 0 && errno == EINTR) continue;
    else break;
  }
  return text;
}

}  // namespace

CompiledKernels compile_in_child(const Jit& jit, const KernelFile& file, const std::vector<std::string>& names) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error("cannot create a pipe for a compile process");
  const auto tell = [&](const std::string& text) {
    const std::string cut = text.substr(0, kMessageLimit);
    (void)!::write(fds[1], cut.data(), cut.size());
  };
  pid_t pid = -1;
  try {
    pid = fork_process(
        [&]() -> int {
          ::close(fds[0]);
          try {
            tell(jit.compile(file, names).from_cache ? "hit" : "miss");
            return kCompiled;
          } catch (const CompileError& e) {
            tell(e.what());
            return kCompileError;
          } catch (const std::exception& e) {
            tell(e.what());
            return 1;
          }
        },
        "a compile process");
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  const int status = wait_process(pid);
  const std::string said = drain(fds[0]);
  ::close(fds[0]);
  const std::string what = file.path.string();
  if (WIFEXITED(status) && WEXITSTATUS(status) == kCompileError) throw CompileError(said);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != kCompiled)
    throw Error("the process compiling " + what + " " +
                (WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status))
                                     : "failed" + (said.empty() ? std::string() : ": " + said)));
  CompiledKernels c = jit.compile(file, names);  // from the cache the child filled
  c.from_cache = said == "hit";
  return c;
}

}  // namespace gpuk
