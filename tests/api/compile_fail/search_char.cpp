// Refused at compile time: gpuk searches no char.
// expect: gpuk: unsupported element type
#include "gpuk/search.hpp"

void call(const gpuk::Engine& engine, const char* d_in, CUstream stream) {
  (void)gpuk::search::find(engine, d_in, 100, 'x', stream);
}
