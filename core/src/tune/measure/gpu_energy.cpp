// The energy window of the GPU Measurer (tune/measure/gpu_measurer.hpp): NVML's energy counter read
// around back-to-back runs of one variant.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "gpuk/error.hpp"
#include "tune/measure/energy.hpp"
#include "tune/measure/gpu_measurer.hpp"
#include "tune/sweep/stopwatch.hpp"

namespace gpuk::detail {

// Back-to-back runs in batches of about 2 ms, the energy counter read after each: the energy
// and time between its first and last change over at least the window (the counter moves in
// steps much longer than one call), divided by the calls in between. The SM clock is read
// while each batch runs. Batches are queued ahead: the counter is read while the GPU works, so
// that the window holds kernels back to back and not the GPU idling while the host waits and
// reads (issue 27: waiting for an idle stream first made every figure 2.7x).
std::optional<EnergySample> GpuMeasurer::energy(const Space& space, const Candidate& c, double ms_per_call) {
  if (!options_.energy) return std::nullopt;
  Prepared& p = ready(space, c, "energy()");
  Stopwatch timing(times_.measure);
  EnergyMeter& meter = *options_.energy;
  try {
    bench_.bind(p.plan);
    const LaunchTarget target{p.plan, p.functions.data(), bench_.stream().get(), p.where};
    const double per_call_ms = ms_per_call > 0 ? ms_per_call : 0.01;
    const int batch = static_cast<int>(std::clamp(std::ceil(2.0 / per_call_ms), 1.0, 100000.0));
    const double window = options_.energy_window_s;
    const double cap = std::max(1.0, 20 * window);
    const double limit = bench_.time_limit() + 10 * batch * per_call_ms * 1e-3;
    struct Edge {
      double t = 0;
      std::int64_t calls = 0;
      std::uint64_t mj = 0;
    };
    const auto start = std::chrono::steady_clock::now();
    const auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    const Edge begin{0, 0, meter.millijoules()};
    std::optional<Edge> first, last;
    std::uint64_t previous = begin.mj;
    std::int64_t calls = 0;
    double mhz = 0;
    int clocks = 0;
    // Batches queued ahead of the one waited for: the NVML reads between waits take a few ms,
    // and the GPU must not run dry meanwhile (with one batch ahead, every figure was still 2x
    // on the H100).
    constexpr int kAhead = 4;
    struct Events {
      CUevent done[kAhead + 1] = {};
      ~Events() {
        for (CUevent e : done)
          if (e) driver().cuEventDestroy(e);
      }
    } events;
    for (CUevent& e : events.done) GPUK_CU(driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "energy of " + p.where);
    const CUstream stream = bench_.stream().get();
    const auto queue_batch = [&](CUevent done) {
      for (int i = 0; i < batch; ++i) bench_.launch(target);
      GPUK_CU(driver().cuEventRecord(done, stream), "energy of " + p.where);
    };
    // Waits for a batch's event, within the time limit (polled, as wait_stream polls).
    const auto wait_batch = [&](CUevent done) {
      const auto began = std::chrono::steady_clock::now();
      for (;;) {
        const CUresult r = driver().cuEventQuery(done);
        if (r == CUDA_SUCCESS) return;
        if (r != CUDA_ERROR_NOT_READY) GPUK_CU(r, "energy of " + p.where);
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() > limit) {
          wait_stream(stream, 1e-9, p.where);  // says it ran past its limit, as a timed run would
          return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    };
    // Drains the stream on the way out, also when the loop throws.
    struct Drain {
      CUstream stream;
      double limit;
      const std::string& where;
      ~Drain() {
        if (device_hung()) return;  // abandoned: the context is rebuilt, nothing to wait for
        try {
          wait_stream(stream, limit, where);
        } catch (const Error&) {
        }
      }
    } drain{stream, limit, p.where};
    constexpr int kRing = kAhead + 1;
    for (int k = 0; k < kAhead; ++k) queue_batch(events.done[k]);
    for (int k = 0;; ++k) {
      // Batch k done: the next goes in at once, then the counter and the clock are read
      // while the GPU runs the batches ahead.
      wait_batch(events.done[k % kRing]);
      calls += batch;
      queue_batch(events.done[(k + kAhead) % kRing]);
      const Edge now{since(), calls, meter.millijoules()};
      mhz += meter.sm_mhz();
      ++clocks;
      if (now.mj != previous) {
        (first ? last : first) = now;
        previous = now.mj;
      }
      if (first && last && last->t - first->t >= window) break;
      if (now.t >= cap) {
        if (!last) last = now, first = begin;  // the counter hardly moved: the whole span
        break;
      }
    }
    if (last->mj == first->mj) return std::nullopt;  // the counter never moved: nothing to report
    EnergySample sample;
    sample.calls = last->calls - first->calls;
    sample.window_s = last->t - first->t;
    const double joules = static_cast<double>(last->mj - first->mj) / 1000.0;
    sample.joules = sample.calls > 0 ? joules / static_cast<double>(sample.calls) : 0;
    sample.watts = sample.window_s > 0 ? joules / sample.window_s : 0;
    sample.sm_mhz = clocks ? mhz / clocks : 0;
    return sample;
  } catch (const Error& e) {
    Outcome o;
    failed(o, e, p);
    return std::nullopt;
  }
}

}  // namespace gpuk::detail
