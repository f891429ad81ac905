// Refused at compile time: a segmented reduction's elements are gpuk's types, as a contiguous one's.
// expect: gpuk: unsupported element type
#include "gpuk/reduce.hpp"

void call(const gpuk::Engine& engine) {
  auto handle = gpuk::reduce::prepare_segmented_sum<short>(engine, 1000, 10);
  (void)handle;
}
