// What the three ported programs share: the skip without a GPU, CUDA error checks, and an
// element-by-element comparison of gpuk's answer with the original's (CUB's, Thrust's), bit for
// bit. Each program runs the original code and the gpuk code on the same input, in one process.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ported {

constexpr int kSkipped = 77;  // CTest's "skipped": no GPU here

// Exits 77 with one line when there is no GPU to run on.
inline void skip_without_gpu(const char* program) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("%s: skipped: no CUDA device here\n", program);
    std::exit(kSkipped);
  }
}

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

template <class T> std::vector<T> download(const T* d, std::size_t n) {
  std::vector<T> h(n);
  if (n) check(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return h;
}

// Bit-for-bit equal (floats: -0.0 is not +0.0, NaNs compare by their bits); prints the first
// difference. Returns whether they match.
template <class T> bool same(const char* what, const std::vector<T>& original, const std::vector<T>& gpuk) {
  for (std::size_t i = 0; i < original.size(); ++i)
    if (std::memcmp(&original[i], &gpuk[i], sizeof(T)) != 0) {
      std::printf("  %-28s DIFFERENT at %zu of %zu\n", what, i, original.size());
      return false;
    }
  std::printf("  %-28s the same (%zu elements)\n", what, original.size());
  return true;
}

}  // namespace ported
