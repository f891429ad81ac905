// cuda-samples' Samples/2_Concepts_and_Techniques/radixSortThrust ported to gpuk: 32-bit unsigned
// int keys (or, with -float, float keys in [0, 1)) and uint32 values 0, 1, 2, ..., sorted by
// thrust::sort_by_key (or thrust::sort with -keysonly) and by a prepared gpuk sort, timed over the
// same iterations with CUDA events, answers compared element by element. The prepared handle
// compiles, loads and allocates when it is made, so the first timed call is as fast as the rest
// (no warm-up call); thrust::device_vector's data() goes in as it is, with no cast.
//
//   thrust_radix_sort [-n=N] [-float] [-keysonly] [-iterations=I]   (N default 1048576, as the original)
//
// Exit status: 0 the same answers and sorted, 1 a difference or an error, 77 no GPU here.
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "gpuk/gpuk.hpp"
#include "gpuk/sort.hpp"
#include "ported.cuh"

namespace {

struct Args {
  std::size_t n = 1048576;
  bool floats = false, keys_only = false;
  unsigned iterations = 0;  // 0: the original's (10 from 2^24 elements, else 100)
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s.rfind("-n=", 0) == 0) a.n = std::strtoull(s.c_str() + 3, nullptr, 10);
    else if (s == "-float") a.floats = true;
    else if (s == "-keysonly") a.keys_only = true;
    else if (s.rfind("-iterations=", 0) == 0) a.iterations = static_cast<unsigned>(std::strtoul(s.c_str() + 12, nullptr, 10));
    else {
      std::fprintf(stderr, "usage: thrust_radix_sort [-n=N] [-float] [-keysonly] [-iterations=I]\n");
      std::exit(1);
    }
  }
  if (a.iterations == 0) a.iterations = a.n >= 16777216 ? 10 : 100;
  return a;
}

// Seconds per sort of `sort` (which sorts d_keys, d_values in place or into outputs), the keys
// reset before each, as the original times it.
template <class Sort>
float seconds_per_sort(unsigned iterations, Sort&& sort) {
  cudaEvent_t start, stop;
  ported::check(cudaEventCreate(&start), "cudaEventCreate");
  ported::check(cudaEventCreate(&stop), "cudaEventCreate");
  float total = 0;
  for (unsigned i = 0; i < iterations; ++i) {
    sort(true);  // reset
    ported::check(cudaEventRecord(start, 0), "cudaEventRecord");
    sort(false);
    ported::check(cudaEventRecord(stop, 0), "cudaEventRecord");
    ported::check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    ported::check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    total += ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return total / (1e3f * iterations);
}

template <class T>
int test(const Args& a) {
  std::printf("Sorting %zu 32-bit %s keys %s\n", a.n, a.floats ? "float" : "unsigned int", a.keys_only ? "(only)" : "and values");
  thrust::host_vector<T> h_keys(a.n);
  std::mt19937 rng(1);
  for (auto& k : h_keys) {
    if constexpr (std::is_same_v<T, float>) k = std::uniform_real_distribution<float>(0, 1)(rng);
    else k = std::uniform_int_distribution<unsigned>(0, UINT_MAX)(rng);
  }
  thrust::host_vector<unsigned> h_values(a.keys_only ? 0 : a.n);
  thrust::sequence(h_values.begin(), h_values.end());

  // The original: thrust::sort / thrust::sort_by_key in place on device_vectors.
  thrust::device_vector<T> d_keys;
  thrust::device_vector<unsigned> d_values;
  const float thrust_s = seconds_per_sort(a.iterations, [&](bool reset) {
    if (reset) {
      d_keys = h_keys;
      if (!a.keys_only) d_values = h_values;
    } else if (a.keys_only) {
      thrust::sort(d_keys.begin(), d_keys.end());
    } else {
      thrust::sort_by_key(d_keys.begin(), d_keys.end(), d_values.begin());
    }
  });
  const thrust::host_vector<T> thrust_keys = d_keys;
  const thrust::host_vector<unsigned> thrust_values = d_values;

  // gpuk: a prepared sort for up to n keys, in place on the same kind of device_vectors.
  const gpuk::Engine engine;
  thrust::device_vector<T> g_keys;
  thrust::device_vector<unsigned> g_values;
  float gpuk_s = 0;
  if (a.keys_only) {
    auto sort = gpuk::sort::prepare_keys<T>(engine, a.n);
    gpuk_s = seconds_per_sort(a.iterations, [&](bool reset) {
      if (reset) g_keys = h_keys;
      else sort(g_keys.data().get(), g_keys.data().get(), a.n, nullptr);
    });
  } else {
    auto sort = gpuk::sort::prepare_pairs<T, unsigned>(engine, a.n);
    gpuk_s = seconds_per_sort(a.iterations, [&](bool reset) {
      if (reset) {
        g_keys = h_keys;
        g_values = h_values;
      } else {
        sort(g_keys.data().get(), g_keys.data().get(), g_values.data().get(), g_values.data().get(), a.n, nullptr);
      }
    });
  }
  std::printf("radixSortThrust, Throughput = %.4f MElements/s, Time = %.5f s, Size = %zu elements\n",
              1e-6 * a.n / thrust_s, thrust_s, a.n);
  std::printf("gpuk,            Throughput = %.4f MElements/s, Time = %.5f s, Size = %zu elements\n",
              1e-6 * a.n / gpuk_s, gpuk_s, a.n);
  const std::vector<T> gk(g_keys.begin(), g_keys.end());
  bool ok = ported::same("keys (Thrust, gpuk)", std::vector<T>(thrust_keys.begin(), thrust_keys.end()), gk) &&
            std::is_sorted(gk.begin(), gk.end());
  if (!a.keys_only)
    ok = ported::same("values (Thrust, gpuk)", std::vector<unsigned>(thrust_values.begin(), thrust_values.end()),
                      std::vector<unsigned>(g_values.begin(), g_values.end())) && ok;
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  ported::skip_without_gpu("thrust_radix_sort");
  int status = 1;
  try {
    status = a.floats ? test<float>(a) : test<unsigned>(a);
  } catch (const gpuk::NoDeviceError& e) {
    std::printf("thrust_radix_sort: skipped: %s\n", e.what());
    return ported::kSkipped;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "thrust_radix_sort: %s\n", e.what());
    return 1;
  }
  std::printf(status == 0 ? "Test passed\n" : "Test failed!\n");
  return status;
}
