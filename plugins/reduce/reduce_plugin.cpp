// The Reducer family: max, min, sum, argmax, argmin, argminmax, optionally of |x|.
// Kernel contract: docs/kernels/reduce.md and kernels_src/include/gpuk/reduce.cuh.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <thread>
#include <type_traits>


#include "cub_baseline.hpp"
#include "device/host_memory.hpp"
#include "gpuk/error.hpp"
#include "layout.hpp"
#include "pair.hpp"
#include "reducer.hpp"
#include "segmented.hpp"
#include "semantics.hpp"
#include "util/host.hpp"

namespace gpuk::reduce {
namespace {

Op parse_op(const std::string& name) { return table_parse(kOps, name, "reduce").op; }

bool has_index(Op op) { return info(op).index; }

std::string leading_arg(DType dtype, Op op, bool abs) {
  return "gpuk::Reduce<" + std::string(dtype_cuda_name(dtype)) + ", " + info(op).device + ", " +
         (abs ? "true" : "false") + ">";
}

// The device result of every reduce kernel of one array: one Acc (docs/kernels/reduce.md), 16
// bytes at most, but argminmax's MinMax (kPairResultBytes, 32). The slot and each partial hold one.
constexpr std::uint64_t kResultBytes = 16;
std::uint64_t acc_bytes(Op op) { return info(op).pair ? kPairResultBytes : kResultBytes; }

// Scratch: the counters (256 bytes, zeroed once: the ticket and onepass's packed words), then the
// partials (poisoned once: a kernel writes a slot before reading it), 256-byte aligned.
constexpr std::uint64_t kPartialsAt = 256;

// The layout of a problem, which for argminmax is one contiguous array.
Layout checked_layout(const Problem& problem) {
  const Layout layout = layout_of(problem);
  if (layout.shape != Shape::contiguous && info(parse_op(problem.operation)).pair)
    throw ConfigError("argminmax reduces one contiguous array; for segments or channels ask argmin and argmax");
  return layout;
}

// The reduce kernels' launches on device pointers: (in, n, out, partials, counter) for every launch.
class ReduceLauncher final : public Launcher {
 public:
  explicit ReduceLauncher(const Problem& p)
      : dtype_(p.dtype), op_(parse_op(p.operation)), abs_(p.option_bool("abs")), n_(p.n) {}

  std::vector<ArraySlot> arrays() const override {
    const DType v = value_dtype(dtype_, abs_);
    const std::string value(dtype_name(v));
    const std::string result = op_ == Op::sum ? std::string(dtype_name(sum_dtype(v)))
                               : info(op_).pair
                                   ? "{" + value + " min; int64 min_index at byte 8; " + value +
                                         " max at byte 16; int64 max_index at byte 24}"
                                   : "{" + value + " value; int64 index at byte 8}";
    return {{"input", false, std::string(dtype_name(dtype_)), n_ * dtype_size(dtype_), false},
            {"result", true, result, acc_bytes(op_), true}};
  }

  std::uint64_t scratch_bytes(const LaunchPlan& plan) const override {
    check_entries(Layout{}, plan);  // a segmented or per-channel kernel takes other arguments
    return kPartialsAt + static_cast<std::uint64_t>(std::max<std::int64_t>(1, plan.scratch_slots)) * acc_bytes(op_);
  }

  void init_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) const override {
    GPUK_CU(driver().cuMemsetD8Async(scratch, 0, kPartialsAt, stream));
    GPUK_CU(driver().cuMemsetD8Async(scratch + kPartialsAt, kPoisonByte, bytes - kPartialsAt, stream));
  }

  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    CUdeviceptr in = call.arrays[0], out = call.arrays[1];
    CUdeviceptr partials = call.scratch + kPartialsAt, counter = call.scratch;
    std::int64_t n = static_cast<std::int64_t>(call.n);
    void* args[] = {&in, &n, &out, &partials, &counter};
    launch_plan(target, args);
  }

 private:
  DType dtype_;
  Op op_;
  bool abs_;
  std::uint64_t n_;
};

template <class T, bool ABS>
class ReduceWorkload final : public Workload {
  using S = Semantics<T, ABS>;
  using V = typename S::V;
  using Sum = typename S::Sum;

 public:
  ReduceWorkload(InputView input, Op op) : input_(std::move(input)), op_(op) {}

  std::uint64_t bytes_moved() const override { return input_.bytes(); }

  void upload(const Stream& stream) override {
    d_in_ = DeviceBuffer(input_.bytes());
    d_in_.upload(input_.data(), input_.bytes(), stream);
    d_out_ = DeviceBuffer(kResultBytes);
  }

  std::vector<CUdeviceptr> device_arrays() const override { return {d_in_.get(), d_out_.get()}; }

  void poison(const Stream& stream) override { d_out_.fill_bytes(kPoisonByte, stream); }

  void download(const Stream& stream) override {
    d_out_.download(result_, kResultBytes, stream);
    stream.synchronize();
  }

  std::vector<CpuTiming> cpu_reference(int repeats) override {
    CpuTiming sequential{"loop, 1 thread", {}}, parallel{"loop, OpenMP, " + std::to_string(cpu_threads()) + " threads", {}};
    for (int r = 0; r < repeats; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      compute_reference(1);
      sequential.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::vector<CpuTiming> out = {sequential};
    if (cpu_threads() > 1) {
      for (int r = 0; r < repeats; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        compute_reference(cpu_threads());
        parallel.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      out.push_back(parallel);
    }
    return out;
  }

  Verification verify() const override {
    if (op_ == Op::sum) {
      const Sum got = read_result<Sum>();
      if constexpr (std::is_floating_point_v<V>) {
        // Any summation order is within n * eps * sum|x| of the exact sum (Higham, 2002).
        const long double tolerance = static_cast<long double>(input_.size()) *
                                          std::numeric_limits<Sum>::epsilon() * ref_abs_sum_ +
                                      std::numeric_limits<Sum>::denorm_min();
        const long double error = std::fabs(static_cast<long double>(got) - ref_sum_);
        std::ostringstream detail;
        detail << std::setprecision(17) << "sum " << static_cast<double>(got) << ", reference "
               << static_cast<double>(ref_sum_) << ", |error| " << static_cast<double>(error) << " <= tolerance "
               << static_cast<double>(tolerance) << " (n * eps * sum|x|)";
        if (std::isnan(static_cast<double>(ref_sum_)))
          return {std::isnan(static_cast<double>(got)), "sum " + format_value(got) + ", reference NaN"};
        return {error <= tolerance, error <= tolerance ? detail.str() : "mismatch: " + detail.str()};
      } else {
        const bool ok = got == static_cast<Sum>(ref_sum_);
        return {ok, ok ? "sum " + format_value(got) + " (exact)"
                       : "mismatch: sum " + format_value(got) + ", expected " + format_value(static_cast<Sum>(ref_sum_))};
      }
    }
    const auto got = read_result<Candidate<V>>();
    const bool value_ok = (is_nan(got.value) && is_nan(ref_.value)) || std::memcmp(&got.value, &ref_.value, sizeof(V)) == 0 ||
                          (!is_nan(got.value) && got.value == ref_.value);
    const bool index_ok = !has_index(op_) || got.index == ref_.index;
    const std::string expected = "value " + format_value(ref_.value) +
                                 (has_index(op_) ? " at index " + std::to_string(ref_.index) : std::string());
    if (value_ok && index_ok) return {true, expected};
    return {false, "mismatch: expected " + expected + ", got value " + format_value(got.value) +
                       (has_index(op_) ? " at index " + std::to_string(got.index) : std::string())};
  }

  std::optional<BaselineTiming> library_baseline(int warmup, int repeats, const Stream& stream) override {
    const CubRun run = run_cub_reduce(input_.dtype(), op_, ABS, d_in_.get(), static_cast<std::int64_t>(input_.size()),
                                      warmup, repeats, stream.get());
    BaselineTiming b;
    b.name = info(op_).cub;
    if (!run.error.empty()) {
      b.note = "CUB did not run: " + run.error;
      return b;
    }
    b.ms.assign(run.kernel_ms.begin(), run.kernel_ms.end());
    if (!reference_ready_) return b;
    // Report, never hide, a baseline whose answer differs (CUB does not follow NaN semantics).
    if (op_ == Op::sum) {
      Sum got;
      std::memcpy(&got, run.result, sizeof got);
      if constexpr (std::is_floating_point_v<V>) {
        const long double error = std::fabs(static_cast<long double>(got) - ref_sum_);
        if (!(error <= input_.size() * std::numeric_limits<Sum>::epsilon() * ref_abs_sum_ * 8))
          b.note = "CUB's sum " + format_value(got) + " differs from the reference";
      } else if (got != static_cast<Sum>(ref_sum_)) {
        b.note = "CUB's sum " + format_value(got) + " differs from the reference";
      }
    } else {
      Candidate<V> got;
      std::memcpy(&got, run.result, sizeof got);
      const bool same = (is_nan(got.value) && is_nan(ref_.value)) || got.value == ref_.value;
      if (!same || (has_index(op_) && got.index != ref_.index))
        b.note = "CUB's answer (value " + format_value(got.value) +
                 (has_index(op_) ? ", index " + std::to_string(got.index) : std::string()) +
                 ") differs from the reference";
    }
    return b;
  }

  std::vector<std::pair<std::string, std::string>> result() const override {
    if (op_ == Op::sum) return {{"sum", format_value(read_result<Sum>())}};
    const auto got = read_result<Candidate<V>>();
    if (!has_index(op_)) return {{"value", format_value(got.value)}};
    return {{"value", format_value(got.value)}, {"index", std::to_string(got.index)}};
  }

  void write_result(const std::filesystem::path& path) const override {
    if (op_ == Op::sum) {
      HostArray value(dtype_of<Sum>(), 1);
      value.as<Sum>()[0] = read_result<Sum>();
      write_npy(path, value);
      return;
    }
    const auto got = read_result<Candidate<V>>();
    HostArray value(dtype_of<V>(), 1);
    value.as<V>()[0] = got.value;
    write_npy(path, value);
    if (has_index(op_)) {
      HostArray index(DType::int64, 1);
      index.as<std::int64_t>()[0] = got.index;
      std::filesystem::path index_path = path;
      index_path.replace_filename(path.stem().string() + "_index.npy");
      write_npy(index_path, index);
    }
  }

 private:
  static_assert(sizeof(Candidate<V>) <= kResultBytes && sizeof(Sum) <= kResultBytes);

  template <class R> R read_result() const {
    R r;
    std::memcpy(&r, result_, sizeof r);
    return r;
  }

  void compute_reference(int threads) {
    const T* data = input_.as<T>().data();
    const auto n = static_cast<std::int64_t>(input_.size());
    const bool largest = info(op_).largest;
    threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n / 4096 + 1)));
    std::vector<Candidate<V>> best(threads, Candidate<V>{V(0), kNoIndex});
    std::vector<typename S::RefSum> sums(threads, 0);
    std::vector<long double> abs_sums(threads, 0);
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; ++t) {
      const std::int64_t begin = n * t / threads, end = n * (t + 1) / threads;
      if (op_ == Op::sum) sums[t] = S::sum(data, begin, end, &abs_sums[t]);
      else best[t] = S::best_of(data, begin, end, largest);
    }
    ref_ = Candidate<V>{V(0), kNoIndex};
    ref_sum_ = 0;
    ref_abs_sum_ = 0;
    for (int t = 0; t < threads; ++t) {
      ref_ = S::combine(ref_, best[t], largest);
      if constexpr (std::is_floating_point_v<V>) {
        ref_sum_ += sums[t];
      } else {
        ref_sum_ = static_cast<typename S::RefSum>(static_cast<std::uint64_t>(ref_sum_) + static_cast<std::uint64_t>(sums[t]));
      }
      ref_abs_sum_ += abs_sums[t];
    }
    reference_ready_ = true;
  }

  InputView input_;
  Op op_;
  DeviceBuffer d_in_, d_out_;
  unsigned char result_[kResultBytes] = {};
  Candidate<V> ref_{V(0), kNoIndex};
  typename S::RefSum ref_sum_ = 0;
  long double ref_abs_sum_ = 0;
  bool reference_ready_ = false;
};

// Below this mean segment length the family's choice is a warp per segment.
constexpr std::uint64_t kWarpSegments = 4096;
// Up to this many elements of one array the launch is the time: the family's choice is one_block
// (one block, one launch, nothing to set up between runs). A shipped entry for the size wins.
constexpr std::uint64_t kOneBlockMax = 8192;

class ReducePlugin final : public Reducer {
 public:
  std::string name() const override { return "reduce"; }
  std::string description() const override {
    return "max, min, sum, argmax, argmin, argminmax (both in one pass) of an array, optionally of |x| (abs: true)";
  }
  std::vector<std::string> operations() const override { return table_names(kOps); }
  std::vector<DType> dtypes() const override { return all_dtypes(); }
  std::vector<OptionSpec> options() const override {
    std::vector<OptionSpec> out = {{"abs", OptionSpec::Kind::boolean, "false", {}, "reduce |x| instead of x"}};
    for (auto& o : layout_options()) out.push_back(std::move(o));
    return out;
  }

  void check(const Problem& problem) const override { (void)checked_layout(problem); }

  // Segments and channels take their own kernels (layout.hpp): the family picks them by the
  // segments' mean length; a contiguous input takes one_block up to kOneBlockMax elements and
  // otherwise keeps the lookup's defaults.
  std::optional<KernelChoice> choose_kernel(const Problem& problem) const override {
    const Layout layout = checked_layout(problem);
    if (layout.shape == Shape::segments) {
      const std::uint64_t mean = problem.max_n / static_cast<std::uint64_t>(layout.count);
      if (mean < kWarpSegments)
        return KernelChoice{"segmented_warps", {}, "for segments of fewer than " + std::to_string(kWarpSegments) +
                                                       " elements on average (one warp each)"};
      return KernelChoice{"segmented_chunks", {}, "for segments of " + std::to_string(kWarpSegments) +
                                                      " elements and more on average (chunks of them over the whole GPU)"};
    }
    if (layout.shape == Shape::channels) {
      std::int64_t block = 256;
      while (block < layout.count) block *= 2;
      return KernelChoice{"per_channel", {{"BLOCK", block}}, "for interleaved channels (one launch, BLOCK >= channels)"};
    }
    if (problem.max_n <= kOneBlockMax)
      return KernelChoice{"one_block", {}, "for n <= " + std::to_string(kOneBlockMax) + " (one block, one launch)"};
    return std::nullopt;
  }
  std::string default_kernel() const override { return "onepass"; }

  std::vector<std::string> template_args(const Problem& problem) const override {
    return {leading_arg(problem.dtype, parse_op(problem.operation), problem.option_bool("abs"))};
  }

  std::vector<std::vector<std::string>> all_template_args(const KernelFile& file) const override {
    std::vector<std::vector<std::string>> out;
    for (const OpInfo& op : kOps) {
      if (!file.supports(op.name)) continue;
      for (DType dtype : file.dtypes)
        for (bool abs : {false, true}) out.push_back({leading_arg(dtype, op.op, abs)});
    }
    return out;
  }

  std::unique_ptr<Launcher> make_launcher(const Problem& problem) const override {
    const Layout layout = checked_layout(problem);
    if (layout.shape != Shape::contiguous) return make_layout_launcher(problem, layout);
    return std::make_unique<ReduceLauncher>(problem);
  }

  std::unique_ptr<Workload> make_workload(const Problem& problem, InputView input) const override {
    const Layout layout = checked_layout(problem);
    if (layout.shape != Shape::contiguous) return make_layout_workload(problem, layout, input);
    const Op op = parse_op(problem.operation);
    if (info(op).pair) return make_pair_workload(problem, std::move(input));
    const bool abs = problem.option_bool("abs");
    return visit_dtype(input.dtype(), [&](auto zero) -> std::unique_ptr<Workload> {
      using T = decltype(zero);
      if (abs) return std::make_unique<ReduceWorkload<T, true>>(input, op);
      return std::make_unique<ReduceWorkload<T, false>>(input, op);
    });
  }

  // The input alone: the CPU reference and the baseline read it in place and keep one value.
  std::uint64_t host_bytes(const Problem& problem) const override {
    const Layout layout = layout_of(problem);
    if (layout.shape != Shape::contiguous) return layout_host_bytes(problem, layout);
    return bytes_for(problem.n, dtype_size(problem.dtype));
  }

  std::pair<Answer, Answer> argminmax_on_cpu(const HostArray& input, bool abs) const override {
    return pair_on_cpu(input, abs);
  }

  std::vector<Answer> reduce_segments_on_cpu(const HostArray& input, const std::vector<std::int64_t>& begin,
                                             const std::vector<std::int64_t>& end, Op op, bool abs) const override {
    return segments_on_cpu(input, begin, end, op, abs);
  }
  std::vector<Answer> reduce_channels_on_cpu(const HostArray& input, std::int64_t channels, Op op,
                                             bool abs) const override {
    return channels_on_cpu(input, channels, op, abs);
  }
  std::vector<std::int64_t> generated_offsets(const Problem& problem) const override {
    const Layout layout = layout_of(problem);
    if (layout.shape != Shape::segments) throw ConfigError("generated_offsets: the problem has no segments");
    return segment_offsets(layout, problem.n);
  }

  Answer reduce_on_cpu(const HostArray& input, Op op, bool abs) const override {
    if (info(op).pair) throw ConfigError("argminmax answers two candidates: ask argminmax_on_cpu");
    return visit_dtype(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      return abs ? answer<T, true>(input, op) : answer<T, false>(input, op);
    });
  }

 private:
  template <class T, bool ABS> static Answer answer(const HostArray& input, Op op) {
    using S = Semantics<T, ABS>;
    using V = typename S::V;
    const T* data = input.as<T>().data();
    const auto n = static_cast<std::int64_t>(input.size());
    Answer a;
    const auto store = [&](auto v) {
      using X = decltype(v);
      if constexpr (std::is_floating_point_v<X>) a.float_value = static_cast<double>(v);
      else if constexpr (std::is_signed_v<X>) a.int_value = static_cast<std::int64_t>(v);
      else a.uint_value = static_cast<std::uint64_t>(v);
    };
    if (op == Op::sum) {
      store(static_cast<typename S::Sum>(S::sum(data, 0, n, nullptr)));
    } else {
      const Candidate<V> c = S::best_of(data, 0, n, info(op).largest);
      store(c.value);
      if (has_index(op)) a.index = c.index;
    }
    return a;
  }
};

}  // namespace
}  // namespace gpuk::reduce

GPUK_PLUGIN("reduce", gpuk::reduce::ReducePlugin)
