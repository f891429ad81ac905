// Reading a file that must be a plain file. A FIFO where a config, cache entry or result file
// should be would block gpuk forever (no writer), and a device such as /dev/zero would never end:
// so the file is opened without blocking, checked to be a regular file, and read up to a limit.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpuk {

struct RegularFile {
  enum class Status { ok, missing, not_regular, too_large, unreadable };
  Status status = Status::missing;
  std::string text;  // the bytes when ok
  std::string why;   // otherwise: "is a FIFO, not a regular file", "is 3.00 GiB, over the 1.00 MiB limit", ...
};

// The file's bytes, or why not. Never blocks on a FIFO and never reads past `max_bytes`.
RegularFile read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes);

// The same, throwing ConfigError "PATH: cannot read WHAT: WHY" unless ok.
std::string read_regular_file_or_throw(const std::filesystem::path& path, std::uint64_t max_bytes,
                                       std::string_view what);

// The limits (docs/reliability.md, "Limits"). A config or kernel file is hand-written text: a
// megabyte is far past any real one. Reports and the tuning database are written by gpuk and
// grow with use.
inline constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kMaxKernelFileBytes = std::uint64_t{4} << 20;
inline constexpr std::uint64_t kMaxReportBytes = std::uint64_t{256} << 20;
inline constexpr std::uint64_t kMaxTuningDbBytes = std::uint64_t{1} << 30;

}  // namespace gpuk
