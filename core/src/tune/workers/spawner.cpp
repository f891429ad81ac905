// The helper process that forks a pool's workers (tune/workers/spawner.hpp).
#include "tune/workers/spawner.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "device/device.hpp"
#include "gpuk/error.hpp"

namespace gpuk::detail {

namespace {

// One reply of the helper: the worker's pid (or -errno) and, with a pid, two descriptors.
struct Reply {
  pid_t pid = -1;
};

bool send_reply(int socket, pid_t pid, const int* fds) {
  Reply r{pid};
  iovec io{&r, sizeof r};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  if (fds) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(2 * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds, 2 * sizeof(int));
  }
  for (;;) {
    if (::sendmsg(socket, &msg, MSG_NOSIGNAL) >= 0) return true;
    if (errno != EINTR) return false;
  }
}

// Forks the worker of `slot` through an intermediate process; the worker's pid or -errno. On
// success `parent_ends` holds the parent's ends of its pipes (the caller closes them).
pid_t fork_worker(int socket, int slot, const Spawner::Body& body, int parent_ends[2]) {
  int down[2], up[2], report[2];
  if (::pipe(down) != 0) return -errno;
  if (::pipe(up) != 0) {
    const int e = errno;
    ::close(down[0]), ::close(down[1]);
    return -e;
  }
  if (::pipe(report) != 0) {
    const int e = errno;
    for (int fd : {down[0], down[1], up[0], up[1]}) ::close(fd);
    return -e;
  }
  const pid_t middle = ::fork();
  if (middle == 0) {
    const pid_t worker = ::fork();
    if (worker == 0) {
      for (int fd : {socket, report[0], report[1], down[1], up[0]}) ::close(fd);
      int status = 1;
      try {
        status = body(slot, down[0], up[1]);
      } catch (...) {
      }
      std::cout.flush();
      std::cerr.flush();
      std::fflush(nullptr);
      std::_Exit(status);
    }
    const pid_t said = worker > 0 ? worker : -errno;
    (void)!::write(report[1], &said, sizeof said);
    ::_exit(0);
  }
  ::close(report[1]);
  pid_t worker = middle > 0 ? 0 : -errno;
  if (middle > 0) {
    if (::read(report[0], &worker, sizeof worker) != static_cast<ssize_t>(sizeof worker)) worker = -EIO;
    int status = 0;
    while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(report[0]);
  ::close(down[0]);
  ::close(up[1]);
  if (worker <= 0) {
    ::close(down[1]);
    ::close(up[0]);
    return worker < 0 ? worker : -EIO;
  }
  parent_ends[0] = down[1];
  parent_ends[1] = up[0];
  return worker;
}

[[noreturn]] void helper_main(int socket, const Spawner::Body& body) {
  for (;;) {
    int slot = 0;
    const ssize_t got = ::recv(socket, &slot, sizeof slot, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(sizeof slot)) break;  // the parent closed its end: done
    int ends[2] = {-1, -1};
    const pid_t pid = fork_worker(socket, slot, body, ends);
    const bool sent = send_reply(socket, pid, pid > 0 ? ends : nullptr);
    if (pid > 0) ::close(ends[0]), ::close(ends[1]);
    if (!sent) break;
  }
  ::_exit(0);
}

}  // namespace

Spawner::Spawner(Body body) {
  if (cuda_initialised())
    throw Error("internal: the process that starts the GPU workers has initialised CUDA itself, so they could not "
                "use the GPU");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(std::string("cannot create the socket of the worker starter: ") + std::strerror(errno));
  // The workers become this process's children when their intermediate ends.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    ::close(sv[0]), ::close(sv[1]);
    throw Error(std::string("cannot adopt the worker processes (prctl PR_SET_CHILD_SUBREAPER): ") +
                std::strerror(errno));
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  helper_ = ::fork();
  if (helper_ < 0) {
    const int e = errno;
    ::close(sv[0]), ::close(sv[1]);
    throw Error(std::string("cannot start the process that starts the workers (fork failed: ") + std::strerror(e) + ")");
  }
  if (helper_ == 0) {
    ::close(sv[0]);
    helper_main(sv[1], body);
  }
  ::close(sv[1]);
  socket_ = sv[0];
}

Spawner::~Spawner() {
  if (socket_ >= 0) ::close(socket_);
  int status = 0;
  if (helper_ > 0)
    while (::waitpid(helper_, &status, 0) < 0 && errno == EINTR) {
    }
}

Spawner::Worker Spawner::start(int slot) {
  ssize_t sent;
  while ((sent = ::send(socket_, &slot, sizeof slot, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (sent != static_cast<ssize_t>(sizeof slot)) throw Error("cannot start a worker process: the process that starts them has ended");
  Reply r;
  iovec io{&r, sizeof r};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t got;
  while ((got = ::recvmsg(socket_, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(sizeof r)) throw Error("cannot start a worker process: the process that starts them has ended");
  if (r.pid <= 0)
    throw Error(std::string("cannot start a worker process (fork failed: ") + std::strerror(static_cast<int>(-r.pid)) + ")");
  const cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(2 * sizeof(int)))
    throw Error("internal: the worker starter's answer carries no pipes");
  Worker w;
  w.pid = r.pid;
  int fds[2];
  std::memcpy(fds, CMSG_DATA(c), sizeof fds);
  w.to = fds[0];
  w.from = fds[1];
  return w;
}

}  // namespace gpuk::detail
