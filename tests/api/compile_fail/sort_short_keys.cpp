// Refused at compile time: gpuk sorts no 2-byte keys.
// expect: gpuk: unsupported element type
#include "gpuk/sort.hpp"

void call(const gpuk::Engine& engine, const short* d_in, short* d_out, CUstream stream) {
  gpuk::sort::keys(engine, d_in, d_out, 100, stream);
}
