// How every kernel time gpuk prints is taken: gpuk's own variants and the library baselines
// (CUB, Thrust) alike, so that the two sides of a speed-up are measured the same way.
//
// Plain C++17 and <cuda.h> only: the baselines' .cu files, compiled by nvcc, include it too.
#pragma once
#include <cuda.h>

#include <functional>
#include <string>
#include <vector>

namespace gpuk {

struct DeviceTiming {
  std::vector<double> ms;  // one sample per repeat, milliseconds between two CUDA events
  // True when the repeats ran behind a stream gate (see time_device); false when the driver
  // refused stream memory operations and the host paced the stream, which adds launch latency,
  // or when a gate was opened by its time bound before its batch was queued (see time_device).
  bool gated = false;
};

// Runs `timed` `warmup` times, then `repeats` times between two CUDA events each, on `stream`.
// `untimed`, when given, runs before each repeat outside the events (poisoning outputs).
//
// The repeats are enqueued in batches behind a gate, cuStreamWaitValue32 on a pinned host flag
// that the host opens only once the whole batch is queued: the GPU then meets each start event
// with its kernels already waiting behind it, and the events measure device time alone. Timed
// one at a time from an idle stream, a few-microsecond kernel would also be charged the host's
// launch latency, which says nothing about the kernel (nvbench's blocking kernel does the same).
// A gate never stays closed longer than a bound (20 ms): a process-wide watch thread opens it
// by writing the host flag, a plain store that needs no driver call. Without it, a driver call
// that waits for the whole device in another thread (cuMemFree, cuMemHostAlloc, cuModuleUnload)
// would hold the driver's lock while the gate's owner waits on that lock to queue the launch
// that opens the gate: both wait forever.
// GPUK_NO_GATE=1 in the environment turns the gate off, for profilers that serialize launches
// (Nsight Compute: `GPUK_NO_GATE=1 ncu ... gpuk run ...`), which would otherwise wait forever.
// `where` names what runs, for error messages.
//
// `limit_per_run_seconds` > 0 is a watchdog: the stream is polled instead of waited on, each
// warm-up run may take that long and the timed repeats that long each; past it, TimeLimitError
// (device/device.hpp) says that `where` was abandoned.
DeviceTiming time_device(CUstream stream, int warmup, int repeats, const std::function<void()>& timed,
                         const std::function<void()>& untimed, const std::string& where,
                         double limit_per_run_seconds = 0);

}  // namespace gpuk
