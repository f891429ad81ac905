// The smallest application of an installed gpuk (docs/api.md, "Examples"): it says where gpuk
// found its library, plugins and kernels (relative to the installed libgpuk_core, from any
// working directory), then prepares one Operation (argmax of float32), says which variant gpuk
// chose and why and what the device is (Engine::device()), runs it on a device array of its own,
// and checks the answer.
//
//   installed_example [N]    (default N = 1000000)
//
// Exit status: 0 the answer is right, 1 a wrong answer or an error, 77 no GPU here (skipped,
// after the lines on where gpuk found its files).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <random>
#include <vector>

#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"

namespace {

constexpr int kSkipped = 77;

bool cuda_ok(cudaError_t status, const char* what) {
  if (status != cudaSuccess) std::fprintf(stderr, "installed_example: %s: %s\n", what, cudaGetErrorString(status));
  return status == cudaSuccess;
}

int run(std::uint64_t n) {
  const gpuk::Engine engine;
  std::printf("library %s\n", gpuk::library_dir().c_str());
  for (const std::string& family : engine.families()) std::printf("plugin %s\n", engine.plugin_path(family).c_str());
  for (const auto& path : engine.kernel_files("reduce")) std::printf("kernel %s\n", path.c_str());

  gpuk::OperationSpec spec;
  spec.family = "reduce";
  spec.operation = "argmax";
  spec.dtype = gpuk::DType::float32;
  spec.n = n;
  std::optional<gpuk::Operation> argmax;
  try {
    argmax.emplace(engine.prepare(spec));  // chooses, compiles (or reads the cache), loads, checks
  } catch (const gpuk::NoDeviceError& e) {
    std::printf("installed_example: skipped: %s\n", e.what());
    return kSkipped;
  }
  std::printf("variant %s (%s)\n", argmax->variant().c_str(), argmax->chosen().c_str());
  // The GPU, from the installed header alone: what an application sizes its work by.
  const gpuk::DeviceDescription device = engine.device();
  std::printf("device %s (%s, %d SMs, %.1f GiB; driver %d, NVRTC %s)\n", device.name.c_str(), device.arch.c_str(),
              device.sm_count, static_cast<double>(device.total_memory) / (1u << 30), device.driver_version,
              device.nvrtc_version.c_str());

  std::vector<float> x(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (float& v : x) v = uniform(rng);
  x[n / 2] = 2;
  cudaStream_t stream = nullptr;
  float* d_x = nullptr;
  gpuk::reduce::Best<float>* d_best = nullptr;  // argmax's result: arrays()[1], 16 bytes
  gpuk::reduce::Best<float> best{};
  bool ok = cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate") &&
            cuda_ok(cudaMalloc(&d_x, n * sizeof(float)), "cudaMalloc") &&
            cuda_ok(cudaMalloc(&d_best, sizeof best), "cudaMalloc") &&
            cuda_ok(cudaMemcpyAsync(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream), "upload");
  if (ok) {
    argmax->launch({d_x, d_best}, n, stream);  // typed device pointers, no casts
    ok = cuda_ok(cudaMemcpyAsync(&best, d_best, sizeof best, cudaMemcpyDeviceToHost, stream), "download") &&
         cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  cudaFree(d_best);
  cudaFree(d_x);
  if (stream) cudaStreamDestroy(stream);
  if (!ok) return 1;
  const bool right = best.index == static_cast<std::int64_t>(n / 2) && best.value == 2.0f;
  std::printf("%s: argmax of %llu floats is %g at %lld (expected 2 at %llu)\n", right ? "ok" : "WRONG",
              static_cast<unsigned long long>(n), best.value, static_cast<long long>(best.index),
              static_cast<unsigned long long>(n / 2));
  return right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  try {
    return run(n);
  } catch (const std::exception& e) {  // gpuk::Error: a config, compile or device error, in gpuk's words
    std::fprintf(stderr, "installed_example: %s\n", e.what());
    return 1;
  }
}
