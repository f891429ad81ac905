#include "device/host_memory.hpp"

#include <unistd.h>

#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "gpuk/error.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMost = std::numeric_limits<std::uint64_t>::max();

// "MemAvailable:   123456 kB" -> bytes.
std::optional<std::uint64_t> meminfo(const std::string& field) {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  std::uint64_t value = 0;
  while (in >> name >> value) {
    std::getline(in, unit);
    if (name == field + ":") return bytes_for(value, unit.find("kB") != std::string::npos ? 1024 : 1);
  }
  return std::nullopt;
}

// A number from a cgroup file; nullopt for "max" (no limit), a missing file or v1's "no limit"
// (a number near 2^63).
std::optional<std::uint64_t> cgroup_number(const fs::path& path) {
  std::ifstream in(path);
  std::uint64_t value = 0;
  if (!(in >> value) || value >= (std::uint64_t{1} << 62)) return std::nullopt;
  return value;
}

std::uint64_t cgroup_stat(const fs::path& path, const std::string& field) {
  std::ifstream in(path);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == field) return value;
  return 0;
}

// The least memory left under any limit of this process's cgroup and the cgroups above it.
std::optional<std::uint64_t> cgroup_available() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::optional<std::uint64_t> least;
  const auto consider = [&](std::optional<std::uint64_t> limit, std::uint64_t used, std::uint64_t reclaimable) {
    if (!limit) return;
    const std::uint64_t in_use = used > reclaimable ? used - reclaimable : 0;
    const std::uint64_t left = *limit > in_use ? *limit - in_use : 0;
    if (!least || left < *least) least = left;
  };
  while (std::getline(in, line)) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const fs::path relative = fs::path(line.substr(second + 1)).relative_path();
    if (controllers.empty()) {  // cgroup v2: "0::/path"
      for (fs::path dir = fs::path("/sys/fs/cgroup") / relative;; dir = dir.parent_path()) {
        consider(cgroup_number(dir / "memory.max"), cgroup_number(dir / "memory.current").value_or(0),
                 cgroup_stat(dir / "memory.stat", "inactive_file"));
        if (dir == "/sys/fs/cgroup" || !dir.has_relative_path()) break;
      }
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {  // v1
      const fs::path dir = fs::path("/sys/fs/cgroup/memory") / relative;
      consider(cgroup_number(dir / "memory.limit_in_bytes"), cgroup_number(dir / "memory.usage_in_bytes").value_or(0),
               cgroup_stat(dir / "memory.stat", "total_inactive_file"));
    }
  }
  return least;
}

}  // namespace

std::uint64_t bytes_for(std::uint64_t count, std::uint64_t each) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(count, each, &out) ? kMost : out;
}

std::uint64_t add_bytes(std::uint64_t a, std::uint64_t b) { return a > kMost - b ? kMost : a + b; }

std::string bytes_text(std::uint64_t bytes) {
  if (bytes == kMost) return "more than " + std::to_string(kMost) + " bytes";
  return std::to_string(bytes) + " bytes (" + human_bytes(static_cast<double>(bytes)) + ")";
}

HostMemory available_host_memory() {
  HostMemory m;
  if (const auto available = meminfo("MemAvailable")) {
    m.available = *available;
    m.source = "MemAvailable in /proc/meminfo";
  } else {
    m.available = bytes_for(static_cast<std::uint64_t>(::sysconf(_SC_AVPHYS_PAGES)),
                            static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
    m.source = "free pages (sysconf)";
  }
  if (const auto left = cgroup_available(); left && *left < m.available) {
    m.available = *left;
    m.source = "the memory limit of this process's cgroup, less what it uses";
  }
  return m;
}

}  // namespace gpuk
