// Refused at compile time: a prepared handle owns device memory; it moves, it is never copied.
// expect: deleted
#include "gpuk/reduce.hpp"

void call(const gpuk::Engine& engine) {
  auto handle = gpuk::reduce::prepare_segmented_argmax<float>(engine, 1000, 10);
  auto copy = handle;
  (void)copy;
}
