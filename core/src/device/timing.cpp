#include "device/timing.hpp"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "device/device.hpp"
#include "gpuk/error.hpp"

namespace gpuk {

namespace {

// Repeats queued behind one gate. The host must be able to enqueue a whole batch while the
// stream is held; a few hundred commands fit the driver's queue with room to spare.
constexpr int kBatch = 16;

// How long a gate may stay closed. A batch is queued in microseconds; past this bound the
// holder is stuck, and the likely reason is a deadlock no gate may cause: another thread (or a
// baseline library inside `timed`) called a driver function that waits for the whole device
// (freeing or allocating pinned or device memory, unloading a module) and holds the driver's
// lock while it waits, so the holder cannot enqueue the launch that would open the gate, and
// the device cannot go idle until it opens (issue 27: 8 threads through run() hung on the H100).
constexpr auto kGateBound = std::chrono::milliseconds(20);

// Raises *flag to `value` unless it is already there: a late writer never lowers it.
void raise_flag(std::uint32_t* flag, std::uint32_t value) {
  std::atomic_ref<std::uint32_t> f(*flag);
  std::uint32_t now = f.load(std::memory_order_relaxed);
  while (now < value && !f.compare_exchange_weak(now, value, std::memory_order_release)) {
  }
}

// Opens any gate left closed past kGateBound by writing its host flag: plain memory, no driver
// call, so it works while the driver's lock is held. One thread for the process, started with
// the first gate and never stopped (it sleeps while no gate is closed). A forked child (the
// tuner's workers) has no such thread: it starts its own with its first gate, and the mutex is
// held across fork() so that the child never inherits it locked.
class GateWatch {
 public:
  struct Closed {
    std::uint32_t* flag;
    std::uint32_t value;
    std::chrono::steady_clock::time_point deadline;
    bool forced = false;
  };
  using Handle = std::list<Closed>::iterator;

  static GateWatch& get() {
    static GateWatch* watch = new GateWatch;  // never destroyed: its thread may outlive main
    return *watch;
  }
  Handle closed(std::uint32_t* flag, std::uint32_t value) {
    std::lock_guard lock(mutex_);
    if (!running_) {
      running_ = true;
      std::thread([this] { run(); }).detach();
    }
    closed_.push_back({flag, value, std::chrono::steady_clock::now() + kGateBound});
    wake_.notify_one();
    return std::prev(closed_.end());
  }
  // The holder opens it: true when the watch had opened it first.
  bool opened(Handle h) {
    std::lock_guard lock(mutex_);
    raise_flag(h->flag, h->value);
    const bool forced = h->forced;
    closed_.erase(h);
    return forced;
  }

 private:
  GateWatch() {
    ::pthread_atfork([] { get().mutex_.lock(); }, [] { get().mutex_.unlock(); },
                     [] {
                       GateWatch& w = get();
                       w.running_ = false;  // the thread stayed with the parent
                       w.closed_.clear();   // the parent's gates
                       w.mutex_.unlock();
                     });
  }
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      auto next = std::chrono::steady_clock::time_point::max();
      for (const auto& c : closed_)
        if (!c.forced) next = std::min(next, c.deadline);
      if (next == std::chrono::steady_clock::time_point::max()) wake_.wait(lock);
      else wake_.wait_until(lock, next);
      const auto now = std::chrono::steady_clock::now();
      for (auto& c : closed_)
        if (!c.forced && c.deadline <= now) {
          raise_flag(c.flag, c.value);
          c.forced = true;
        }
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::list<Closed> closed_;
  bool running_ = false;
};

// A 32-bit flag in pinned host memory that the GPU's front end can wait on.
class Gate {
 public:
  explicit Gate(CUstream stream) : stream_(stream) {
    void* host = nullptr;
    if (driver().cuMemHostAlloc(&host, sizeof(std::uint32_t), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) !=
        CUDA_SUCCESS)
      return;
    flag_ = static_cast<std::uint32_t*>(host);
    *flag_ = 0;
    if (driver().cuMemHostGetDevicePointer(&device_flag_, host, 0) != CUDA_SUCCESS) release_memory();
  }
  ~Gate() {
    open_all();
    if (flag_) {
      // The stream may still be waiting on the flag: let it drain before the memory goes. A
      // kernel that was abandoned may never let it: then the flag is left to the context's reset.
      if (!device_hung()) {
        (void)driver().cuStreamSynchronize(stream_);
        release_memory();
      }
    }
  }
  // Opens the gate and waits for the stream (the watchdog's limit when > 0); the memory goes.
  void drain(double limit_seconds, const std::string& where) {
    open_all();
    wait_stream(stream_, limit_seconds, where);
    if (flag_) release_memory();
  }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  // Holds the stream until open(), or until the watch opens it past kGateBound; false when the
  // driver refuses (then nothing is held).
  bool hold() {
    if (!flag_) return false;
    const std::uint32_t next = closed_ + 1;
    if (driver().cuStreamWaitValue32(stream_, device_flag_, next, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) return false;
    closed_ = next;
    watched_ = GateWatch::get().closed(flag_, closed_);
    return true;
  }
  void open() {
    if (!flag_) return;
    if (watched_) {
      forced_ = GateWatch::get().opened(*watched_) || forced_;
      watched_.reset();
    }
    raise_flag(flag_, closed_);
  }
  // The watch opened a gate before its batch was queued: that batch's times may include launch
  // latency.
  bool forced() const { return forced_; }

 private:
  void open_all() { open(); }
  void release_memory() {
    (void)driver().cuMemFreeHost(flag_);
    flag_ = nullptr;
  }

  CUstream stream_;
  std::uint32_t* flag_ = nullptr;
  CUdeviceptr device_flag_ = 0;
  std::uint32_t closed_ = 0;
  std::optional<GateWatch::Handle> watched_;
  bool forced_ = false;
};

struct EventPair {
  CUevent start = nullptr, stop = nullptr;
};

void record(CUevent event, CUstream stream, const std::string& where) {
  GPUK_CU(driver().cuEventRecord(event, stream), "timing " + where);
}

}  // namespace

DeviceTiming time_device(CUstream stream, int warmup, int repeats, const std::function<void()>& timed,
                         const std::function<void()>& untimed, const std::string& where,
                         double limit_per_run_seconds) {
  const bool watched = limit_per_run_seconds > 0;
  for (int i = 0; i < warmup; ++i) {
    timed();
    // With the watchdog, each warm-up run is waited for on its own: a kernel that hangs is
    // abandoned after one limit, not `warmup` of them.
    if (watched) wait_stream(stream, limit_per_run_seconds, where);
  }
  if (!watched) GPUK_CU(driver().cuStreamSynchronize(stream), "after the warm-up of " + where);

  DeviceTiming result;
  if (repeats <= 0) return result;
  struct Events {
    std::vector<EventPair> pairs;
    ~Events() {
      for (auto& p : pairs) {
        if (p.start) driver().cuEventDestroy(p.start);
        if (p.stop) driver().cuEventDestroy(p.stop);
      }
    }
  } events;
  events.pairs.resize(static_cast<std::size_t>(repeats));
  for (auto& p : events.pairs) {
    GPUK_CU(driver().cuEventCreate(&p.start, CU_EVENT_DEFAULT));
    GPUK_CU(driver().cuEventCreate(&p.stop, CU_EVENT_DEFAULT));
  }

  // GPUK_NO_GATE=1 leaves the gate out: a profiler that serializes launches (Nsight Compute)
  // would wait forever for a launch queued behind the closed gate. The host then paces the
  // stream, which adds launch latency to short kernels: said once on stderr.
  result.gated = std::getenv("GPUK_NO_GATE") == nullptr;
  if (!result.gated) {
    static std::once_flag said;
    std::call_once(said, [] {
      std::fprintf(stderr, "gpuk: GPUK_NO_GATE is set: repeats are not queued behind a stream gate, so times "
                           "include launch latency\n");
    });
  }
  {
    Gate gate(stream);  // its destructor opens the gate, also when a launch throws
    for (int first = 0; first < repeats; first += kBatch) {
      const bool held = result.gated && gate.hold();
      result.gated = held;
      for (int i = first; i < repeats && i < first + kBatch; ++i) {
        if (untimed) untimed();
        record(events.pairs[i].start, stream, where);
        timed();
        record(events.pairs[i].stop, stream, where);
      }
      if (held) gate.open();
    }
    // The first batch's runs may still be queued behind the gate when a later one is refused.
    gate.drain(watched ? limit_per_run_seconds * repeats : 0, where);
    if (gate.forced()) result.gated = false;
  }
  result.ms.reserve(static_cast<std::size_t>(repeats));
  for (const auto& p : events.pairs) {
    float ms = 0;
    GPUK_CU(driver().cuEventElapsedTime(&ms, p.start, p.stop), "timing " + where);
    result.ms.push_back(ms);
  }
  return result;
}

}  // namespace gpuk
