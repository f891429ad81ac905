// bench_topk: gpuk's top-k (the library API's prepared handle, default path) against CUB's
// DeviceTopK (one array) and DeviceBatchedTopK (rows), on the same device keys in one process,
// every answer verified against the CPU: gpuk's element by element (keys and indices: the first k
// of the stable sort, ties by the lower index, in input order), CUB's as a set (its tie choice and
// order are unspecified: the same multiset of keys as the CPU's, each at the index it names, no
// index twice). Built by tools/bench/bench_topk.sh against the newest CCCL's headers (CUB's top-k
// is newer than the toolkit's CCCL), never by the project's build. Prints the CCCL version.
// Usage: bench_topk [float32|int32 ...]   (SIZES="16 20", KS="1 32", BATCHES=0: skip the batches,
//   ROW_SIZES="12": the batches' row lengths, log2: 12..16 are 1024 rows, 20 is 16 rows)
#include <cub/device/device_batched_topk.cuh>
#include <cub/device/device_topk.cuh>
#include <cuda/iterator>
#include <cuda/std/__cccl/version.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpuk/gpuk.hpp"
#include "gpuk/sort.hpp"

namespace {

#define CHECK_CUDA(call)                                                                     \
  do {                                                                                       \
    const cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

std::vector<int> numbers(const char* env, std::vector<int> fallback) {
  const char* s = std::getenv(env);
  if (!s) return fallback;
  std::vector<int> out;
  std::istringstream in(s);
  for (int v; in >> v;) out.push_back(v);
  return out;
}

// Median of `repeats` timed calls after `warmup`, in ms, by events on `stream`.
template <class F> double time_ms(F&& call, cudaStream_t stream, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) call();
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < repeats; ++i) {
    CHECK_CUDA(cudaEventRecord(a, stream));
    call();
    CHECK_CUDA(cudaEventRecord(b, stream));
    CHECK_CUDA(cudaEventSynchronize(b));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The CPU's answer for one row: the k largest, ties by the lower index, in input order.
template <class K> std::vector<std::int64_t> cpu_topk(const K* row, std::int64_t len, std::int64_t k) {
  std::vector<K> copy(row, row + len);
  std::nth_element(copy.begin(), copy.begin() + (k - 1), copy.end(), [](K a, K b) { return a > b; });
  const K kth = copy[k - 1];
  std::int64_t above = 0;
  for (std::int64_t i = 0; i < len; ++i) above += row[i] > kth;
  std::int64_t ties = k - above;
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < len && static_cast<std::int64_t>(out.size()) < k; ++i)
    if (row[i] > kth || (row[i] == kth && ties-- > 0)) out.push_back(i);
  return out;
}

struct Answer {
  std::vector<std::int64_t> index;  // rows * k
};

// gpuk's: exactly the CPU's. CUB's: the same keys as a multiset, each at its index, no index twice.
template <class K>
std::string verify(const std::vector<K>& keys, std::int64_t rows, std::int64_t len, std::int64_t k,
                   const std::vector<K>& values, const std::vector<std::int64_t>& index, const Answer& want, bool exact) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const K* row = keys.data() + r * len;
    std::vector<K> got_keys, want_keys;
    std::vector<std::int64_t> seen;
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t at = index[r * k + j];
      if (at < 0 || at >= len) return "row " + std::to_string(r) + ": index " + std::to_string(at) + " out of the row";
      if (std::memcmp(&row[at], &values[r * k + j], sizeof(K)) != 0) return "row " + std::to_string(r) + ": a key not at its index";
      if (exact && at != want.index[r * k + j]) return "row " + std::to_string(r) + ": index " + std::to_string(j) + " differs";
      got_keys.push_back(values[r * k + j]);
      want_keys.push_back(row[want.index[r * k + j]]);
      seen.push_back(at);
    }
    std::sort(got_keys.begin(), got_keys.end());
    std::sort(want_keys.begin(), want_keys.end());
    std::sort(seen.begin(), seen.end());
    if (got_keys != want_keys) return "row " + std::to_string(r) + ": not the k largest keys";
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return "row " + std::to_string(r) + ": an index twice";
  }
  return "";
}

auto cub_env(cudaStream_t stream) {
  return cuda::std::execution::env{cuda::stream_ref{stream},
                                   cuda::execution::require(cuda::execution::determinism::not_guaranteed,
                                                            cuda::execution::output_ordering::unsorted)};
}
auto cub_batched_env(cudaStream_t stream) {
  return cuda::std::execution::env{
      cuda::stream_ref{stream},
      cuda::execution::require(cuda::execution::determinism::not_guaranteed, cuda::execution::tie_break::unspecified,
                               cuda::execution::output_ordering::unsorted)};
}

// Row r's keys: d_keys + r * len (DeviceBatchedTopK's iterator of segment iterators).
template <class T> struct RowStart {
  T* base;
  long long len;
  __host__ __device__ T* operator()(long long r) const { return base + r * len; }
};

template <class K> void fill(std::vector<K>& v, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  if constexpr (std::is_floating_point_v<K>) {
    std::uniform_real_distribution<K> u(-1, 1);
    for (auto& x : v) x = u(rng);
  } else {
    for (auto& x : v) x = static_cast<K>(rng());
  }
}

// One row or `rows` rows of len keys; CUB's batched call for rows > 1 where its segment size
// LEN (a compile-time bound, one block a segment) is given, else DeviceTopK row by row.
template <class K, long long LEN>
void run_case(const gpuk::Engine& engine, const char* dtype, std::int64_t rows, std::int64_t len, std::int64_t k,
              cudaStream_t stream) {
  const std::int64_t n = rows * len, out = rows * k;
  std::vector<K> keys(n);
  fill(keys, static_cast<std::uint64_t>(n * 7 + k));
  K *d_keys, *d_values, *d_cub_values;
  std::int64_t *d_index, *d_cub_index;
  CHECK_CUDA(cudaMalloc(&d_keys, n * sizeof(K)));
  CHECK_CUDA(cudaMalloc(&d_values, out * sizeof(K)));
  CHECK_CUDA(cudaMalloc(&d_cub_values, out * sizeof(K)));
  CHECK_CUDA(cudaMalloc(&d_index, out * 8));
  CHECK_CUDA(cudaMalloc(&d_cub_index, out * 8));
  CHECK_CUDA(cudaMemcpy(d_keys, keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  const int repeats = n <= (1 << 22) ? 50 : 15;

  // gpuk: the prepared handle (k fixed, the largest, in input order as CUB's unsorted output).
  auto topk = gpuk::sort::prepare_topk<K>(engine, n, k, gpuk::sort::TopKOptions{true, false, static_cast<std::uint64_t>(rows)});
  CHECK_CUDA(cudaMemset(d_values, 0xA5, out * sizeof(K)));
  CHECK_CUDA(cudaMemset(d_index, 0xA5, out * 8));
  const double gpuk_ms = time_ms([&] { topk(d_keys, d_values, d_index, n, stream); }, stream, 3, repeats);

  // CUB: its temporary storage allocated once, outside the timing.
  void* d_temp = nullptr;
  size_t temp_bytes = 0;
  const auto indices = cuda::counting_iterator<std::int64_t>(0);
  std::string cub_name;
  std::function<void()> cub_call;
  if (rows == 1) {
    cub_name = "DeviceTopK::MaxPairs";
    CHECK_CUDA(cub::DeviceTopK::MaxPairs(nullptr, temp_bytes, d_keys, d_cub_values, indices, d_cub_index, n, k,
                                         cub_env(stream)));
    CHECK_CUDA(cudaMalloc(&d_temp, std::max<size_t>(temp_bytes, 1)));
    cub_call = [&] {
      CHECK_CUDA(cub::DeviceTopK::MaxPairs(d_temp, temp_bytes, d_keys, d_cub_values, indices, d_cub_index, n, k,
                                           cub_env(stream)));
    };
  } else if constexpr (LEN > 0) {
    cub_name = "DeviceBatchedTopK::MaxPairs";
    const auto rows_in = cuda::make_transform_iterator(cuda::counting_iterator<long long>(0), RowStart<const K>{d_keys, len});
    const auto rows_out = cuda::make_transform_iterator(cuda::counting_iterator<long long>(0), RowStart<K>{d_cub_values, k});
    const auto idx_in = cuda::make_transform_iterator(
        cuda::counting_iterator<long long>(0),
        [] __host__ __device__(long long) { return cuda::counting_iterator<std::int64_t>(0); });
    const auto idx_out = cuda::make_transform_iterator(cuda::counting_iterator<long long>(0), RowStart<std::int64_t>{d_cub_index, k});
    const auto call = [&](void* temp, size_t& bytes) {
      return cub::DeviceBatchedTopK::MaxPairs(temp, bytes, rows_in, rows_out, idx_in, idx_out,
                                              cuda::args::constant<LEN>{}, cuda::args::immediate{k}, rows,
                                              cub_batched_env(stream));
    };
    CHECK_CUDA(call(nullptr, temp_bytes));
    CHECK_CUDA(cudaMalloc(&d_temp, std::max<size_t>(temp_bytes, 1)));
    cub_call = [&] { CHECK_CUDA(call(d_temp, temp_bytes)); };
  } else {
    cub_name = "DeviceTopK::MaxPairs per row";
    CHECK_CUDA(cub::DeviceTopK::MaxPairs(nullptr, temp_bytes, d_keys, d_cub_values, indices, d_cub_index, len, k,
                                         cub_env(stream)));
    CHECK_CUDA(cudaMalloc(&d_temp, std::max<size_t>(temp_bytes, 1)));
    cub_call = [&] {
      for (std::int64_t r = 0; r < rows; ++r)
        CHECK_CUDA(cub::DeviceTopK::MaxPairs(d_temp, temp_bytes, d_keys + r * len, d_cub_values + r * k, indices,
                                             d_cub_index + r * k, len, k, cub_env(stream)));
    };
  }
  CHECK_CUDA(cudaMemset(d_cub_values, 0xA5, out * sizeof(K)));
  CHECK_CUDA(cudaMemset(d_cub_index, 0xA5, out * 8));
  const double cub_ms = time_ms(cub_call, stream, 3, repeats);

  Answer want;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto row = cpu_topk(keys.data() + r * len, len, k);
    want.index.insert(want.index.end(), row.begin(), row.end());
  }
  std::vector<K> values(out), cub_values(out);
  std::vector<std::int64_t> index(out), cub_index(out);
  CHECK_CUDA(cudaMemcpy(values.data(), d_values, out * sizeof(K), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(index.data(), d_index, out * 8, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(cub_values.data(), d_cub_values, out * sizeof(K), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(cub_index.data(), d_cub_index, out * 8, cudaMemcpyDeviceToHost));
  const std::string gpuk_check = verify(keys, rows, len, k, values, index, want, true);
  const std::string cub_check = verify(keys, rows, len, k, cub_values, cub_index, want, false);
  std::printf("| %s | %lld | %lld | %lld | %.4f | %.4f | %.2fx | %s | %s | %s |\n", dtype, static_cast<long long>(rows),
              static_cast<long long>(len), static_cast<long long>(k), gpuk_ms, cub_ms, cub_ms / gpuk_ms,
              gpuk_check.empty() ? "PASS" : ("FAIL: " + gpuk_check).c_str(),
              cub_check.empty() ? "PASS" : ("FAIL: " + cub_check).c_str(), cub_name.c_str());
  std::fflush(stdout);
  cudaFree(d_temp);
  cudaFree(d_keys);
  cudaFree(d_values);
  cudaFree(d_cub_values);
  cudaFree(d_index);
  cudaFree(d_cub_index);
}

template <class K> void run_dtype(const gpuk::Engine& engine, const char* dtype, cudaStream_t stream) {
  const std::vector<int> ks = numbers("KS", {1, 8, 32, 256, 1024, 4096});
  for (const int e : numbers("SIZES", {16, 18, 20, 22, 24, 26, 28}))
    for (const int k : ks)
      if ((std::int64_t{1} << e) >= k) run_case<K, 0>(engine, dtype, 1, std::int64_t{1} << e, k, stream);
  if (std::getenv("BATCHES") && std::string(std::getenv("BATCHES")) == "0") return;
  const std::vector<int> row_sizes = numbers("ROW_SIZES", {12, 13, 14, 15, 16, 20});
  for (const int k : ks)
    for (const int e : row_sizes) {
      // DeviceBatchedTopK takes rows one block can hold (CCCL 3.5, float32 and int32 keys with
      // int64 indices: 4096 compiles, 8192 does not: "segments small enough to be processed by a
      // single thread block"); longer rows go to DeviceTopK row by row, what CUB offers for them.
      const std::int64_t len = std::int64_t{1} << e, rows = e <= 16 ? 1024 : 16;
      if (len < k) continue;
      if (e == 12) run_case<K, 4096>(engine, dtype, rows, len, k, stream);
      else run_case<K, 0>(engine, dtype, rows, len, k, stream);
    }
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("CCCL %d.%d.%d (CUB's top-k); gpuk's default path (the family's choice: topk_rows for 64 rows or more "
              "of at most 8192 keys, else topk_radix)\n\n",
              CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
  std::printf("| dtype | rows | row length | k | gpuk ms | CUB ms | CUB / gpuk | gpuk answer | CUB answer | CUB call |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  gpuk::Engine engine;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  std::vector<std::string> dtypes(argv + 1, argv + argc);
  if (dtypes.empty()) dtypes = {"float32", "int32"};
  for (const std::string& d : dtypes) {
    if (d == "float32") run_dtype<float>(engine, "float32", stream);
    else if (d == "int32") run_dtype<std::int32_t>(engine, "int32", stream);
    else std::fprintf(stderr, "bench_topk: no dtype %s (float32, int32)\n", d.c_str());
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  return 0;
}
