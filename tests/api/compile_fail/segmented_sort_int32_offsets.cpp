// Refused at compile time: a segmented sort's offsets are int64, as the kernel reads them.
// expect: gpuk: segmented sort offsets are int64 (std::int64_t)
#include "gpuk/sort.hpp"

void call(const gpuk::Engine& engine, const float* k, float* ko, const int* begin, const int* end, CUstream stream) {
  gpuk::sort::segmented_keys(engine, k, ko, 100, 2, begin, end, stream);
}
