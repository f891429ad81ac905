// The host part of a library call, with the launch stubbed: what gpuk itself does on the CPU per
// call (argument checks, the size bucket, the context check, the launcher's arguments), without
// the driver's cuLaunchKernel or the GPU. bench_api times the real launches on a GPU, where a
// few tenths of a microsecond of the driver's and the GPU's noise lie over gpuk's part; this
// tool isolates that part. It replaces cuLaunchKernel in gpuk's driver table with a stub that
// only counts, and then, for argmax of n float32 (default 250,000), times and counts:
//   - the stub called bare through the table (the floor: what a call costs with no gpuk at all),
//   - Operation::launch, PreparedSizes::launch (what every prepared handle is), the typed
//     handle gpuk::reduce::prepare_argmax's call, and the typed call gpuk::reduce::argmax
//     (Engine::launch: a cache lookup per call),
//   - the handle called with n - 1 and n - 2 in turn (each size's plan kept and swapped back in),
//     and with a new n on every call (its launches planned again: expressions evaluated),
// as nanoseconds per call (the median of rounds taken in turn), driver calls per call besides the
// launch, heap allocations per call (malloc, counted), and user-space instructions per call
// (perf_event_open, where the kernel lets it).
//
// It runs on a GPU machine (the real driver, launches stubbed) and on one without a GPU through
// tests/api/fake_driver.cpp (build/tests/fake_driver/libcuda.so.1):
//
//   build/bench_api_host [n] [calls per round] [rounds]
//   LD_LIBRARY_PATH=build/tests/fake_driver build/bench_api_host     # no GPU needed
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "api/driver_counts.hpp"
#include "api/engine_internals.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"

namespace {

using namespace gpuk;

// User-space instructions retired by this thread, where perf_event_open is allowed.
class InstructionCounter {
 public:
  InstructionCounter() {
    perf_event_attr a{};
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
    if (fd_ < 0) why_ = std::strerror(errno);
  }
  ~InstructionCounter() {
    if (fd_ >= 0) close(fd_);
  }
  bool works() const { return fd_ >= 0; }
  const std::string& why() const { return why_; }
  void start() const {
    ioctl(fd_, PERF_EVENT_IOC_RESET, 0);
    ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0);
  }
  std::uint64_t stop() const {
    ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
    std::uint64_t count = 0;
    if (read(fd_, &count, sizeof count) != sizeof count) return 0;
    return count;
  }

 private:
  int fd_ = -1;
  std::string why_;
};

struct Candidate {
  Candidate(const char* n, std::function<void()> c) : name(n), call(std::move(c)) {}
  const char* name;
  std::function<void()> call;
  std::vector<double> ns;  // per call, one per round
  double launches = 0, context_queries = 0, other_driver_calls = 0, allocations = 0, instructions = -1;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 250000;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 100000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 9;
  if (n < 4) throw Error("n must be at least 4 (the rows with other sizes take n - 1 and below)");
  // The new sizes: up to 1,000 below n, all at least (n - 1) / 2.
  const std::uint64_t spread = std::min<std::uint64_t>(1000, (n - 1) / 2);
  Engine engine;
  const DeviceInfo& info = EngineInternals::device(engine);
  const Stream stream;
  DeviceBuffer d_in(n * sizeof(float)), d_out(16);
  const CUdeviceptr arrays[] = {d_in.get(), d_out.get()};
  const auto* px = reinterpret_cast<const float*>(d_in.get());
  auto* pb = reinterpret_cast<reduce::Best<float>*>(d_out.get());

  // Every path on the variant the lookup picks for n (what an application's prepare_argmax gets).
  auto amax = reduce::prepare_argmax<float>(engine, n);
  auto amax_new = reduce::prepare_argmax<float>(engine, n);  // the new-n row's: its plans its own
  OperationSpec spec;
  spec.family = "reduce";
  spec.operation = "argmax";
  spec.dtype = DType::float32;
  spec.n = n;
  Operation op = engine.prepare(spec);
  PreparedSizes sizes = engine.prepare_sizes(spec);
  reduce::argmax(engine, px, pb, n, stream.get());  // prepares the typed call's cached Operation
  stream.synchronize();

  std::vector<Candidate> candidates;
  {
    const counts::CountedDriver stubbed(true);  // the launch stubbed, the rest counted
    CUdeviceptr in = d_in.get(), out = d_out.get();
    std::int64_t count = static_cast<std::int64_t>(n);
    void* args[] = {&in, &count, &out, &in, &out};
    candidates.emplace_back("bare cuLaunchKernel (the stub, no gpuk)", [&] {
                            GPUK_CU(driver().cuLaunchKernel(nullptr, 264, 1, 1, 256, 1, 1, 0, stream.get(), args,
                                                            nullptr));
                          });
    candidates.emplace_back("gpuk::Operation::launch", [&] { op.launch(arrays, n, stream.get()); });
    candidates.emplace_back("PreparedSizes::launch (every handle's)", [&] { sizes.launch(arrays, n, stream.get()); });
    candidates.emplace_back("prepare_argmax's handle: amax(d_x, d_b, n, s)", [&] { amax(px, pb, n, stream.get()); });
    candidates.emplace_back("gpuk::reduce::argmax (Engine::launch)", [&] { reduce::argmax(engine, px, pb, n, stream.get()); });
    // Two sizes in turn (n - 1 and n - 2, one size bucket): each plan kept and swapped back in.
    std::uint64_t flip = 0, step = 0;
    candidates.emplace_back("handle, n-1 and n-2 in turn (kept plans)",
                            [&] { amax(px, pb, n - 1 - (++flip & 1), stream.get()); });
    // A new n on every call (1,000 sizes in turn, one size bucket): the launches planned again.
    candidates.emplace_back("handle, a new n every call (plans again)",
                            [&] { amax_new(px, pb, n - 1 - (++step % spread), stream.get()); });

    // Counts: one pass of `calls` calls each.
    const InstructionCounter instructions;
    for (Candidate& c : candidates) {
      for (int i = 0; i < 1000; ++i) c.call();  // warm
      counts::CountedDriver::reset();
      if (instructions.works()) instructions.start();
      for (int i = 0; i < calls; ++i) c.call();
      const std::uint64_t retired = instructions.works() ? instructions.stop() : 0;
      c.launches = static_cast<double>(counts::launches.load()) / calls;
      c.context_queries = static_cast<double>(counts::context_queries.load()) / calls;
      c.other_driver_calls = static_cast<double>(counts::other.load()) / calls;
      c.allocations = static_cast<double>(counts::mallocs.load()) / calls;
      if (instructions.works()) c.instructions = static_cast<double>(retired) / calls;
    }
    // Times: the candidates in turn, round after round, so that drift falls on all alike.
    for (int r = 0; r < rounds; ++r)
      for (Candidate& c : candidates) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) c.call();
        const auto stop = std::chrono::steady_clock::now();
        c.ns.push_back(std::chrono::duration<double, std::nano>(stop - start).count() / calls);
      }
    if (!instructions.works())
      std::printf("(instructions per call not counted: perf_event_open: %s)\n", instructions.why().c_str());
  }

  std::printf("the host part of one call, the launch stubbed: argmax of %llu float32 on %s, variant %s;\n"
              "median of %d rounds of %d calls each, taken in turn:\n",
              static_cast<unsigned long long>(n), info.name.c_str(), op.variant().c_str(), rounds, calls);
  std::printf("  %-46s %8s %9s %7s %8s %6s %6s %7s\n", "call", "ns/call", "over bare", "launch", "ctx query",
              "other", "allocs", "instr.");
  const double bare = median(candidates[0].ns);
  for (const Candidate& c : candidates) {
    char instr[32] = "n/a";
    if (c.instructions >= 0) std::snprintf(instr, sizeof instr, "%.0f", c.instructions);
    std::printf("  %-46s %8.1f %+9.1f %7.2f %8.2f %6.2f %6.2f %7s\n", c.name, median(c.ns), median(c.ns) - bare,
                c.launches, c.context_queries, c.other_driver_calls, c.allocations, instr);
  }
  const double handle = median(candidates[3].ns) - bare, prepared = median(candidates[2].ns) - bare;
  std::printf("gpuk's own host work per prepared handle's call: %.0f ns (PreparedSizes::launch %.0f ns), the launch "
              "stubbed; %s allocations per call: %s\n",
              handle, prepared, "heap", candidates[2].allocations == 0 && candidates[3].allocations == 0 ? "0" : "SOME");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_api_host: %s\n", e.what());
  return 1;
}
