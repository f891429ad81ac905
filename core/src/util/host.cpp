#include "util/host.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace gpuk {

int cpu_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace gpuk
