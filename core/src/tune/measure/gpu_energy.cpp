// The energy window of the GPU Measurer (tune/measure/gpu_measurer.hpp): NVML's energy counter read
// while the GPU runs one variant back to back, with no host gaps.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>
#include <vector>

#include "gpuk/error.hpp"
#include "tune/measure/energy.hpp"
#include "tune/measure/gpu_measurer.hpp"
#include "tune/sweep/stopwatch.hpp"

namespace gpuk::detail {

namespace {

// The stream never holds more launches than this: cuLaunchKernel blocks on a full queue, and a
// feeder blocked inside the driver could not be told to stop (a hung kernel).
constexpr std::int64_t kMostQueuedLaunches = 512;

}  // namespace

// Two threads. A feeder thread does nothing but keep the stream full: batches of about 2 ms of
// back-to-back calls, each followed by an event, topped up as each batch finishes, so that the
// GPU never waits for the host. This thread reads the energy counter as fast as NVML answers
// and, at each change of it, how many calls the GPU has finished. Energy per call is the
// counter's change between its first and last change while the GPU ran, divided by the calls
// finished between them (the counter moves in steps much longer than one call); the window is
// the time between those changes. Before (issue 36), one thread both queued the batches and read
// the counter: its NVML reads left the GPU idle between batches, and the figure was 1.9-2.8x
// power x kernel time on the H200 (2.7x before batches were queued ahead at all, issue 27).
std::optional<EnergySample> GpuMeasurer::energy(const Space& space, const Candidate& c, double ms_per_call) {
  if (!options_.energy) return std::nullopt;
  Prepared& p = ready(space, c, "energy()");
  Stopwatch timing(times_.measure);
  EnergyMeter& meter = *options_.energy;
  try {
    bench_.bind(p.plan);
    const LaunchTarget target{p.plan, p.functions.data(), bench_.stream().get(), p.where};
    const double per_call_ms = ms_per_call > 0 ? ms_per_call : 0.01;
    std::int64_t launches_per_call = 0;
    for (const auto& l : p.plan.launches) launches_per_call += l.repeat;
    launches_per_call = std::max<std::int64_t>(1, launches_per_call);
    // About 2 ms a batch, and at most half the queue's launches: `ahead` batches stay queued.
    const std::int64_t batch = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(2.0 / per_call_ms)), 1,
                                                        std::max<std::int64_t>(1, kMostQueuedLaunches / 2 / launches_per_call));
    const int ahead = static_cast<int>(std::clamp<std::int64_t>(kMostQueuedLaunches / (batch * launches_per_call), 2, 16));
    const double window = options_.energy_window_s;
    const double cap = std::max(1.0, 20 * window);
    const double limit = bench_.time_limit() + 10 * static_cast<double>(batch) * per_call_ms * 1e-3;
    const CUstream stream = bench_.stream().get();

    struct Events {
      std::vector<CUevent> done;
      ~Events() {
        for (CUevent e : done)
          if (e) driver().cuEventDestroy(e);
      }
    } events;
    events.done.assign(static_cast<std::size_t>(ahead + 1), nullptr);
    for (CUevent& e : events.done) GPUK_CU(driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "energy of " + p.where);
    CUcontext context = nullptr;
    GPUK_CU(driver().cuCtxGetCurrent(&context), "energy of " + p.where);

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

    std::atomic<std::int64_t> finished{0};  // batches the GPU has finished
    std::atomic<bool> stop{false}, stalled{false};
    std::exception_ptr feeder_error;
    std::thread feeder([&] {
      try {
        GPUK_CU(driver().cuCtxSetCurrent(context), "energy of " + p.where);
        const std::size_t ring = events.done.size();
        std::int64_t queued = 0, done = 0;
        auto progress = std::chrono::steady_clock::now();
        while (!stop.load(std::memory_order_relaxed)) {
          for (; queued - done < ahead; ++queued) {
            for (std::int64_t i = 0; i < batch; ++i) bench_.launch(target);
            GPUK_CU(driver().cuEventRecord(events.done[static_cast<std::size_t>(queued) % ring], stream),
                    "energy of " + p.where);
          }
          const CUresult r = driver().cuEventQuery(events.done[static_cast<std::size_t>(done) % ring]);
          if (r == CUDA_SUCCESS) {
            finished.store(++done, std::memory_order_relaxed);
            progress = std::chrono::steady_clock::now();
            continue;
          }
          if (r != CUDA_ERROR_NOT_READY) GPUK_CU(r, "energy of " + p.where);
          if (std::chrono::duration<double>(std::chrono::steady_clock::now() - progress).count() > limit) {
            stalled = true;  // a batch ran past the time limit: this thread tells, the other throws
            return;
          }
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
      } catch (...) {
        feeder_error = std::current_exception();
        stalled = true;
      }
    });

    struct Edge {
      double t = 0;
      std::int64_t calls = 0;
      std::uint64_t mj = 0;
    };
    const auto start = std::chrono::steady_clock::now();
    const auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    std::optional<Edge> first, last;
    double mhz = 0;
    int clocks = 0;
    try {
      const Edge begin{0, 0, meter.millijoules()};
      std::uint64_t previous = begin.mj;
      for (int reads = 0; !stalled.load(); ++reads) {
        const std::uint64_t mj = meter.millijoules();
        const Edge now{since(), finished.load(std::memory_order_relaxed) * batch, mj};
        if (reads % 8 == 0 && now.calls > 0) {
          mhz += meter.sm_mhz();
          ++clocks;
        }
        // A change counts once a batch has finished: the GPU is then running and stays so, the
        // feeder keeping the stream full.
        if (mj != previous) {
          previous = mj;
          if (now.calls > 0) (first ? last : first) = now;
        }
        if (first && last && last->t - first->t >= window) break;
        if (now.t >= cap) {
          if (!last) last = now, first = begin;  // the counter hardly moved: the whole span
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    } catch (...) {
      stop = true;
      feeder.join();
      throw;
    }
    stop = true;
    feeder.join();
    if (feeder_error) std::rethrow_exception(feeder_error);
    if (stalled) wait_stream(stream, 1e-9, p.where);  // says it ran past its limit, as a timed run would
    if (!first || !last || last->mj == first->mj || last->calls <= first->calls) return std::nullopt;
    EnergySample sample;
    sample.calls = last->calls - first->calls;
    sample.window_s = last->t - first->t;
    const double joules = static_cast<double>(last->mj - first->mj) / 1000.0;
    sample.joules = joules / static_cast<double>(sample.calls);
    sample.watts = sample.window_s > 0 ? joules / sample.window_s : 0;
    sample.sm_mhz = clocks ? mhz / clocks : meter.sm_mhz();
    return sample;
  } catch (const Error& e) {
    Outcome o;
    failed(o, e, p);
    return std::nullopt;
  }
}

}  // namespace gpuk::detail
