// The tests' scale2d (tests/declared/kernels: out = 0.5 * in on a 2-D grid, -D parameters)
// prepared through the library API for its named sizes and launched once on device buffers of
// the caller's, its answer checked on the host: what the GPU test of the C++ call
// (tests/gpu/test_declared_gpu.cpp) and tools/bench/bench_declared.cpp share.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "gpuk/gpuk.hpp"

namespace gpuk::test {

struct Scale2dCall {
  Operation op;
  std::size_t n = 0;
  DeviceBuffer out, in;
  CUdeviceptr arrays[2] = {0, 0};  // the declared arrays, in order: out, in
  std::size_t wrong = 0;           // elements of the first call's answer other than 0.5 * in

  Scale2dCall(Engine& engine, std::int64_t nx, std::int64_t ny, const std::map<std::string, std::int64_t>& params,
              const Stream& stream)
      : op(engine.prepare(spec(nx, ny, params))),
        n(static_cast<std::size_t>(nx * ny)),
        out(n * sizeof(float)),
        in(n * sizeof(float)) {
    std::vector<float> host_in(n), host_out(n);
    for (std::size_t i = 0; i < n; ++i) host_in[i] = static_cast<float>(i % 1000) * 0.001f - 0.5f;
    in.upload(host_in.data(), n * sizeof(float), stream);
    arrays[0] = out.get();
    arrays[1] = in.get();
    op.launch(arrays, op.max_n(), stream.get());
    out.download(host_out.data(), n * sizeof(float), stream);
    stream.synchronize();
    for (std::size_t i = 0; i < n; ++i) wrong += host_out[i] != 0.5f * host_in[i];
  }

  static OperationSpec spec(std::int64_t nx, std::int64_t ny, const std::map<std::string, std::int64_t>& params) {
    OperationSpec s;
    s.family = "kernel";
    s.kernel = "scale2d";
    s.sizes = {{"nx", nx}, {"ny", ny}};
    s.params = params;
    return s;
  }
};

}  // namespace gpuk::test
