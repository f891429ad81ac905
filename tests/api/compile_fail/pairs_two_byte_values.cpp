// Refused at compile time: a pair's value is 4 or 8 bytes.
// expect: gpuk: sort pairs carry trivially copyable 4- or 8-byte values
#include "gpuk/sort.hpp"

void call(const gpuk::Engine& engine, const float* k, float* ko, const short* v, short* vo, CUstream stream) {
  gpuk::sort::pairs(engine, k, ko, v, vo, 100, stream);
}
