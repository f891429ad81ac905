#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "gpuk/error.hpp"
#include "util/fault_point.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTemporaryMark = ".tmp-";

// Creates a temporary file of its own beside `path` (O_EXCL: never one another process holds, as
// an orphan whose process id came back would be). Returns its descriptor, or -1 with errno set.
int create_temporary(const fs::path& path, fs::path& tmp) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = temporary_path(path);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Whether process `pid` has ended: no such process (ESRCH), or a zombie (ended, its exit not yet
// collected by its parent: its files, and its lock, are already closed). EPERM means it lives
// (another user's). A merge waiting on a killed writer's lock got it while that writer was still
// a zombie, took it for alive and left its temporary file.
bool process_gone(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char stat[512];
  const ssize_t got = ::read(fd, stat, sizeof stat - 1);
  ::close(fd);
  if (got <= 0) return false;
  stat[got] = '\0';
  // "PID (COMMAND) STATE ...": the command may hold spaces and parentheses, so from the last ')'.
  const char* close = std::strrchr(stat, ')');
  return close && close[1] == ' ' && close[2] == 'Z';
}

}  // namespace

fs::path temporary_path(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  // Unique per process and call: concurrent writers never share a temporary file.
  return path.string() + std::string(kTemporaryMark) + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// The order is what makes a reader see the old file or the new one, never part of one, even after
// a power loss: the bytes are on disk (fsync, its answer checked) before the rename publishes
// them, and the rename is on disk (the directory's fsync) before the caller is told it is done.
// A writer killed at any point leaves the old file whole and at most its own temporary file.
void write_file_atomically(const fs::path& path, std::string_view bytes, std::string_view what) {
  write_file_atomically(path, std::vector<std::string_view>{bytes}, what);
}

void write_file_atomically(const fs::path& path, const std::vector<std::string_view>& pieces, std::string_view what) {
  std::error_code ec;
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  fs::create_directories(dir, ec);
  fs::path tmp;
  const int fd = create_temporary(path, tmp);
  if (fd < 0)
    throw Error(path.string() + ": cannot write " + std::string(what) + " (creating " + tmp.filename().string() +
                ": " + std::strerror(errno) + ")");
  fault_point("atomic file: temporary created");
  const auto fail = [&](const char* step) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    fs::remove(tmp, ec);
    throw Error(path.string() + ": cannot write " + std::string(what) + " (" + step + ": " + why + ")");
  };
  std::size_t total = 0, done = 0;
  for (const auto piece : pieces) total += piece.size();
  bool halfway = false;
  for (const auto piece : pieces) {
    std::size_t at = 0;
    if (!halfway && done + piece.size() >= total / 2) {  // the piece that holds the middle
      at = total / 2 - done;
      if (!write_all(fd, piece.data(), at)) fail("write");
      fault_point("atomic file: half written");
      halfway = true;
    }
    if (!write_all(fd, piece.data() + at, piece.size() - at)) fail("write");
    done += piece.size();
  }
  if (!halfway) fault_point("atomic file: half written");  // no bytes at all
  fault_point("atomic file: written");
  if (::fsync(fd) != 0) fail("fsync");
  fault_point("atomic file: synced");
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    fs::remove(tmp, ec);
    throw Error(path.string() + ": cannot write " + std::string(what) + " (close: " + why + ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    fs::remove(tmp, ec);
    throw Error(path.string() + ": cannot move " + std::string(what) + " into place (rename: " + why + ")");
  }
  fault_point("atomic file: renamed");
  // The new file is in place for every reader now; only its survival of a power loss waits on this.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || (::fsync(dir_fd) != 0 && errno != EINVAL && errno != EROFS))
    std::cerr << "gpuk: warning: " << path.string() << ": " << what << " is written, but its directory could not be "
              << "flushed to disk (" << std::strerror(errno) << "): a power loss now could lose it\n";
  if (dir_fd >= 0) ::close(dir_fd);
  fault_point("atomic file: directory synced");
}

void write_output_file(const fs::path& path, std::string_view bytes, std::string_view what) {
  write_output_file(path, std::vector<std::string_view>{bytes}, what);
}

void write_output_file(const fs::path& path, const std::vector<std::string_view>& pieces, std::string_view what) {
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec);
  if (!fs::exists(link) || fs::is_regular_file(link)) {
    // What an earlier writer of the same file left when it was killed goes first.
    remove_orphaned_temporaries(path.has_parent_path() ? path.parent_path() : fs::path("."), path.filename().string());
    write_file_atomically(path, pieces, what);
    return;
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot write " + std::string(what) + " (" + std::strerror(errno) + ")");
  bool written = true;
  for (const auto piece : pieces) written = written && write_all(fd, piece.data(), piece.size());
  const std::string why = std::strerror(errno);
  if (::close(fd) != 0 || !written)
    throw Error(path.string() + ": cannot write " + std::string(what) + " (" + (written ? std::strerror(errno) : why) + ")");
}

int remove_orphaned_temporaries(const fs::path& dir, std::string_view prefix) {
  int removed = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto mark = name.rfind(kTemporaryMark);
    // With a prefix, exactly PREFIX.tmp-...: not another file's temporaries that share its start.
    if (mark == std::string::npos || (!prefix.empty() && std::string_view(name).substr(0, mark) != prefix)) continue;
    const char* first = name.data() + mark + kTemporaryMark.size();
    long pid = 0;
    const auto [end, parsed] = std::from_chars(first, name.data() + name.size(), pid);
    if (parsed != std::errc() || end == first || *end != '-' || pid <= 0) continue;
    if (!process_gone(pid)) continue;
    std::error_code remove_ec;
    if (fs::remove(it->path(), remove_ec)) ++removed;
  }
  return removed;
}

int remove_temporaries_of(const fs::path& path) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const std::string prefix = path.filename().string() + std::string(kTemporaryMark);
  int removed = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().compare(0, prefix.size(), prefix) != 0) continue;
    std::error_code remove_ec;
    if (fs::remove(it->path(), remove_ec)) ++removed;
  }
  return removed;
}

}  // namespace gpuk
