#include "pair.hpp"

#include <chrono>
#include <cstring>

#include "cub_baseline.hpp"
#include "device/host_memory.hpp"
#include "semantics.hpp"
#include "util/host.hpp"

namespace gpuk::reduce {
namespace {

template <class V> bool same(const Candidate<V>& a, const Candidate<V>& b) {
  const bool value = (is_nan(a.value) && is_nan(b.value)) || std::memcmp(&a.value, &b.value, sizeof(V)) == 0 ||
                     (!is_nan(a.value) && a.value == b.value);
  return value && a.index == b.index;
}

template <class V> std::string text(const Candidate<V>& c) {
  return format_value(c.value) + " at index " + std::to_string(c.index);
}

template <class T, bool ABS>
class PairWorkload final : public Workload {
  using S = Semantics<T, ABS>;
  using V = typename S::V;
  struct Pair {
    Candidate<V> lo, hi;
  };
  static_assert(sizeof(Pair) == kPairResultBytes);

 public:
  explicit PairWorkload(InputView input) : input_(std::move(input)) {}

  std::uint64_t bytes_moved() const override { return input_.bytes(); }

  void upload(const Stream& stream) override {
    d_in_ = DeviceBuffer(input_.bytes());
    d_in_.upload(input_.data(), input_.bytes(), stream);
    d_out_ = DeviceBuffer(kPairResultBytes);
  }
  std::vector<CUdeviceptr> device_arrays() const override { return {d_in_.get(), d_out_.get()}; }
  void poison(const Stream& stream) override { d_out_.fill_bytes(kPoisonByte, stream); }
  void download(const Stream& stream) override {
    d_out_.download(&got_, kPairResultBytes, stream);
    stream.synchronize();
  }

  std::vector<CpuTiming> cpu_reference(int repeats) override {
    CpuTiming sequential{"loop, 1 thread", {}}, parallel{"loop, OpenMP, " + std::to_string(cpu_threads()) + " threads", {}};
    const auto timed = [&](CpuTiming& t, int threads) {
      for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        compute_reference(threads);
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
    const std::string expected = "min " + text(ref_.lo) + ", max " + text(ref_.hi);
    if (same(got_.lo, ref_.lo) && same(got_.hi, ref_.hi)) return {true, expected};
    return {false, "mismatch: expected " + expected + "; got min " + text(got_.lo) + ", max " + text(got_.hi)};
  }

  std::optional<BaselineTiming> library_baseline(int warmup, int repeats, const Stream& stream) override {
    const CubRun run = run_cub_reduce(input_.dtype(), Op::argminmax, ABS, d_in_.get(),
                                      static_cast<std::int64_t>(input_.size()), warmup, repeats, stream.get());
    BaselineTiming b;
    b.name = info(Op::argminmax).cub;
    if (!run.error.empty()) {
      b.note = "CUB did not run: " + run.error;
      return b;
    }
    b.ms.assign(run.kernel_ms.begin(), run.kernel_ms.end());
    if (!reference_ready_) return b;
    Pair cub;
    std::memcpy(&cub, run.result, sizeof cub);
    // Report, never hide, a baseline whose answer differs (CUB does not follow NaN semantics).
    if (!same(cub.lo, ref_.lo) || !same(cub.hi, ref_.hi))
      b.note = "CUB's answer (min " + text(cub.lo) + ", max " + text(cub.hi) + ") differs from the reference";
    return b;
  }

  std::vector<std::pair<std::string, std::string>> result() const override {
    return {{"min", format_value(got_.lo.value)},
            {"min_index", std::to_string(got_.lo.index)},
            {"max", format_value(got_.hi.value)},
            {"max_index", std::to_string(got_.hi.index)}};
  }

  // Two .npy files as argmax's: the values [min, max], and beside them _index.npy [argmin, argmax].
  void write_result(const std::filesystem::path& path) const override {
    HostArray values(dtype_of<V>(), 2);
    values.as<V>()[0] = got_.lo.value;
    values.as<V>()[1] = got_.hi.value;
    write_npy(path, values);
    HostArray index(DType::int64, 2);
    index.as<std::int64_t>()[0] = got_.lo.index;
    index.as<std::int64_t>()[1] = got_.hi.index;
    std::filesystem::path index_path = path;
    index_path.replace_filename(path.stem().string() + "_index.npy");
    write_npy(index_path, index);
  }

 private:
  void compute_reference(int threads) {
    const T* data = input_.as<T>().data();
    const auto n = static_cast<std::int64_t>(input_.size());
    threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n / 4096 + 1)));
    std::vector<Pair> part(threads);
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; ++t) S::both_of(data, n * t / threads, n * (t + 1) / threads, part[t].lo, part[t].hi);
    ref_ = Pair{{V(0), kNoIndex}, {V(0), kNoIndex}};
    for (const Pair& p : part) {
      ref_.lo = S::combine(ref_.lo, p.lo, false);
      ref_.hi = S::combine(ref_.hi, p.hi, true);
    }
    reference_ready_ = true;
  }

  InputView input_;
  DeviceBuffer d_in_, d_out_;
  Pair got_{}, ref_{{V(0), kNoIndex}, {V(0), kNoIndex}};
  bool reference_ready_ = false;
};

template <class X> void store(Answer& a, X v) {
  if constexpr (std::is_floating_point_v<X>) a.float_value = static_cast<double>(v);
  else if constexpr (std::is_signed_v<X>) a.int_value = static_cast<std::int64_t>(v);
  else a.uint_value = static_cast<std::uint64_t>(v);
}

template <class T, bool ABS> std::pair<Answer, Answer> answer(const HostArray& input) {
  using S = Semantics<T, ABS>;
  Candidate<typename S::V> lo, hi;
  S::both_of(input.as<T>().data(), 0, static_cast<std::int64_t>(input.size()), lo, hi);
  std::pair<Answer, Answer> out;
  store(out.first, lo.value);
  store(out.second, hi.value);
  out.first.index = lo.index == kNoIndex ? -1 : lo.index;
  out.second.index = hi.index == kNoIndex ? -1 : hi.index;
  return out;
}

}  // namespace

std::unique_ptr<Workload> make_pair_workload(const Problem& problem, InputView input) {
  const bool abs = problem.option_bool("abs");
  return visit_dtype(input.dtype(), [&](auto zero) -> std::unique_ptr<Workload> {
    using T = decltype(zero);
    if (abs) return std::make_unique<PairWorkload<T, true>>(input);
    return std::make_unique<PairWorkload<T, false>>(input);
  });
}

std::pair<Answer, Answer> pair_on_cpu(const HostArray& input, bool abs) {
  return visit_dtype(input.dtype(), [&](auto zero) {
    using T = decltype(zero);
    return abs ? answer<T, true>(input) : answer<T, false>(input);
  });
}

}  // namespace gpuk::reduce
