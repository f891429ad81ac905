// bench_api's CUB side: host time per cub::DeviceReduce::ArgMax call, temporary storage
// allocated once beforehand, as an application that calls CUB in a loop would.
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

double cub_argmax_host_us(const float* d_in, long long n, void* stream_handle, int batch, int batches) {
  cudaStream_t stream = static_cast<cudaStream_t>(stream_handle);
  float* d_value = nullptr;
  std::int64_t* d_index = nullptr;
  void* d_temp = nullptr;
  size_t temp_bytes = 0;
  cudaMalloc(&d_value, sizeof(float));
  cudaMalloc(&d_index, sizeof(std::int64_t));
  cub::DeviceReduce::ArgMax(nullptr, temp_bytes, d_in, d_value, d_index, static_cast<std::int64_t>(n), stream);
  cudaMalloc(&d_temp, temp_bytes > 0 ? temp_bytes : 16);
  std::vector<double> per_call;
  for (int b = 0; b < batches + 1; ++b) {  // the first batch warms up
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i)
      cub::DeviceReduce::ArgMax(d_temp, temp_bytes, d_in, d_value, d_index, static_cast<std::int64_t>(n), stream);
    const auto stop = std::chrono::steady_clock::now();
    cudaStreamSynchronize(stream);
    if (b > 0) per_call.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / batch);
  }
  cudaFree(d_temp);
  cudaFree(d_index);
  cudaFree(d_value);
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}
