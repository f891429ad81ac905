// An application that owns its GPU memory and stream and asks gpuk for argmax, sum, find and
// sort of its device arrays (docs/api.md, "Examples"). Everything is allocated with the CUDA
// runtime; the four calls are enqueued on the application's own stream without waiting, the
// answers copied back once at the end, and each checked against the same computed on the host.
//
//   device_buffers [N]    (default N = 1000000)
//
// Exit status: 0 every answer right, 1 a wrong answer or an error, 77 no GPU here (skipped).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/search.hpp"
#include "gpuk/sort.hpp"

namespace {

constexpr int kSkipped = 77;  // what CTest's SKIP_RETURN_CODE expects (examples/CMakeLists.txt)

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// A device array the application owns, freed when it goes out of scope.
template <class T> class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : n_(n) {
    check_cuda(cudaMalloc(&data_, std::max<std::size_t>(1, n) * sizeof(T)), "cudaMalloc");
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return data_; }
  void upload(const std::vector<T>& host, cudaStream_t stream) {
    check_cuda(cudaMemcpyAsync(data_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice, stream), "upload");
  }
  void download(std::vector<T>& host, cudaStream_t stream) const {
    host.resize(n_);
    check_cuda(cudaMemcpyAsync(host.data(), data_, n_ * sizeof(T), cudaMemcpyDeviceToHost, stream), "download");
  }

 private:
  T* data_ = nullptr;
  std::size_t n_;
};

int run(std::size_t n) {
  gpuk::Engine engine;  // device 0; gpuk's kernels and plugins; the CLI's cache and tuning database
  try {
    std::printf("device: %s\n", engine.device_name().c_str());
  } catch (const gpuk::NoDeviceError& e) {
    std::printf("device_buffers: skipped: %s\n", e.what());
    return kSkipped;
  }

  // The application's data: floats with the maximum twice (the first one is argmax's answer),
  // and integers with one value put at a known place.
  std::mt19937 rng(2026);
  std::vector<float> x(n);
  std::uniform_real_distribution<float> uniform(-1000, 1000);
  for (float& v : x) v = uniform(rng);
  x[n / 3] = x[n - 1] = 5000;
  std::vector<std::int32_t> a(n);
  for (std::int32_t& v : a) v = static_cast<std::int32_t>(rng() % 1000000);
  const std::int32_t wanted = 1234567;  // not among the values above
  a[n / 2] = a[n - 1] = wanted;

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  int status = 1;
  {
    DeviceArray<float> d_x(n), d_sorted(n);
    DeviceArray<std::int32_t> d_a(n);
    DeviceArray<gpuk::reduce::Best<float>> d_best(1);
    DeviceArray<gpuk::reduce::Sum<std::int32_t>> d_sum(1);  // int64: a sum of int32 is exact
    DeviceArray<std::int64_t> d_index(1);
    d_x.upload(x, stream);
    d_a.upload(a, stream);

    // Four calls on the application's stream; each returns at once, its answer in device memory.
    gpuk::reduce::argmax(engine, d_x.get(), d_best.get(), n, stream);
    gpuk::reduce::sum(engine, d_a.get(), d_sum.get(), n, stream);
    gpuk::search::find(engine, d_a.get(), d_index.get(), n, wanted, stream);
    gpuk::sort::keys(engine, d_x.get(), d_sorted.get(), n, stream);

    std::vector<gpuk::reduce::Best<float>> best;
    std::vector<std::int64_t> sum, index;
    std::vector<float> sorted;
    d_best.download(best, stream);
    d_sum.download(sum, stream);
    d_index.download(index, stream);
    d_sorted.download(sorted, stream);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");  // the one wait

    // The same answers on the host.
    const auto host_best = std::max_element(x.begin(), x.end()) - x.begin();
    const std::int64_t host_sum = std::accumulate(a.begin(), a.end(), std::int64_t{0});
    const auto host_index = std::find(a.begin(), a.end(), wanted) - a.begin();
    std::vector<float> host_sorted = x;
    std::sort(host_sorted.begin(), host_sorted.end());

    int wrong = 0;
    const auto report = [&](bool right, const std::string& line) {
      std::printf("%-5s %s\n", right ? "ok" : "WRONG", line.c_str());
      wrong += right ? 0 : 1;
    };
    report(best[0].index == host_best && best[0].value == x[host_best],
           "argmax: " + std::to_string(best[0].value) + " at " + std::to_string(best[0].index) + " (host: at " +
               std::to_string(host_best) + ")");
    report(sum[0] == host_sum, "sum: " + std::to_string(sum[0]) + " (host: " + std::to_string(host_sum) + ")");
    report(index[0] == host_index,
           "find " + std::to_string(wanted) + ": " + std::to_string(index[0]) + " (host: " + std::to_string(host_index) + ")");
    report(sorted == host_sorted, "sort: " + std::to_string(n) + " floats, " + std::to_string(sorted.front()) + " .. " +
                                      std::to_string(sorted.back()));
    std::printf("%s (n = %zu)\n", wrong == 0 ? "all answers right" : "WRONG ANSWERS", n);
    status = wrong == 0 ? 0 : 1;
  }
  cudaStreamDestroy(stream);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  if (n < 3) {
    std::fprintf(stderr, "usage: device_buffers [N], N at least 3\n");
    return 1;
  }
  try {
    return run(n);
  } catch (const std::exception& e) {  // gpuk::Error (config, compile, device) or a CUDA runtime error
    std::fprintf(stderr, "device_buffers: %s\n", e.what());
    return 1;
  }
}
