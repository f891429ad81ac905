// Refused at compile time: gpuk reduces no bool.
// expect: gpuk: unsupported element type
#include "gpuk/reduce.hpp"

void call(const gpuk::Engine& engine, const bool* d_in, CUstream stream) {
  (void)gpuk::reduce::sum(engine, d_in, 100, stream);
}
