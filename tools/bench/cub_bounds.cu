// CUB's DeviceFind::LowerBound / UpperBound and their SortedValues variants, the baseline of
// tools/bench/bench_bounds.sh: 2^M needles in 2^E sorted float32 keys (evenly spaced in [-1, 1),
// as gpuk's uniform data sorted), the needles two thirds keys at random positions and one third
// uniform in [-1.25, 1.25) (beyond both ends), in any order or sorted (SortedValues). Every answer
// is checked on the device (out[i] == 0 or key[out[i] - 1] goes before the needle, and out[i] == n
// or key[out[i]] does not); each call timed with CUDA events on the default stream (temporary
// storage allocated once beforehand), the median printed. Not part of the CMake build: DeviceFind's
// bounds are in CCCL 3.3 (SortedValues 3.5), which the toolkit (CCCL 3.0) lacks; the script builds
// it against tools/bench/cccl_headers.sh's headers.
// Usage: cub_bounds E:M...   (one line per case: tab-separated, see the header line)
#include <cub/device/device_find.cuh>
#include <cub/device/device_radix_sort.cuh>
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

struct Less {
  __device__ bool operator()(float a, float b) const { return a < b; }
};

__device__ unsigned long long mix(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__global__ void fill(float* hay, long long n, float* q, long long m) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride)
    hay[i] = -1.0f + 2.0f * static_cast<float>(static_cast<double>(i) / static_cast<double>(n));
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < m; i += stride) {
    const unsigned long long r = mix(i + 0x6e6565646c65ULL);
    q[i] = r % 3 ? -1.0f + 2.0f * static_cast<float>(static_cast<double>(r % n) / static_cast<double>(n))
                 : -1.25f + 2.5f * static_cast<float>(static_cast<double>(r >> 11) * 0x1p-53);
  }
}

// Counts the answers that are not the bound (into *bad).
__global__ void verify(const float* hay, long long n, const float* q, long long m, const long long* out, bool upper,
                       unsigned long long* bad) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < m; i += stride) {
    const long long j = out[i];
    const auto before = [&](float h) { return upper ? !(q[i] < h) : h < q[i]; };
    const bool ok = j >= 0 && j <= n && (j == 0 || before(hay[j - 1])) && (j == n || !before(hay[j]));
    if (!ok) atomicAdd(bad, 1ull);
  }
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cub_bounds KEYS_EXPONENT:NEEDLES_EXPONENT...\n");
    return 2;
  }
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  unsigned long long* d_bad = nullptr;
  check(cudaMalloc(&d_bad, sizeof *d_bad), "cudaMalloc");
  std::printf("library\tn\tneedles\top\tsorted\tmedian_ms\tverify\n");
  for (int a = 1; a < argc; ++a) {
    int e = 0, mexp = 0;
    if (std::sscanf(argv[a], "%d:%d", &e, &mexp) != 2) {
      std::fprintf(stderr, "not E:M: %s\n", argv[a]);
      return 2;
    }
    const long long n = 1LL << e, m = 1LL << mexp;
    float *d_hay = nullptr, *d_q = nullptr, *d_qs = nullptr;
    long long* d_out = nullptr;
    check(cudaMalloc(&d_hay, n * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&d_q, m * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&d_qs, m * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&d_out, m * sizeof(long long)), "cudaMalloc");
    fill<<<1024, 256>>>(d_hay, n, d_q, m);
    check(cudaGetLastError(), "fill");
    {  // the sorted needles
      void* t = nullptr;
      size_t bytes = 0;
      check(cub::DeviceRadixSort::SortKeys(t, bytes, d_q, d_qs, m), "SortKeys (size)");
      check(cudaMalloc(&t, bytes), "cudaMalloc");
      check(cub::DeviceRadixSort::SortKeys(t, bytes, d_q, d_qs, m), "SortKeys");
      check(cudaFree(t), "cudaFree");
    }
    const int repeats = mexp <= 16 ? 100 : 30;
    for (const bool upper : {false, true})
      for (const bool sorted : {false, true}) {
        const float* q = sorted ? d_qs : d_q;
        const auto call = [&](void* t, size_t& bytes) {
          if (sorted)
            return upper ? cub::DeviceFind::UpperBoundSortedValues(t, bytes, d_hay, n, q, m, d_out, Less{})
                         : cub::DeviceFind::LowerBoundSortedValues(t, bytes, d_hay, n, q, m, d_out, Less{});
          return upper ? cub::DeviceFind::UpperBound(t, bytes, d_hay, n, q, m, d_out, Less{})
                       : cub::DeviceFind::LowerBound(t, bytes, d_hay, n, q, m, d_out, Less{});
        };
        void* d_temp = nullptr;
        size_t temp_bytes = 0;
        check(call(nullptr, temp_bytes), "bounds (size)");
        check(cudaMalloc(&d_temp, temp_bytes > 0 ? temp_bytes : 16), "cudaMalloc");
        std::vector<float> ms;
        for (int r = 0; r < 10 + repeats; ++r) {
          check(cudaMemset(d_out, 0xA5, m * sizeof(long long)), "cudaMemset");
          check(cudaEventRecord(start), "cudaEventRecord");
          check(call(d_temp, temp_bytes), "bounds");
          check(cudaEventRecord(stop), "cudaEventRecord");
          check(cudaEventSynchronize(stop), "cudaEventSynchronize");
          float t = 0;
          check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
          if (r >= 10) ms.push_back(t);
        }
        check(cudaMemset(d_bad, 0, sizeof *d_bad), "cudaMemset");
        verify<<<1024, 256>>>(d_hay, n, q, m, d_out, upper, d_bad);
        unsigned long long bad = 0;
        check(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost), "cudaMemcpy");
        std::printf("cub::DeviceFind::%s%s (CCCL %d.%d.%d)\t%lld\t%lld\t%s\t%s\t%.5f\t%s\n",
                    upper ? "UpperBound" : "LowerBound", sorted ? "SortedValues" : "", CCCL_MAJOR_VERSION,
                    CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, n, m, upper ? "upper_bound" : "lower_bound",
                    sorted ? "sorted" : "unsorted", median(ms), bad == 0 ? "PASS" : "FAIL");
        check(cudaFree(d_temp), "cudaFree");
      }
    check(cudaFree(d_hay), "cudaFree");
    check(cudaFree(d_q), "cudaFree");
    check(cudaFree(d_qs), "cudaFree");
    check(cudaFree(d_out), "cudaFree");
  }
  return 0;
}
