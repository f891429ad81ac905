// What the host-overhead benchmarks share (bench_api.cpp, bench_declared.cpp).
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "device/device.hpp"

namespace gpuk {

// Host microseconds per call of each candidate: batches of `batch` calls enqueued without waiting,
// the stream drained after each batch; the candidates take turns batch by batch (round robin), so
// that drift of the clock, the queue or the caches over the run falls on all of them alike. The
// median batch of each, divided by its size; the first round warms up.
inline std::vector<double> host_us_per_call(const Stream& stream, int batch, int batches,
                                            const std::vector<std::function<void()>>& calls) {
  std::vector<std::vector<double>> per_call(calls.size());
  for (int b = 0; b < batches + 1; ++b)
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i) calls[c]();
      const auto stop = std::chrono::steady_clock::now();
      stream.synchronize();
      if (b > 0) per_call[c].push_back(std::chrono::duration<double, std::micro>(stop - start).count() / batch);
    }
  std::vector<double> medians;
  for (auto& v : per_call) {
    std::sort(v.begin(), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
}

}  // namespace gpuk
