// The host machine, as the CPU references and data generators use it.
#pragma once
#include <cstddef>

namespace gpuk {

// Threads an OpenMP parallel region uses (1 without OpenMP): the CPU references' thread count.
int cpu_threads();

// Whether a[0, bytes) and b[0, bytes) are the same bytes (memcmp), compared in shares on up to
// cpu_threads() std::threads (one below 16 MiB): a CPU reference's check of a large answer.
bool equal_bytes(const void* a, const void* b, std::size_t bytes);

}  // namespace gpuk
