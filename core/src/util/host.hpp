// The host machine, as the CPU references and data generators use it.
#pragma once

namespace gpuk {

// Threads an OpenMP parallel region uses (1 without OpenMP): the CPU references' thread count.
int cpu_threads();

}  // namespace gpuk
