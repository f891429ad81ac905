#include "util/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpuk/error.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

RegularFile read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  RegularFile r;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    r.status = errno == ENOENT ? RegularFile::Status::missing : RegularFile::Status::unreadable;
    r.why = std::strerror(errno);
    return r;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    r.status = RegularFile::Status::unreadable;
    r.why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    r.status = RegularFile::Status::not_regular;
    r.why = std::string("it is ") + kind_of(st.st_mode) + ", not a regular file";
  } else if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    r.status = RegularFile::Status::too_large;
    r.why = "it holds " + human_bytes(static_cast<double>(st.st_size)) + ", over the limit of " +
            human_bytes(static_cast<double>(max_bytes));
  } else {
    r.text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    // A file that grows while read is cut at its size when opened; one that shrinks ends early.
    while (done < r.text.size()) {
      const ssize_t got = ::read(fd, r.text.data() + done, r.text.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        r.status = RegularFile::Status::unreadable;
        r.why = std::strerror(errno);
        ::close(fd);
        r.text.clear();
        return r;
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    r.text.resize(done);
    r.status = RegularFile::Status::ok;
  }
  ::close(fd);
  return r;
}

std::string read_regular_file_or_throw(const std::filesystem::path& path, std::uint64_t max_bytes,
                                       std::string_view what) {
  RegularFile r = read_regular_file(path, max_bytes);
  if (r.status != RegularFile::Status::ok)
    throw ConfigError(path.string() + ": cannot read " + std::string(what) + ": " + r.why);
  return std::move(r.text);
}

}  // namespace gpuk
