#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <string>

#include "gpuk/error.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kTemporaryMark = ".tmp-";
}  // namespace

fs::path temporary_path(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  // Unique per process and call: concurrent writers never share a temporary file.
  return path.string() + std::string(kTemporaryMark) + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

void write_file_atomically(const fs::path& path, std::string_view bytes, std::string_view what) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  const fs::path tmp = temporary_path(path);
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw Error(path.string() + ": cannot write " + std::string(what));
    }
  }
  if (const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(path.string() + ": cannot move " + std::string(what) + " into place (" + ec.message() + ")");
  }
}

int remove_orphaned_temporaries(const fs::path& dir, std::string_view prefix) {
  int removed = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto mark = name.rfind(kTemporaryMark);
    if (mark == std::string::npos || name.compare(0, prefix.size(), prefix) != 0) continue;
    const char* first = name.data() + mark + kTemporaryMark.size();
    long pid = 0;
    const auto [end, parsed] = std::from_chars(first, name.data() + name.size(), pid);
    if (parsed != std::errc() || end == first || *end != '-' || pid <= 0) continue;
    // ESRCH: no such process. EPERM means it lives (another user's): keep its file.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code remove_ec;
    if (fs::remove(it->path(), remove_ec)) ++removed;
  }
  return removed;
}

}  // namespace gpuk
