// CCCL's cub/examples/device/example_device_radix_sort.cu ported to gpuk: float keys paired with
// int values, sorted by cub::DeviceRadixSort::SortPairs and by gpuk::sort::pairs, answers compared
// bit for bit. Where CUB needs a size query, a temporary allocation, a DoubleBuffer and a free,
// gpuk needs one call; the int values need no cast, and no warm-up call comes first.
// FloatOrder::cub asks for CUB's float order (-0.0 equal to +0.0, kept in input order; NaNs by
// their bits); gpuk's default is IEEE total order (-0.0 first, NaNs last).
//
//   cub_radix_sort_pairs [N]        (default N = 150, as the original; try 1000000)
//
// Exit status: 0 the same answers, 1 a difference or an error, 77 no GPU here.
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gpuk/gpuk.hpp"
#include "gpuk/sort.hpp"
#include "ported.cuh"

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 150;
  ported::skip_without_gpu("cub_radix_sort_pairs");
  std::printf("sort pairs: %zu items (4-byte float keys, 4-byte int values)\n", n);

  // The original's input: random bits for keys and values (no NaN, as its RandomBits), with
  // -0.0 and +0.0 planted so that CUB's treatment of them is compared too.
  std::mt19937 rng(1);
  std::vector<float> keys(n);
  std::vector<int> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    do bits = rng(); while ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0);
    std::memcpy(&keys[i], &bits, 4);
    values[i] = static_cast<int>(rng());
    if (i % 17 == 3) keys[i] = (i % 2) ? -0.0f : 0.0f;
  }
  float *d_keys = nullptr, *d_keys_alt = nullptr, *d_keys_out = nullptr;
  int *d_values = nullptr, *d_values_alt = nullptr, *d_values_out = nullptr;
  const std::size_t kb = n * sizeof(float), vb = n * sizeof(int);
  for (void** p : {(void**)&d_keys, (void**)&d_keys_alt, (void**)&d_keys_out}) ported::check(cudaMalloc(p, kb ? kb : 4), "cudaMalloc");
  for (void** p : {(void**)&d_values, (void**)&d_values_alt, (void**)&d_values_out}) ported::check(cudaMalloc(p, vb ? vb : 4), "cudaMalloc");
  ported::check(cudaMemcpy(d_keys, keys.data(), kb, cudaMemcpyHostToDevice), "upload keys");
  ported::check(cudaMemcpy(d_values, values.data(), vb, cudaMemcpyHostToDevice), "upload values");

  // The original: size query, temporary storage, sort (keys and values ping-pong in DoubleBuffers).
  ported::check(cudaMemcpy(d_keys_alt, d_keys, kb, cudaMemcpyDeviceToDevice), "copy");
  ported::check(cudaMemcpy(d_values_alt, d_values, vb, cudaMemcpyDeviceToDevice), "copy");
  cub::DoubleBuffer<float> cub_keys(d_keys_alt, d_keys_out);
  cub::DoubleBuffer<int> cub_values(d_values_alt, d_values_out);
  std::size_t temp_bytes = 0;
  void* d_temp = nullptr;
  ported::check(cub::DeviceRadixSort::SortPairs(d_temp, temp_bytes, cub_keys, cub_values, static_cast<int>(n)), "CUB size query");
  ported::check(cudaMalloc(&d_temp, temp_bytes ? temp_bytes : 1), "cudaMalloc");
  ported::check(cub::DeviceRadixSort::SortPairs(d_temp, temp_bytes, cub_keys, cub_values, static_cast<int>(n)), "CUB sort");
  ported::check(cudaDeviceSynchronize(), "CUB sort");
  const std::vector<float> cub_sorted_keys = ported::download(cub_keys.Current(), n);
  const std::vector<int> cub_sorted_values = ported::download(cub_values.Current(), n);
  cudaFree(d_temp);

  // gpuk: one call on the original's arrays, into outputs of its own.
  float* d_gpuk_keys = nullptr;
  int* d_gpuk_values = nullptr;
  ported::check(cudaMalloc(&d_gpuk_keys, kb ? kb : 4), "cudaMalloc");
  ported::check(cudaMalloc(&d_gpuk_values, vb ? vb : 4), "cudaMalloc");
  try {
    const gpuk::Engine engine;
    gpuk::sort::pairs(engine, d_keys, d_gpuk_keys, d_values, d_gpuk_values, n, nullptr,
                      gpuk::sort::Options(gpuk::sort::Order::ascending, 0, 32, gpuk::sort::FloatOrder::cub));
    ported::check(cudaDeviceSynchronize(), "gpuk sort");
  } catch (const gpuk::NoDeviceError& e) {
    std::printf("cub_radix_sort_pairs: skipped: %s\n", e.what());
    return ported::kSkipped;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cub_radix_sort_pairs: gpuk: %s\n", e.what());
    return 1;
  }
  const bool ok = ported::same("keys (CUB, gpuk)", cub_sorted_keys, ported::download(d_gpuk_keys, n)) &
                  ported::same("values (CUB, gpuk)", cub_sorted_values, ported::download(d_gpuk_values, n));
  for (void* p : {(void*)d_keys, (void*)d_keys_alt, (void*)d_keys_out, (void*)d_values, (void*)d_values_alt,
                  (void*)d_values_out, (void*)d_gpuk_keys, (void*)d_gpuk_values})
    cudaFree(p);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
