// holoscan-sdk's modules/holoinfer/src/process/data_processor.cu, max_per_channel_scaled_cuda,
// ported to gpuk: for an HWC float image (rows x cols pixels, `channels` interleaved), the pixel of
// each channel's maximum, written as (row / rows, col / cols). The original runs
// cub::DeviceReduce::ArgMax once per channel over a strided iterator, with a size query and
// temporary storage; gpuk runs one per-channel argmax launch over the interleaved data (no
// transpose, no per-channel loop, no scratch to manage). The same normalize kernel follows both;
// their outputs are compared bit for bit.
//
//   holoinfer_max_per_channel [ROWS COLS CHANNELS]    (default 480 640 17)
//
// Exit status: 0 the same answers, 1 a difference or an error, 77 no GPU here.
#include <cub/device/device_reduce.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "ported.cuh"

namespace {

// The original's iterator: every `step`-th float from `cur`.
class step_iterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = float;
  using difference_type = ptrdiff_t;
  using pointer = float*;
  using reference = float&;
  __host__ __device__ step_iterator(pointer cur, size_t step) : cur_(cur), step_(step) {}
  template <typename D> __host__ __device__ reference operator[](D offset) const { return cur_[offset * step_]; }
  template <typename D> __host__ __device__ step_iterator operator+(D n) { return step_iterator(cur_ + n * step_, step_); }

 private:
  pointer cur_;
  size_t step_;
};

struct CubIndex {  // CUB 2.8+: an int64 index per channel
  const cuda::std::int64_t* d;
  __device__ long long operator()(unsigned c) const { return d[c]; }
};
struct GpukIndex {  // gpuk: Best<float>{value, index} per channel
  const gpuk::reduce::Best<float>* d;
  __device__ long long operator()(unsigned c) const { return d[c].index; }
};
// The original's normalize kernel, reading each channel's pixel index through `index_of`.
template <class F>
__global__ void normalize_with(size_t rows, size_t cols, size_t channels, F index_of, float* out) {
  const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  const long long src = index_of(c);
  const long long row = src / static_cast<long long>(cols), col = src - row * static_cast<long long>(cols);
  out[c * 2 + 0] = static_cast<float>(row) / static_cast<float>(rows);
  out[c * 2 + 1] = static_cast<float>(col) / static_cast<float>(cols);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t rows = argc > 3 ? std::strtoull(argv[1], nullptr, 10) : 480;
  const std::size_t cols = argc > 3 ? std::strtoull(argv[2], nullptr, 10) : 640;
  const std::size_t channels = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 17;
  ported::skip_without_gpu("holoinfer_max_per_channel");
  const std::size_t pixels = rows * cols;
  std::printf("max per channel: %zu x %zu pixels, %zu channels (HWC float32)\n", rows, cols, channels);

  // A heat map per channel: random values, ties planted in channel 0 (the first pixel wins).
  std::vector<float> image(pixels * channels);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(0, 1);
  for (float& v : image) v = uniform(rng);
  if (pixels > 10) image[3 * channels] = image[9 * channels] = 2.0f;
  float* d_image = nullptr;
  ported::check(cudaMalloc(&d_image, image.size() * sizeof(float)), "cudaMalloc");
  ported::check(cudaMemcpy(d_image, image.data(), image.size() * sizeof(float), cudaMemcpyHostToDevice), "upload");
  cudaStream_t stream;
  ported::check(cudaStreamCreate(&stream), "cudaStreamCreate");
  const dim3 block(32), grid(static_cast<unsigned>((channels + 31) / 32));

  // The original: a size query, temporary storage, one ArgMax per channel, normalize.
  float *d_max = nullptr, *d_cub_out = nullptr, *d_gpuk_out = nullptr;
  cuda::std::int64_t* d_index = nullptr;
  ported::check(cudaMalloc(&d_max, sizeof(float) * channels), "cudaMalloc");
  ported::check(cudaMalloc(&d_index, sizeof(cuda::std::int64_t) * channels), "cudaMalloc");
  ported::check(cudaMalloc(&d_cub_out, sizeof(float) * 2 * channels), "cudaMalloc");
  ported::check(cudaMalloc(&d_gpuk_out, sizeof(float) * 2 * channels), "cudaMalloc");
  void* d_temp = nullptr;
  std::size_t temp_bytes = 0;
  ported::check(cub::DeviceReduce::ArgMax(d_temp, temp_bytes, d_image, d_max, d_index, pixels), "CUB size query");
  ported::check(cudaMalloc(&d_temp, temp_bytes), "cudaMalloc");
  for (std::size_t c = 0; c < channels; ++c) {
    step_iterator it(d_image + c, channels);
    ported::check(cub::DeviceReduce::ArgMax(d_temp, temp_bytes, it, &d_max[c], &d_index[c], pixels, stream), "CUB ArgMax");
  }
  normalize_with<<<grid, block, 0, stream>>>(rows, cols, channels, CubIndex{d_index}, d_cub_out);
  ported::check(cudaStreamSynchronize(stream), "CUB path");

  // gpuk: one launch for every channel, then the same normalize.
  gpuk::reduce::Best<float>* d_best = nullptr;
  ported::check(cudaMalloc(&d_best, sizeof(gpuk::reduce::Best<float>) * channels), "cudaMalloc");
  try {
    const gpuk::Engine engine;
    gpuk::reduce::per_channel_argmax(engine, d_image, d_best, pixels, channels, stream);
    normalize_with<<<grid, block, 0, stream>>>(rows, cols, channels, GpukIndex{d_best}, d_gpuk_out);
    // Waited for before the Engine goes: its cached Operation's scratch is freed with it.
    ported::check(cudaStreamSynchronize(stream), "gpuk path");
  } catch (const gpuk::NoDeviceError& e) {
    std::printf("holoinfer_max_per_channel: skipped: %s\n", e.what());
    return ported::kSkipped;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "holoinfer_max_per_channel: gpuk: %s\n", e.what());
    return 1;
  }

  const auto best = ported::download(d_best, channels);
  const auto maxima = ported::download(d_max, channels);
  std::vector<float> gpuk_maxima(channels);
  for (std::size_t c = 0; c < channels; ++c) gpuk_maxima[c] = best[c].value;
  const bool ok = ported::same("maxima (CUB, gpuk)", maxima, gpuk_maxima) &
                  ported::same("scaled (row, col) (CUB, gpuk)", ported::download(d_cub_out, 2 * channels),
                               ported::download(d_gpuk_out, 2 * channels));
  for (void* p : {(void*)d_image, (void*)d_max, (void*)d_index, (void*)d_cub_out, (void*)d_gpuk_out, d_temp, (void*)d_best})
    cudaFree(p);
  cudaStreamDestroy(stream);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
