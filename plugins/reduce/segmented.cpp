// Segmented and per-channel reductions: workloads and CPU references (segmented.hpp; their
// launches are layout_launcher.cpp).
#include "segmented.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "cub_baseline.hpp"
#include "device/host_memory.hpp"
#include "gpuk/error.hpp"
#include "semantics.hpp"
#include "util/host.hpp"

namespace gpuk::reduce {
namespace {

// The empty answer: cub::DeviceSegmentedReduce's initial value (lowest() for max and argmax,
// max() for min and argmin) and index -1 (CUB writes 1).
template <class V> V empty_value(Op op) {
  return info(op).largest ? std::numeric_limits<V>::lowest() : std::numeric_limits<V>::max();
}

// Per segment or channel: the best candidate (index relative to the segment, or the pixel), or
// the sum and the sum of |x| (the tolerance's basis), and the length.
template <class T, bool ABS> struct References {
  using S = Semantics<T, ABS>;
  using V = typename S::V;
  std::vector<Candidate<V>> best;
  std::vector<typename S::RefSum> sums;
  std::vector<long double> abs_sums;
  std::vector<std::int64_t> lengths;

  void segments(const T* data, const std::vector<std::int64_t>& begin, const std::vector<std::int64_t>& end, Op op,
                int threads) {
    const auto count = static_cast<std::int64_t>(begin.size());
    resize(count, op);
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
    for (std::int64_t s = 0; s < count; ++s) {
      const std::int64_t b = begin[s], e = std::max(begin[s], end[s]);
      lengths[s] = e - b;
      if (op == Op::sum) {
        sums[s] = S::sum(data, b, e, &abs_sums[s]);
      } else {
        best[s] = S::best_of(data, b, e, info(op).largest);
        if (best[s].index != kNoIndex) best[s].index -= b;
      }
    }
    (void)threads;
  }

  void channels(const T* data, std::int64_t n, std::int64_t count, Op op, int threads) {
    resize(count, op);
    const std::int64_t pixels = n / count;
    const bool largest = info(op).largest;
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (std::int64_t c = 0; c < count; ++c) {
      lengths[c] = pixels;
      Candidate<V> best_c{V(0), kNoIndex};
      typename S::RefSum sum = 0;
      long double abs_sum = 0;
      for (std::int64_t p = 0; p < pixels; ++p) {
        if (op == Op::sum) {
          sum = add(sum, data[p * count + c], abs_sum);
        } else {
          const V v = S::value(data[p * count + c]);
          if (best_c.index == kNoIndex || S::better(v, best_c.value, largest)) best_c = {v, p};
        }
      }
      best[c] = best_c;
      sums[c] = sum;
      abs_sums[c] = abs_sum;
    }
    (void)threads;
  }

  // The answer a kernel must give for segment s.
  Candidate<V> expected(std::int64_t s, Op op) const {
    if (best[s].index == kNoIndex) return {empty_value<V>(op), -1};
    return best[s];
  }

 private:
  void resize(std::int64_t count, Op) {
    lengths.assign(count, 0);
    best.assign(count, Candidate<V>{V(0), kNoIndex});
    sums.assign(count, 0);
    abs_sums.assign(count, 0);
  }
  static typename S::RefSum add(typename S::RefSum s, T x, long double& abs_sum) {
    const T one[1] = {x};
    long double a = 0;
    const auto r = S::sum(one, 0, 1, &a);
    abs_sum += a;
    if constexpr (std::is_floating_point_v<V>) return s + r;
    else return static_cast<typename S::RefSum>(static_cast<std::uint64_t>(s) + static_cast<std::uint64_t>(r));
  }
};

// Compares one device answer with the reference; returns an empty string when it agrees.
template <class T, bool ABS>
std::string compare(const References<T, ABS>& ref, std::int64_t s, Op op, const unsigned char* got_bytes) {
  using S = Semantics<T, ABS>;
  using V = typename S::V;
  using Sum = typename S::Sum;
  if (op == Op::sum) {
    Sum got;
    std::memcpy(&got, got_bytes, sizeof got);
    const auto want = ref.sums[s];
    if constexpr (std::is_floating_point_v<V>) {
      if (std::isnan(static_cast<double>(want)))
        return std::isnan(static_cast<double>(got)) ? "" : "sum " + format_value(got) + ", reference NaN";
      // Any summation order is within n * eps * sum|x| of the exact sum (Higham, 2002).
      const long double tolerance = static_cast<long double>(ref.lengths[s]) * std::numeric_limits<Sum>::epsilon() *
                                        ref.abs_sums[s] +
                                    std::numeric_limits<Sum>::denorm_min();
      const long double error = std::fabs(static_cast<long double>(got) - want);
      if (error <= tolerance) return "";
      return "sum " + format_value(got) + ", reference " + format_value(static_cast<double>(want)) + ", |error| " +
             format_value(static_cast<double>(error)) + " > tolerance " + format_value(static_cast<double>(tolerance));
    } else {
      if (got == static_cast<Sum>(want)) return "";
      return "sum " + format_value(got) + ", expected " + format_value(static_cast<Sum>(want));
    }
  }
  Candidate<V> got;
  std::memcpy(&got.value, got_bytes, sizeof(V));
  std::memcpy(&got.index, got_bytes + 8, 8);
  const Candidate<V> want = ref.expected(s, op);
  const bool value_ok = (is_nan(got.value) && is_nan(want.value)) || std::memcmp(&got.value, &want.value, sizeof(V)) == 0 ||
                        (!is_nan(got.value) && got.value == want.value);
  // max and min promise no index, except -1 for an empty segment.
  const bool index_ok = info(op).index || want.index == -1 ? got.index == want.index : true;
  if (value_ok && index_ok) return "";
  return "expected value " + format_value(want.value) + " at index " + std::to_string(want.index) + ", got value " +
         format_value(got.value) + " at index " + std::to_string(got.index);
}

template <class T, bool ABS>
class LayoutWorkload final : public Workload {
  using S = Semantics<T, ABS>;
  using V = typename S::V;

 public:
  LayoutWorkload(InputView input, Op op, Layout layout)
      : input_(input), op_(op), layout_(layout), each_(result_bytes(op)) {
    if (layout_.shape == Shape::segments) {
      const auto offsets = segment_offsets(layout_, input_.size());
      begin_.assign(offsets.begin(), offsets.end() - 1);
      end_.assign(offsets.begin() + 1, offsets.end());
    }
    result_.assign(static_cast<std::size_t>(layout_.count) * each_, 0);
  }

  std::uint64_t bytes_moved() const override {
    return input_.bytes() + (begin_.size() + end_.size()) * 8 + result_.size();
  }

  void upload(const Stream& stream) override {
    d_in_ = DeviceBuffer(input_.bytes());
    d_in_.upload(input_.data(), input_.bytes(), stream);
    if (layout_.shape == Shape::segments) {
      d_begin_ = DeviceBuffer(begin_.size() * 8);
      d_begin_.upload(begin_.data(), begin_.size() * 8, stream);
      d_end_ = DeviceBuffer(end_.size() * 8);
      d_end_.upload(end_.data(), end_.size() * 8, stream);
    }
    d_out_ = DeviceBuffer(result_.size());
    stream.synchronize();
  }

  std::vector<CUdeviceptr> device_arrays() const override {
    if (layout_.shape == Shape::segments) return {d_in_.get(), d_begin_.get(), d_end_.get(), d_out_.get()};
    return {d_in_.get(), d_out_.get()};
  }

  void poison(const Stream& stream) override { d_out_.fill_bytes(kPoisonByte, stream); }

  void download(const Stream& stream) override {
    d_out_.download(result_.data(), result_.size(), stream);
    stream.synchronize();
  }

  std::vector<CpuTiming> cpu_reference(int repeats) override {
    const std::string what = layout_.shape == Shape::segments ? "per segment" : "per channel";
    CpuTiming sequential{"loop " + what + ", 1 thread", {}};
    CpuTiming parallel{"loop " + what + ", OpenMP, " + std::to_string(cpu_threads()) + " threads", {}};
    for (int r = 0; r < repeats; ++r) sequential.ms.push_back(compute(1));
    std::vector<CpuTiming> out = {sequential};
    if (cpu_threads() > 1) {
      for (int r = 0; r < repeats; ++r) parallel.ms.push_back(compute(cpu_threads()));
      out.push_back(parallel);
    }
    return out;
  }

  Verification verify() const override {
    std::int64_t wrong = 0, first = -1;
    std::string detail;
    for (std::int64_t s = 0; s < layout_.count; ++s) {
      const std::string why = compare(ref_, s, op_, result_.data() + s * each_);
      if (why.empty()) continue;
      if (wrong++ == 0) {
        first = s;
        detail = why;
      }
    }
    const std::string unit = layout_.shape == Shape::segments ? "segment" : "channel";
    if (wrong == 0) return {true, std::to_string(layout_.count) + " " + unit + "s agree with the reference"};
    return {false, "mismatch in " + std::to_string(wrong) + " of " + std::to_string(layout_.count) + " " + unit +
                       "s; the first, " + unit + " " + std::to_string(first) + ": " + detail};
  }

  std::optional<BaselineTiming> library_baseline(int warmup, int repeats, const Stream& stream) override {
    const DType dtype = input_.dtype();
    const CubSegmentedRun run =
        layout_.shape == Shape::segments
            ? run_cub_segmented(dtype, op_, ABS, d_in_.get(), d_begin_.get(), d_end_.get(), layout_.count, warmup,
                                repeats, stream.get())
            : run_cub_channels(dtype, op_, ABS, d_in_.get(), static_cast<std::int64_t>(input_.size()) / layout_.count,
                               layout_.count, warmup, repeats, stream.get());
    BaselineTiming b;
    b.name = std::string("cub::DeviceSegmentedReduce::") +
             (op_ == Op::argmax ? "ArgMax" : op_ == Op::argmin ? "ArgMin" : op_ == Op::sum ? "Sum" : op_ == Op::max ? "Max" : "Min") +
             (ABS ? " of |x|" : "") + (layout_.shape == Shape::channels ? " over a strided view" : "");
    if (!run.error.empty()) {
      b.note = "CUB did not run: " + run.error;
      return b;
    }
    b.ms.assign(run.kernel_ms.begin(), run.kernel_ms.end());
    if (!reference_ready_) return b;
    // Report, never hide, answers that differ (CUB does not follow gpuk's NaN rules; an empty
    // segment's index is 1 in CUB, -1 in gpuk).
    std::int64_t wrong = 0;
    std::string first;
    for (std::int64_t s = 0; s < layout_.count; ++s) {
      std::vector<unsigned char> got(run.results.begin() + s * each_, run.results.begin() + (s + 1) * each_);
      if (op_ != Op::sum && ref_.lengths[s] == 0) {
        const std::int64_t none = -1;
        std::memcpy(got.data() + 8, &none, 8);
      }
      if (op_ != Op::sum && !info(op_).index) {
        const std::int64_t none = ref_.lengths[s] == 0 ? -1 : 0;
        std::memcpy(got.data() + 8, &none, 8);
      }
      const std::string why = compare(ref_, s, op_, got.data());
      if (!why.empty() && wrong++ == 0) first = "segment " + std::to_string(s) + ": " + why;
    }
    if (wrong) b.note = "CUB's answers differ from the reference in " + std::to_string(wrong) + " of " +
                        std::to_string(layout_.count) + "; the first, " + first;
    return b;
  }

  std::vector<std::pair<std::string, std::string>> result() const override {
    const std::string unit = layout_.shape == Shape::segments ? "segment" : "channel";
    std::vector<std::pair<std::string, std::string>> out = {{unit + "s", std::to_string(layout_.count)}};
    for (std::int64_t s : {std::int64_t{0}, layout_.count - 1}) {
      const unsigned char* p = result_.data() + s * each_;
      if (op_ == Op::sum) {
        typename S::Sum v;
        std::memcpy(&v, p, sizeof v);
        out.push_back({unit + " " + std::to_string(s), "sum " + format_value(v)});
      } else {
        V v;
        std::int64_t i;
        std::memcpy(&v, p, sizeof v);
        std::memcpy(&i, p + 8, 8);
        out.push_back({unit + " " + std::to_string(s),
                       "value " + format_value(v) + (info(op_).index ? " at index " + std::to_string(i) : "")});
      }
      if (layout_.count == 1) break;
    }
    return out;
  }

  void write_result(const std::filesystem::path& path) const override {
    const auto count = static_cast<std::uint64_t>(layout_.count);
    if (op_ == Op::sum) {
      using Sum = typename S::Sum;
      HostArray values(dtype_of<Sum>(), count);
      for (std::uint64_t s = 0; s < count; ++s) std::memcpy(&values.as<Sum>()[s], result_.data() + s * each_, sizeof(Sum));
      write_npy(path, values);
      return;
    }
    HostArray values(dtype_of<V>(), count);
    HostArray index(DType::int64, count);
    for (std::uint64_t s = 0; s < count; ++s) {
      std::memcpy(&values.as<V>()[s], result_.data() + s * each_, sizeof(V));
      std::memcpy(&index.as<std::int64_t>()[s], result_.data() + s * each_ + 8, 8);
    }
    write_npy(path, values);
    if (info(op_).index) {
      std::filesystem::path index_path = path;
      index_path.replace_filename(path.stem().string() + "_index.npy");
      write_npy(index_path, index);
    }
  }

 private:
  double compute(int threads) {
    const auto t0 = std::chrono::steady_clock::now();
    const T* data = input_.as<T>().data();
    if (layout_.shape == Shape::segments) ref_.segments(data, begin_, end_, op_, threads);
    else ref_.channels(data, static_cast<std::int64_t>(input_.size()), layout_.count, op_, threads);
    reference_ready_ = true;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  InputView input_;
  Op op_;
  Layout layout_;
  std::uint64_t each_;
  std::vector<std::int64_t> begin_, end_;
  std::vector<unsigned char> result_;
  DeviceBuffer d_in_, d_begin_, d_end_, d_out_;
  References<T, ABS> ref_;
  bool reference_ready_ = false;
};

template <class T, bool ABS> std::vector<Answer> answers(const References<T, ABS>& ref, Op op) {
  using V = typename Semantics<T, ABS>::V;
  using Sum = typename Semantics<T, ABS>::Sum;
  std::vector<Answer> out(ref.lengths.size());
  const auto store = [](Answer& a, auto v) {
    using X = decltype(v);
    if constexpr (std::is_floating_point_v<X>) a.float_value = static_cast<double>(v);
    else if constexpr (std::is_signed_v<X>) a.int_value = static_cast<std::int64_t>(v);
    else a.uint_value = static_cast<std::uint64_t>(v);
  };
  for (std::size_t s = 0; s < out.size(); ++s) {
    if (op == Op::sum) {
      store(out[s], static_cast<Sum>(ref.sums[s]));
    } else {
      const Candidate<V> c = ref.expected(static_cast<std::int64_t>(s), op);
      store(out[s], c.value);
      if (info(op).index || c.index == -1) out[s].index = c.index;
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<Workload> make_layout_workload(const Problem& problem, const Layout& layout, InputView input) {
  const Op op = op_named(problem.operation);
  const bool abs = problem.option_bool("abs");
  return visit_dtype(input.dtype(), [&](auto zero) -> std::unique_ptr<Workload> {
    using T = decltype(zero);
    if (abs) return std::make_unique<LayoutWorkload<T, true>>(input, op, layout);
    return std::make_unique<LayoutWorkload<T, false>>(input, op, layout);
  });
}

std::uint64_t layout_host_bytes(const Problem& problem, const Layout& layout) {
  // The input, the offsets, the downloaded results, the reference's per-segment answers and the
  // baseline's copy of CUB's.
  const auto count = static_cast<std::uint64_t>(layout.count);
  std::uint64_t bytes = bytes_for(problem.n, dtype_size(problem.dtype));
  bytes = add_bytes(bytes, bytes_for(count, layout.shape == Shape::segments ? 16 + 16 + 48 + 32 : 16 + 48 + 32));
  return bytes;
}

std::vector<Answer> segments_on_cpu(const HostArray& input, const std::vector<std::int64_t>& begin,
                                    const std::vector<std::int64_t>& end, Op op, bool abs) {
  if (begin.size() != end.size()) throw Error("segments_on_cpu: begin and end offsets differ in length");
  for (std::size_t s = 0; s < begin.size(); ++s)
    if (end[s] > begin[s] && (begin[s] < 0 || static_cast<std::uint64_t>(end[s]) > input.size()))
      throw Error("segments_on_cpu: segment " + std::to_string(s) + " lies outside the input");
  return visit_dtype(input.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const auto run = [&](auto abs_tag) {
      constexpr bool ABS = decltype(abs_tag)::value;
      References<T, ABS> ref;
      ref.segments(input.as<T>().data(), begin, end, op, 1);
      return answers<T, ABS>(ref, op);
    };
    return abs ? run(std::true_type{}) : run(std::false_type{});
  });
}

std::vector<Answer> channels_on_cpu(const HostArray& input, std::int64_t channels, Op op, bool abs) {
  if (channels < 1 || input.size() % static_cast<std::uint64_t>(channels) != 0)
    throw Error("channels_on_cpu: the input's size is not a multiple of channels");
  return visit_dtype(input.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const auto run = [&](auto abs_tag) {
      constexpr bool ABS = decltype(abs_tag)::value;
      References<T, ABS> ref;
      ref.channels(input.as<T>().data(), static_cast<std::int64_t>(input.size()), channels, op, 1);
      return answers<T, ABS>(ref, op);
    };
    return abs ? run(std::true_type{}) : run(std::false_type{});
  });
}

}  // namespace gpuk::reduce
