// The sort family's segmented sort Workload (segmented_workload.hpp).
#include "segmented_workload.hpp"

#include <chrono>
#include <sstream>

#include "device/host_memory.hpp"
#include "host_order.hpp"
#include "host_segmented.hpp"
#include "util/host.hpp"

namespace gpuk::sort {
namespace {

template <class K, class V> class SegmentedWorkload final : public Workload {
 public:
  SegmentedWorkload(InputView keys, bool pairs, const KeyOrder& order, const SegmentSpec& spec)
      : keys_(std::move(keys)), pairs_(pairs), order_(order), n_(keys_.size()) {
    check_segments(spec, n_);
    offsets_ = segment_offsets(spec, n_);
    segments_ = static_cast<std::int64_t>(spec.segments);
    if (pairs_) {
      values_.resize(n_);
      for (std::uint64_t i = 0; i < n_; ++i) values_[i] = pair_value<V>(i);
    }
  }

  // Keys (and values) read once and written once; the offsets read once.
  std::uint64_t bytes_moved() const override {
    return 2 * n_ * (sizeof(K) + (pairs_ ? sizeof(V) : 0)) + offsets_.size() * 8;
  }

  void upload(const Stream& stream) override {
    d_keys_in_ = DeviceBuffer(keys_.bytes());
    d_keys_in_.upload(keys_.data(), keys_.bytes(), stream);
    d_keys_out_ = DeviceBuffer(keys_.bytes());
    d_offsets_ = DeviceBuffer(offsets_.size() * 8);
    d_offsets_.upload(offsets_.data(), offsets_.size() * 8, stream);
    got_keys_ = HostArray(keys_.dtype(), n_);
    if (pairs_) {
      d_values_in_ = DeviceBuffer(n_ * sizeof(V));
      d_values_in_.upload(values_.data(), n_ * sizeof(V), stream);
      d_values_out_ = DeviceBuffer(n_ * sizeof(V));
      got_values_ = HostArray(dtype_of<V>(), n_);
    }
  }

  std::vector<CUdeviceptr> device_arrays() const override {
    // n + 1 offsets: the end offsets are the begin offsets one on.
    const CUdeviceptr begin = d_offsets_.get(), end = begin + 8;
    if (pairs_) return {d_keys_in_.get(), d_keys_out_.get(), d_values_in_.get(), d_values_out_.get(), begin, end};
    return {d_keys_in_.get(), d_keys_out_.get(), begin, end};
  }

  const void* scalar() const override { return &segments_; }

  void poison(const Stream& stream) override {
    d_keys_out_.fill_bytes(kPoisonByte, stream);
    if (pairs_) d_values_out_.fill_bytes(kPoisonByte, stream);
  }

  void download(const Stream& stream) override {
    d_keys_out_.download(got_keys_.data(), got_keys_.bytes(), stream);
    if (pairs_) d_values_out_.download(got_values_.data(), got_values_.bytes(), stream);
    stream.synchronize();
  }

  std::vector<CpuTiming> cpu_reference(int repeats) override {
    CpuTiming t{"std::stable_sort per segment, 1 thread", {}};
    ref_keys_.assign(n_, K{});
    ref_values_.assign(pairs_ ? n_ : 0, V{});
    for (int r = 0; r < std::max(1, repeats); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      segmented_sort_on_host<K, V>(keys_.as<K>(), pairs_ ? values_.data() : nullptr, offsets_, order_,
                                   ref_keys_.data(), ref_values_.data());
      t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    reference_ready_ = true;
    return {t};
  }

  // Every key bit for bit, and every value.
  Verification verify() const override {
    if (!reference_ready_) return {false, "no CPU reference was computed"};
    const auto keys = got_keys_.as<K>();
    std::uint64_t wrong = 0, first = 0;
    for (std::uint64_t i = 0; i < n_; ++i) {
      const bool ok = same_bits(keys[i], ref_keys_[i]) && (!pairs_ || got_values_.as<V>()[i] == ref_values_[i]);
      if (!ok && wrong++ == 0) first = i;
    }
    const std::string segs = std::to_string(offsets_.size() - 1) + " segments";
    if (wrong == 0)
      return {true, std::to_string(n_) + (pairs_ ? " keys and values" : " keys") + " in " + segs +
                        " equal the CPU's stable sort of each segment, element by element"};
    std::ostringstream out;
    out << "mismatch: " << wrong << " of " << n_ << " differ (" << segs << "), the first at " << first << " (got "
        << format_value(keys[first]) << ", expected " << format_value(ref_keys_[first]) << ")";
    return {false, out.str()};
  }

  std::optional<BaselineTiming> library_baseline(int, int, const Stream&) override { return std::nullopt; }

  std::vector<std::pair<std::string, std::string>> result() const override {
    if (got_keys_.size() == 0) return {};
    return {{"first", format_value(got_keys_.as<K>().front())}, {"last", format_value(got_keys_.as<K>().back())}};
  }

  void write_result(const std::filesystem::path& path) const override {
    write_npy(path, got_keys_);
    if (pairs_) {
      std::filesystem::path values = path;
      values.replace_filename(path.stem().string() + "_values.npy");
      write_npy(values, got_values_);
    }
  }

 private:
  InputView keys_;
  bool pairs_;
  KeyOrder order_;
  std::uint64_t n_;
  std::vector<std::int64_t> offsets_;
  std::int64_t segments_ = 1;
  std::vector<V> values_;
  DeviceBuffer d_keys_in_, d_keys_out_, d_values_in_, d_values_out_, d_offsets_;
  HostArray got_keys_, got_values_;
  std::vector<K> ref_keys_;
  std::vector<V> ref_values_;
  bool reference_ready_ = false;
};

}  // namespace

std::unique_ptr<Workload> make_segmented_workload(InputView keys, Op op, const KeyOrder& order, DType values,
                                                  const SegmentSpec& spec) {
  const bool pairs = op == Op::segmented_sort_pairs;
  return visit_dtype(keys.dtype(), [&](auto zero) -> std::unique_ptr<Workload> {
    using K = decltype(zero);
    if (values == DType::uint64) return std::make_unique<SegmentedWorkload<K, std::uint64_t>>(keys, pairs, order, spec);
    return std::make_unique<SegmentedWorkload<K, std::uint32_t>>(keys, pairs, order, spec);
  });
}

}  // namespace gpuk::sort
