// Host memory: byte counts that do not wrap, and what the machine (or its container) has, so
// that a run too large for it is refused with the figures before any data is generated
// (refuse_if_host_memory_short, run/host_side.hpp), instead of the kernel's OOM killer ending
// the process halfway.
#pragma once
#include <cstdint>
#include <string>

namespace gpuk {

// count x each bytes, or UINT64_MAX when that overflows (a size of 2^62 float64 must not wrap
// round to a few bytes and pass every check).
std::uint64_t bytes_for(std::uint64_t count, std::uint64_t each);
std::uint64_t add_bytes(std::uint64_t a, std::uint64_t b);  // a + b, or UINT64_MAX
// "<n> bytes (<n in KiB, MiB, GiB>)"; "more than <UINT64_MAX> bytes" for UINT64_MAX (an
// overflowed sum).
std::string bytes_text(std::uint64_t bytes);

struct HostMemory {
  std::uint64_t available = 0;
  std::string source;  // "MemAvailable in /proc/meminfo", or the cgroup limit that is lower
};

// The memory a new allocation can get without swapping or the OOM killer: /proc/meminfo's
// MemAvailable (sysconf's free pages without it), or less when the process's cgroup (a container,
// a systemd slice) has a lower limit left: memory.max less what it uses besides reclaimable cache.
HostMemory available_host_memory();

}  // namespace gpuk
