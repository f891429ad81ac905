// CUB's DeviceFind::FindIf, the baseline of tools/bench/bench_find_if.sh: the first x >= v in n
// ascending float32 (x[i] = float(i)), with the first match at the start, the middle, the end, or
// absent; each answer checked, each call timed with CUDA events (temporary storage allocated once
// beforehand, as an application that calls CUB in a loop would), the median printed. Also the
// device-to-device copy rate of 1 GiB (read + write), the measured bandwidth the absent case is
// held to. Not part of the CMake build: DeviceFind is in CCCL 3.3 and later, which the toolkit
// (CCCL 3.0) lacks; the script builds it against tools/bench/cccl_headers.sh's headers.
// Usage: cub_find_if EXPONENT...   (one line per case: tab-separated, see the header line)
#include <cub/device/device_find.cuh>
#include <cuda/std/__cccl/version.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct AtLeast {
  float v;
  __device__ bool operator()(float x) const { return x >= v; }
};

__global__ void fill_ascending(float* x, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    x[i] = static_cast<float>(i);
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cub_find_if EXPONENT...\n");
    return 2;
  }
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::printf("library\tn\tat\tindex\tmedian_ms\tgbs\tverify\n");
  const char* library = "cub::DeviceFind::FindIf";
  long long* d_out = nullptr;
  check(cudaMalloc(&d_out, sizeof(long long)), "cudaMalloc");
  for (int a = 1; a < argc; ++a) {
    const int e = std::atoi(argv[a]);
    const long long n = 1LL << e;
    float* d_x = nullptr;
    check(cudaMalloc(&d_x, n * sizeof(float)), "cudaMalloc");
    fill_ascending<<<1024, 256, 0, stream>>>(d_x, n);
    check(cudaGetLastError(), "fill_ascending");
    const int repeats = e <= 20 ? 200 : e <= 24 ? 50 : 20;
    for (const char* at : {"start", "middle", "end", "absent"}) {
      const long long p = at[0] == 's' ? 0 : at[0] == 'm' ? n / 2 : n - 1;
      const float v = at[0] == 'a' ? static_cast<float>(2 * n) : static_cast<float>(p);
      // the first i with float(i) >= v: float(i) rounds above 2^24, so the match can come early
      long long expected = at[0] == 'a' ? -1 : p;
      while (expected > 0 && static_cast<float>(expected - 1) >= v) --expected;
      void* d_temp = nullptr;
      size_t temp_bytes = 0;
      check(cub::DeviceFind::FindIf(nullptr, temp_bytes, d_x, d_out, AtLeast{v}, n, stream), "FindIf (size)");
      check(cudaMalloc(&d_temp, temp_bytes > 0 ? temp_bytes : 16), "cudaMalloc");
      std::vector<float> ms;
      for (int r = 0; r < 10 + repeats; ++r) {
        check(cudaMemsetAsync(d_out, 0xA5, sizeof(long long), stream), "cudaMemsetAsync");
        check(cudaEventRecord(start, stream), "cudaEventRecord");
        check(cub::DeviceFind::FindIf(d_temp, temp_bytes, d_x, d_out, AtLeast{v}, n, stream), "FindIf");
        check(cudaEventRecord(stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float t = 0;
        check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
        if (r >= 10) ms.push_back(t);
      }
      long long got = 0;
      check(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost), "cudaMemcpy");
      const long long index = got == n ? -1 : got;  // CUB answers n when nothing matches, as std::find_if
      const float m = median(ms);
      std::printf("%s (CCCL %d.%d.%d)\t%lld\t%s\t%lld\t%.5f\t%.1f\t%s\n", library, CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION,
                  CCCL_PATCH_VERSION, n, at, index, m, n * sizeof(float) / (m * 1e6),
                  index == expected ? "PASS" : "FAIL");
      check(cudaFree(d_temp), "cudaFree");
    }
    check(cudaFree(d_x), "cudaFree");
  }
  // The measured bandwidth: a device-to-device copy of 1 GiB reads and writes it.
  const size_t bytes = size_t{1} << 30;
  void *d_a = nullptr, *d_b = nullptr;
  check(cudaMalloc(&d_a, bytes), "cudaMalloc");
  check(cudaMalloc(&d_b, bytes), "cudaMalloc");
  check(cudaMemsetAsync(d_a, 1, bytes, stream), "cudaMemsetAsync");
  std::vector<float> ms;
  for (int r = 0; r < 13; ++r) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    check(cudaMemcpyAsync(d_b, d_a, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    if (r >= 3) ms.push_back(t);
  }
  std::printf("copy\t%zu\tread+write\t-\t%.5f\t%.1f\t-\n", bytes, median(ms), 2.0 * bytes / (median(ms) * 1e6));
  return 0;
}
