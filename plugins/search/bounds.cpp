// lower_bound and upper_bound: launches and runs (bounds.hpp). The haystack is the operation's
// main array; the needles a second input array and their count the call's int64 scalar (at most
// the `needle_count` prepared for, as a segmented reduction passes its segment count).
#include "bounds.hpp"

#include <charconv>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>

#include "bounds_reference.hpp"
#include "gpuk/error.hpp"
#include "run/prepare.hpp"
#include "thrust_baseline.hpp"
#include "util/host.hpp"

namespace gpuk::search {
namespace {

class BoundsLauncher final : public Launcher {
 public:
  explicit BoundsLauncher(const Problem& p) : dtype_(p.dtype), n_(p.max_n), needles_(needle_count(p)) {}

  std::vector<ArraySlot> arrays() const override {
    const std::string type(dtype_name(dtype_));
    return {{"haystack", false, type, n_ * dtype_size(dtype_), false},
            {"needles", false, type, needles_ * dtype_size(dtype_), false},
            {"indices", true, "int64 x " + std::to_string(needles_), needles_ * 8, false}};
  }
  // How many needles this call has: 0 to the count prepared for (without it, that count).
  std::optional<ScalarSlot> scalar() const override { return ScalarSlot{"needles", DType::int64}; }

  // The metadata's `scratch:` slots of 8 bytes, then, for a kernel with SPLITS 1, its splits: a
  // slot for each tile of BLOCK * ITEMS needles and one for the last needle (bounds_window; for
  // bounds_merge these and its `scratch:` slot a tile of keys together cover its merge's tiles).
  // The metadata cannot size them (its expressions see the haystack's n, not the needles' count);
  // the plan's parameter values give the tile, this launcher the count (a call's m is at most it).
  std::uint64_t scratch_bytes(const LaunchPlan& plan) const override {
    std::uint64_t slots = static_cast<std::uint64_t>(std::max<std::int64_t>(0, plan.scratch_slots));
    if (plan.param("SPLITS") == 1) {
      const std::int64_t tile = plan.param("BLOCK") * plan.param("ITEMS");
      if (tile < 1)
        throw ConfigError("SPLITS 1 keeps a split for each tile of BLOCK * ITEMS needles: the kernel needs both parameters");
      slots += (needles_ + static_cast<std::uint64_t>(tile) - 1) / static_cast<std::uint64_t>(tile) + 1;
    }
    return std::max<std::uint64_t>(1, slots) * 8;
  }
  void init_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) const override {
    GPUK_CU(driver().cuMemsetD8Async(scratch, 0, bytes, stream));
  }

  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    CUdeviceptr hay = call.arrays[0], needles = call.arrays[1], out = call.arrays[2], scratch = call.scratch;
    std::int64_t n = static_cast<std::int64_t>(call.n);
    std::int64_t m = static_cast<std::int64_t>(needles_);
    if (call.scalar) std::memcpy(&m, call.scalar, sizeof m);
    if (m < 0 || static_cast<std::uint64_t>(m) > needles_)
      throw ConfigError("needles = " + std::to_string(m) + ": this operation was prepared for 0 to " +
                        std::to_string(needles_) + " needles");
    if (m == 0) return;  // no needle: nothing to write
    void* args[] = {&hay, &n, &needles, &m, &out, &scratch};
    launch_plan(target, args);
  }

 private:
  DType dtype_;
  std::uint64_t n_, needles_;
};

template <class T> class BoundsWorkload final : public Workload {
 public:
  BoundsWorkload(const Problem& p, InputView input)
      : input_(input), upper_(p.operation == "upper_bound"), sorted_(sorted_needles(p)) {
    // The haystack: the generated data, sorted in the bounds' order.
    hay_.assign(input.as<T>().begin(), input.as<T>().end());
    if (!is_ordered<T>(hay_)) std::sort(hay_.begin(), hay_.end(), OrderedLess{});  // generator: sorted is already
    needles_ = make_needles<T>(hay_, needle_count(p), input.seed(), sorted_);
    m_ = static_cast<std::int64_t>(needles_.size());
    result_.assign(needles_.size(), 0);
    ref_.assign(needles_.size(), -1);
  }

  std::uint64_t bytes_moved() const override { return (hay_.size() + needles_.size()) * sizeof(T) + needles_.size() * 8; }

  void upload(const Stream& stream) override {
    d_hay_ = DeviceBuffer(hay_.size() * sizeof(T));
    d_hay_.upload(hay_.data(), hay_.size() * sizeof(T), stream);
    d_needles_ = DeviceBuffer(std::max<std::size_t>(1, needles_.size()) * sizeof(T));
    if (!needles_.empty()) d_needles_.upload(needles_.data(), needles_.size() * sizeof(T), stream);
    d_out_ = DeviceBuffer(std::max<std::size_t>(1, needles_.size()) * 8);
    stream.synchronize();
  }
  std::vector<CUdeviceptr> device_arrays() const override { return {d_hay_.get(), d_needles_.get(), d_out_.get()}; }
  const void* scalar() const override { return &m_; }
  void poison(const Stream& stream) override { d_out_.fill_bytes(kPoisonByte, stream); }
  void download(const Stream& stream) override {
    if (!result_.empty()) d_out_.download(result_.data(), result_.size() * 8, stream);
    stream.synchronize();
  }

  std::vector<CpuTiming> cpu_reference(int repeats) override {
    const std::string what = std::string(upper_ ? "std::upper_bound" : "std::lower_bound") + " per needle";
    CpuTiming sequential{what + ", 1 thread", {}}, parallel{what + ", OpenMP, " + std::to_string(cpu_threads()) + " threads", {}};
    const auto timed = [&](CpuTiming& t, int threads) {
      for (int r = 0; r < std::max(1, repeats); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        bounds_range<T>(hay_, needles_, upper_, ref_.data(), threads);
        t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    };
    timed(sequential, 1);
    std::vector<CpuTiming> out = {sequential};
    if (cpu_threads() > 1) {
      timed(parallel, cpu_threads());
      out.push_back(parallel);
    }
    return out;
  }

  Verification verify() const override {
    for (std::size_t i = 0; i < ref_.size(); ++i) {
      if (result_[i] == ref_[i]) continue;
      std::uint64_t bits;
      std::memcpy(&bits, &result_[i], 8);
      const std::string got = bits == 0xA5A5A5A5A5A5A5A5ull ? "nothing (the output still holds its poison)" : std::to_string(result_[i]);
      return {false, "mismatch at needle " + std::to_string(i) + " (" + format_value(needles_[i]) + "): expected " +
                         std::to_string(ref_[i]) + ", got " + got};
    }
    return {true, std::to_string(ref_.size()) + " needles" + (sorted_ ? " (sorted)" : "") + " in " +
                      std::to_string(hay_.size()) + " sorted keys, every index exact"};
  }

  std::optional<BaselineTiming> library_baseline(int warmup, int repeats, const Stream& stream) override {
    std::vector<std::int64_t> got(needles_.size(), -1);
    const ThrustRun run = run_thrust_bounds(input_.dtype(), upper_, d_hay_.get(), static_cast<std::int64_t>(hay_.size()),
                                            d_needles_.get(), m_, got.data(), warmup, repeats, stream.get());
    BaselineTiming b;
    b.name = std::string(upper_ ? "thrust::upper_bound" : "thrust::lower_bound") + " (vectorised" +
             (run.library.empty() ? "" : ", " + run.library) + ")";
    if (!run.error.empty()) {
      b.note = "Thrust did not run: " + run.error;
      return b;
    }
    b.ms.assign(run.kernel_ms.begin(), run.kernel_ms.end());
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != ref_[i]) {
        b.note = "Thrust's answer for needle " + std::to_string(i) + " is " + std::to_string(got[i]) +
                 ", the reference's " + std::to_string(ref_[i]);
        break;
      }
    return b;
  }

  std::vector<std::pair<std::string, std::string>> result() const override {
    std::vector<std::pair<std::string, std::string>> out = {{"needles", std::to_string(m_)}};
    if (!result_.empty()) {
      out.push_back({"first", std::to_string(result_.front())});
      out.push_back({"last", std::to_string(result_.back())});
    }
    return out;
  }
  void write_result(const std::filesystem::path& path) const override {
    HostArray out(DType::int64, result_.size());
    std::copy(result_.begin(), result_.end(), out.as<std::int64_t>().begin());
    write_npy(path, out);
  }

 private:
  InputView input_;
  bool upper_, sorted_;
  std::vector<T> hay_, needles_;
  std::int64_t m_ = 0;
  std::vector<std::int64_t> result_, ref_;
  DeviceBuffer d_hay_, d_needles_, d_out_;
};

}  // namespace

std::string option_or(const Problem& p, const std::string& name, const char* fallback) {
  const auto it = p.options.find(name);
  return it == p.options.end() ? fallback : it->second;
}

std::uint64_t needle_count(const Problem& p) {
  const std::string text = option_or(p, "needle_count", "65536");
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v > (std::uint64_t{1} << 40))
    throw ConfigError("needle_count: " + text + " is not a count from 0 to 2^40");
  return v;
}

bool sorted_needles(const Problem& p) { return option_or(p, "needles", "unsorted") == "sorted"; }

void check_bounds_options(const Problem& p, bool bounds) {
  if (bounds) {
    (void)needle_count(p);
    for (const char* other : {"value", "value_index"})
      if (p.option(other) != "none")
        throw ConfigError(std::string(other) + " is not an option of " + p.operation + ": its needles are drawn from the "
                          "data's seed (needle_count, needles: sorted)");
    return;
  }
  if (p.options.count("needles") || p.options.count("needle_count"))
    throw ConfigError("needles and needle_count are options of lower_bound and upper_bound, not of " + p.operation);
}

std::unique_ptr<Launcher> make_bounds_launcher(const Problem& problem) { return std::make_unique<BoundsLauncher>(problem); }

std::unique_ptr<Workload> make_bounds_workload(const Problem& problem, InputView input) {
  return visit_dtype(input.dtype(), [&](auto zero) -> std::unique_ptr<Workload> {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, std::uint64_t>) throw ConfigError("the search family does not support uint64");
    else return std::make_unique<BoundsWorkload<T>>(problem, input);
  });
}

}  // namespace gpuk::search
