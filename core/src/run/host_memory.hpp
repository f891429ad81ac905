// Host memory: what a run's host arrays need and what the machine (or its container) has, so
// that a size too large for it is refused with the figures before any data is generated,
// instead of the kernel's OOM killer ending the process halfway.
#pragma once
#include <cstdint>
#include <string>

namespace gpuk {

struct RunSpec;
class FamilyPlugin;

// count x each bytes, or UINT64_MAX when that overflows (a size of 2^62 float64 must not wrap
// round to a few bytes and pass every check).
std::uint64_t bytes_for(std::uint64_t count, std::uint64_t each);
std::uint64_t add_bytes(std::uint64_t a, std::uint64_t b);  // a + b, or UINT64_MAX

struct HostMemory {
  std::uint64_t available = 0;
  std::string source;  // "MemAvailable in /proc/meminfo", or the cgroup limit that is lower
};

// The memory a new allocation can get without swapping or the OOM killer: /proc/meminfo's
// MemAvailable (sysconf's free pages without it), or less when the process's cgroup (a container,
// a systemd slice) has a lower limit left: memory.max less what it uses besides reclaimable cache.
HostMemory available_host_memory();

// Throws Error with the bytes needed and the bytes available when the family's host arrays for
// `spec` (FamilyPlugin::host_bytes) do not fit in available_host_memory().
void refuse_if_host_memory_short(const RunSpec& spec, const FamilyPlugin& plugin);
// The same with the family's host bytes asked already (FamilyParts::host_bytes, plugin/edge.hpp).
void refuse_if_host_memory_short(const RunSpec& spec, std::uint64_t needed);

}  // namespace gpuk
