// The spawner that forks a pooled sweep's workers (tune/workers/spawner.hpp): its workers are this
// process's children, talk through their own pipes, and start clean even while another thread of
// this process holds a lock that a child forked from it directly would inherit held.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "tune/workers/spawner.hpp"

using gpuk::detail::Spawner;

namespace {

// Echoes one line back with its slot, prints to stdout, and exits with 10 + slot.
int echo(int slot, int in, int out) {
  char buf[64] = {};
  const ssize_t got = ::read(in, buf, sizeof buf - 1);
  const std::string answer = std::to_string(slot) + ":" + std::string(buf, got > 0 ? static_cast<std::size_t>(got) : 0);
  (void)!::write(out, answer.data(), answer.size());
  std::printf("worker %d said %s\n", slot, answer.c_str());  // stdout's lock, taken in the child
  std::fflush(stdout);
  return 10 + slot;
}

std::string read_all(int fd) {
  std::string text;
  char buf[64];
  ssize_t got;
  while ((got = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(got));
  return text;
}

// waitpid with a bound: the status, or -1 when the process did not end in time.
int wait_for(pid_t pid, std::chrono::seconds bound) {
  const auto end = std::chrono::steady_clock::now() + bound;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) return status;
    if (got < 0) return -2;  // not a child of this process
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

}  // namespace

TEST_CASE("a spawner's workers are this process's children, each with its own pipes and slot") {
  Spawner spawner(echo);
  std::vector<Spawner::Worker> workers;
  for (int slot : {0, 1, 1, 3}) workers.push_back(spawner.start(slot));
  const int slots[] = {0, 1, 1, 3};
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const Spawner::Worker& w = workers[i];
    CAPTURE(i);
    REQUIRE(w.pid > 0);
    CHECK(w.pid != ::getpid());
    CHECK((::fcntl(w.to, F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(w.from, F_GETFD) & FD_CLOEXEC) != 0);
    const std::string hello = "hi" + std::to_string(i);
    REQUIRE(::write(w.to, hello.data(), hello.size()) == static_cast<ssize_t>(hello.size()));
    ::close(w.to);
    // Its answer, and the end of its pipe when it exits: no other process holds the write end.
    CHECK(read_all(w.from) == std::to_string(slots[i]) + ":" + hello);
    ::close(w.from);
    const int status = wait_for(w.pid, std::chrono::seconds(20));
    REQUIRE(status >= 0);  // waitpid found it: a child of this process
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 10 + slots[i]);
  }
}

TEST_CASE("a worker started while another thread holds stdout's lock starts, prints and ends") {
  // A child forked from this process while the other thread holds the lock would inherit it held
  // and wait on it forever at its first print (the hang of a pooled sweep whose parent printed
  // while it forked). The spawner's helper was forked before the lock was taken.
  Spawner spawner(echo);
  std::atomic<bool> holding = false, release = false;
  std::thread holder([&] {
    ::flockfile(stdout);
    holding = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ::funlockfile(stdout);
  });
  while (!holding) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Spawner::Worker w = spawner.start(2);
  REQUIRE(::write(w.to, "x", 1) == 1);
  ::close(w.to);
  const int status = wait_for(w.pid, std::chrono::seconds(20));
  release = true;
  holder.join();
  CHECK(read_all(w.from) == "2:x");
  ::close(w.from);
  REQUIRE(status >= 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 12);
}

TEST_CASE("a worker killed from outside is seen by waitpid as killed; the spawner goes on") {
  Spawner spawner(echo);
  const Spawner::Worker first = spawner.start(0);
  ::kill(first.pid, SIGKILL);
  const int status = wait_for(first.pid, std::chrono::seconds(20));
  REQUIRE(status >= 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  ::close(first.to);
  ::close(first.from);
  const Spawner::Worker second = spawner.start(1);
  REQUIRE(::write(second.to, "y", 1) == 1);
  ::close(second.to);
  CHECK(read_all(second.from) == "1:y");
  ::close(second.from);
  const int again = wait_for(second.pid, std::chrono::seconds(20));
  REQUIRE(again >= 0);
  CHECK(WEXITSTATUS(again) == 11);
}
