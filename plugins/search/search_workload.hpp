// The search plugin's runs of find, any, count and find_if: the CPU reference (std::find,
// std::count, std::find_if on OpenMP threads), and the Workload that uploads the data, verifies
// the kernel's answer against it and times thrust's in the same run. Included by
// search_plugin.cpp only.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gpuk/error.hpp"
#include "plugin/plugin.hpp"
#include "search_value.hpp"
#include "thrust_baseline.hpp"
#include "util/host.hpp"

namespace gpuk::search {

// The CPU reference: std::find / std::count (std::find_if with `x OP value`, or in the range
// [value, hi) or [value, hi], for find_if) over [begin, end), on `threads` threads (contiguous
// chunks; find keeps the lowest chunk's match).
template <class T>
std::int64_t search_range(const T* data, std::int64_t n, T value, Mode mode, int threads, Compare compare = Compare::eq,
                          T hi = T()) {
  threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n / 4096 + 1)));
  std::vector<std::int64_t> part(threads, -1);
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
  for (int t = 0; t < threads; ++t) {
    const T* begin = data + n * t / threads;
    const T* end = data + n * (t + 1) / threads;
    if (mode == Mode::count) {
      part[t] = static_cast<std::int64_t>(std::count(begin, end, value));
    } else if (mode == Mode::find_if) {
      const T* it = std::find_if(begin, end, [&](T x) { return search::compare(compare, x, value, hi); });
      part[t] = it == end ? -1 : it - data;
    } else {
      const T* it = std::find(begin, end, value);
      part[t] = it == end ? -1 : it - data;
    }
  }
  if (mode == Mode::count) {
    std::int64_t sum = 0;
    for (auto c : part) sum += c;
    return sum;
  }
  for (auto i : part)
    if (i >= 0) return i;  // chunks are in index order: the first hit is the lowest
  return -1;
}

template <class T>
class SearchWorkload final : public Workload {
 public:
  SearchWorkload(InputView input, Mode mode, T value, Compare compare, T hi)
      : input_(input), mode_(mode), value_(value), hi_(hi), compare_(compare) {
    std::memcpy(&words_[0], &value_, sizeof value_);  // gpuk::Scalar's layout: a word per value
    std::memcpy(&words_[1], &hi_, sizeof hi_);
  }

  std::uint64_t bytes_moved() const override { return input_.bytes(); }

  void upload(const Stream& stream) override {
    d_in_ = DeviceBuffer(input_.bytes());
    d_in_.upload(input_.data(), input_.bytes(), stream);
    d_out_ = DeviceBuffer(sizeof(std::int64_t));
  }

  std::vector<CUdeviceptr> device_arrays() const override { return {d_in_.get(), d_out_.get()}; }
  const void* scalar() const override { return words_; }

  void poison(const Stream& stream) override { d_out_.fill_bytes(kPoisonByte, stream); }

  void download(const Stream& stream) override {
    d_out_.download(&result_, sizeof result_, stream);
    stream.synchronize();
  }

  std::vector<CpuTiming> cpu_reference(int repeats) override {
    const char* what = mode_ == Mode::count ? "std::count" : mode_ == Mode::find_if ? "std::find_if" : "std::find";
    CpuTiming sequential{std::string(what) + ", 1 thread", {}};
    CpuTiming parallel{std::string(what) + ", OpenMP, " + std::to_string(cpu_threads()) + " threads", {}};
    const auto timed = [&](CpuTiming& t, int threads) {
      for (int r = 0; r < std::max(1, repeats); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        ref_ = search_range(input_.as<T>().data(), n_, value_, mode_, threads, compare_, hi_);
        t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    };
    n_ = static_cast<std::int64_t>(input_.size());
    timed(sequential, 1);
    std::vector<CpuTiming> out = {sequential};
    if (cpu_threads() > 1) {
      timed(parallel, cpu_threads());
      out.push_back(parallel);
    }
    reference_ready_ = true;
    return out;
  }

  Verification verify() const override {
    // find_if says its comparison: "x < 0.5", "0 <= x < 1"; the others search for the value itself
    const std::string value = mode_ != Mode::find_if      ? format_value(value_)
                              : compare_ == Compare::range ? format_value(value_) + " <= x < " + format_value(hi_)
                              : compare_ == Compare::closed_range
                                  ? format_value(value_) + " <= x <= " + format_value(hi_)
                                  : std::string("x ") + info(compare_).symbol + " " + format_value(value_);
    if (mode_ == Mode::count) {
      const bool ok = result_ == ref_;
      return {ok, ok ? "count " + std::to_string(ref_) + " of " + value + " (exact)"
                     : "mismatch: expected count " + std::to_string(ref_) + " of " + value + ", got " + show(result_)};
    }
    if (ref_ < 0) {
      const bool ok = result_ == -1;
      const std::string none = mode_ == Mode::find_if ? "no element meets " : "no element equals ";
      return {ok, ok ? "not found: " + none + value + " (index -1)"
                     : "mismatch: " + none + value + ", but the kernel returned " + show(result_)};
    }
    if (mode_ == Mode::find || mode_ == Mode::find_if) {
      const bool ok = result_ == ref_;
      return {ok, ok ? "first " + value + " at index " + std::to_string(ref_)
                     : "mismatch: the first " + value + " is at index " + std::to_string(ref_) + ", got " + show(result_)};
    }
    const bool ok = result_ >= 0 && static_cast<std::uint64_t>(result_) < input_.size() &&
                    input_.as<T>()[static_cast<std::size_t>(result_)] == value_;
    return {ok, ok ? value + " at index " + std::to_string(result_) + " (any match; the first is at " +
                         std::to_string(ref_) + ")"
                   : "mismatch: " + value + " is at index " + std::to_string(ref_) + " (and maybe elsewhere), got " +
                         show(result_)};
  }

  std::optional<BaselineTiming> library_baseline(int warmup, int repeats, const Stream& stream) override {
    const ThrustRun run = run_thrust_search(input_.dtype(), mode_, words_, d_in_.get(),
                                            static_cast<std::int64_t>(input_.size()), warmup, repeats, stream.get(),
                                            compare_);
    BaselineTiming b;
    b.name = std::string(info(mode_).thrust) + (run.library.empty() ? "" : " (" + run.library + ")");
    if (!run.error.empty()) {
      b.note = "Thrust did not run: " + run.error;
      return b;
    }
    b.ms.assign(run.kernel_ms.begin(), run.kernel_ms.end());
    if (reference_ready_) {
      // thrust::find gives the first match, so it is held to find's answer for any as well.
      if (run.result != ref_)
        b.note = "Thrust's answer " + std::to_string(run.result) + " differs from the reference " + std::to_string(ref_);
    }
    return b;
  }

  std::vector<std::pair<std::string, std::string>> result() const override {
    const std::string value = format_value(value_);
    if (mode_ == Mode::count) return {{"value", value}, {"count", show(result_)}};
    if (mode_ == Mode::find_if && info(compare_).two_values)
      return {{"value", value}, {"value_hi", format_value(hi_)}, {"compare", info(compare_).name},
              {"index", show(result_)}, {"found", result_ >= 0 ? "yes" : "no"}};
    if (mode_ == Mode::find_if)
      return {{"value", value}, {"compare", info(compare_).name}, {"index", show(result_)}, {"found", result_ >= 0 ? "yes" : "no"}};
    return {{"value", value}, {"index", show(result_)}, {"found", result_ >= 0 ? "yes" : "no"}};
  }

  void write_result(const std::filesystem::path& path) const override {
    HostArray out(DType::int64, 1);
    out.as<std::int64_t>()[0] = result_;
    write_npy(path, out);
  }

 private:
  static std::string show(std::int64_t r) {
    std::uint64_t bits;
    std::memcpy(&bits, &r, sizeof bits);
    if (bits == 0xA5A5A5A5A5A5A5A5ull) return "nothing (the output still holds its poison)";
    return std::to_string(r);
  }

  InputView input_;
  Mode mode_;
  T value_, hi_;  // hi_: a range's upper bound
  Compare compare_;
  std::uint64_t words_[2] = {};  // value_ and hi_ as gpuk::Scalar holds them, for the launcher
  DeviceBuffer d_in_, d_out_;
  std::int64_t n_ = 0;
  std::int64_t result_ = 0;
  std::int64_t ref_ = -1;
  bool reference_ready_ = false;
};

}  // namespace gpuk::search
