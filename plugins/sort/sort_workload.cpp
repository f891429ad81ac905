// The sort family's Workload (sort_workload.hpp).
#include "sort_workload.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <limits>
#include <memory>
#include <sstream>
#include <type_traits>

#include "cub/cub_baseline.hpp"
#include "device/host_memory.hpp"
#include "host_order.hpp"
#include "host_radix_sort.hpp"
#include "util/host.hpp"

namespace gpuk::sort {
namespace {

struct NoValue {};

template <class K, class V>
class SortWorkload final : public Workload {
  static constexpr bool kHasValues = !std::is_same_v<V, NoValue>;

 public:
  SortWorkload(InputView keys, Op op, const KeyOrder& order)
      : keys_(keys), op_(op), order_(order), n_(static_cast<std::int64_t>(keys_.size())) {
    if constexpr (kHasValues) {
      if (op_ == Op::sort_pairs) {
        values_ = HostArray(dtype_of<V>(), keys_.size());
        auto v = values_.as<V>();
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = pair_value<V>(i);
      }
    }
  }

  std::uint64_t bytes_moved() const override {
    std::uint64_t bytes = 2 * keys_.bytes();  // keys read once and written once
    if constexpr (kHasValues) bytes += (op_ == Op::sort_pairs ? 2 : 1) * keys_.size() * sizeof(V);
    return bytes;
  }

  void upload(const Stream& stream) override {
    d_keys_in_ = DeviceBuffer(keys_.bytes());
    d_keys_in_.upload(keys_.data(), keys_.bytes(), stream);
    d_keys_out_ = DeviceBuffer(keys_.bytes());
    if constexpr (kHasValues) {
      if (op_ == Op::sort_pairs) {
        d_values_in_ = DeviceBuffer(values_.bytes());
        d_values_in_.upload(values_.data(), values_.bytes(), stream);
      }
      d_values_out_ = DeviceBuffer(keys_.size() * sizeof(V));
    }
    // The host's copies of the outputs, allocated and page-locked here, once (core's
    // HostArray::pin): for 2^28 keys that is most of a second, which a pooled sweep's worker
    // spends while the parent's compile wave runs rather than at its first variant's check.
    if (got_keys_.size() != keys_.size()) {
      got_keys_ = HostArray(keys_.dtype(), keys_.size());
      (void)got_keys_.pin();
    }
    if constexpr (kHasValues) {
      if (got_values_.size() != keys_.size()) {
        got_values_ = HostArray(dtype_of<V>(), keys_.size());
        (void)got_values_.pin();
      }
    }
  }

  // In the launcher's order: keys in, keys out, values in (sort_pairs), values out (sort_pairs,
  // argsort's indices).
  std::vector<CUdeviceptr> device_arrays() const override {
    std::vector<CUdeviceptr> out = {d_keys_in_.get(), d_keys_out_.get()};
    if constexpr (kHasValues) {
      if (op_ == Op::sort_pairs) out.push_back(d_values_in_.get());
      out.push_back(d_values_out_.get());
    }
    return out;
  }

  void poison(const Stream& stream) override {
    d_keys_out_.fill_bytes(kPoisonByte, stream);
    if constexpr (kHasValues) d_values_out_.fill_bytes(kPoisonByte, stream);
  }

  void download(const Stream& stream) override {
    // Into the page-locked copies upload() made: at the bus's speed.
    d_keys_out_.download(got_keys_.data(), got_keys_.bytes(), stream);
    if constexpr (kHasValues) d_values_out_.download(got_values_.data(), got_values_.bytes(), stream);
    stream.synchronize();
  }

  // The reference is the stable LSD radix sort (host_radix_sort.hpp) on cpu_threads() threads;
  // on one thread too, timed, up to 2^24 keys (past that it would only slow a sweep's start).
  std::vector<CpuTiming> cpu_reference(int repeats) override {
    const int threads = cpu_threads();
    CpuTiming sequential{"LSD radix sort, 1 thread", {}};
    CpuTiming parallel{"LSD radix sort, " + std::to_string(threads) + " threads", {}};
    const bool sequential_too = threads == 1 || n_ <= (std::int64_t{1} << 24);
    const auto timed = [&](CpuTiming& t, int use) {
      for (int r = 0; r < std::max(1, repeats); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        compute_reference(use);
        t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    };
    std::vector<CpuTiming> out;
    if (sequential_too) {
      timed(sequential, 1);
      out.push_back(sequential);
    }
    if (threads > 1) {
      timed(parallel, threads);
      out.push_back(parallel);
    }
    return out;
  }

  Verification verify() const override {
    if (!reference_ready_) return {false, "no CPU reference was computed"};
    return compare(got_keys_.as<K>().data(), kHasValues ? got_values_.data() : nullptr, "");
  }

  std::optional<BaselineTiming> library_baseline(int warmup, int repeats, const Stream& stream) override {
    CubValues values = CubValues::none;
    if constexpr (kHasValues) values = sizeof(V) == 4 ? CubValues::uint32 : CubValues::uint64;
    // argsort through CUB is SortPairs with the indices as values, filled (untimed) beforehand.
    DeviceBuffer indices;
    CUdeviceptr d_values = 0;
    if constexpr (kHasValues) {
      if (op_ == Op::argsort) {
        HostArray iota(dtype_of<V>(), keys_.size());
        auto v = iota.as<V>();
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<V>(i);
        indices = DeviceBuffer(iota.bytes());
        indices.upload(iota.data(), iota.bytes(), stream);
        stream.synchronize();
        d_values = indices.get();
      } else {
        d_values = d_values_in_.get();
      }
    }
    HostArray cub_keys(keys_.dtype(), keys_.size());
    HostArray cub_values = kHasValues ? HostArray(values == CubValues::uint32 ? DType::uint32 : DType::uint64, keys_.size())
                                      : HostArray();
    const CubSortRun run = run_cub_sort(keys_.dtype(), values, order_.descending, order_.begin_bit, order_.end_bit,
                                        d_keys_in_.get(), d_values, n_, warmup, repeats, stream.get(), cub_keys.data(),
                                        kHasValues ? cub_values.data() : nullptr);
    BaselineTiming b;
    b.name = run.name;
    if (!run.error.empty()) {
      b.note = "CUB did not run: " + run.error;
      return b;
    }
    b.ms.assign(run.kernel_ms.begin(), run.kernel_ms.end());
    if (reference_ready_) {
      const Verification v = compare(cub_keys.as<K>().data(), kHasValues ? cub_values.data() : nullptr, "CUB's ");
      if (!v.passed) b.note = "its answer differs from the reference: " + v.detail;
    }
    return b;
  }

  std::vector<std::pair<std::string, std::string>> result() const override {
    if (got_keys_.size() == 0) return {};
    const auto k = got_keys_.as<K>();
    std::vector<std::pair<std::string, std::string>> r = {{"first", format_value(k.front())},
                                                          {"last", format_value(k.back())}};
    if constexpr (kHasValues) {
      const auto v = got_values_.as<V>();
      r.push_back({op_ == Op::argsort ? "first_index" : "first_value", format_value(v.front())});
    }
    return r;
  }

  void write_result(const std::filesystem::path& path) const override {
    write_npy(path, got_keys_);
    if constexpr (kHasValues) {
      std::filesystem::path values_path = path;
      values_path.replace_filename(path.stem().string() + (op_ == Op::argsort ? "_indices.npy" : "_values.npy"));
      write_npy(values_path, got_values_);
    }
  }

 private:
  // The stable sort of the input by the ordered bits: keys and values (argsort: the indices)
  // moved together, the answer verify() compares with.
  void compute_reference(int threads) {
    const auto keys = keys_.as<K>();
    const std::span<const K> input(keys.data(), keys.size());
    // Not zeroed: the sort's threads write every element, the first touch of each page.
    if (!ref_keys_) ref_keys_ = std::make_unique_for_overwrite<K[]>(keys.size());
    if constexpr (kHasValues) {
      if (!ref_values_) ref_values_ = std::make_unique_for_overwrite<V[]>(keys.size());
      const V* values = op_ == Op::sort_pairs ? values_.as<V>().data() : nullptr;  // argsort: the indices
      radix_sort<K, V>(input, values, ref_keys_.get(), ref_values_.get(), order_, static_cast<unsigned>(threads));
    } else {
      radix_sort<K>(input, nullptr, ref_keys_.get(), nullptr, order_, static_cast<unsigned>(threads));
    }
    reference_ready_ = true;
  }

  // Every element, bit for bit: the keys, then the values (which prove stability).
  // The bytes first, on every core (equal_bytes); element by element only when they differ.
  Verification compare(const K* keys, const void* values_raw, const std::string& who) const {
    const char* what = op_ == Op::argsort ? "indices" : "values";
    const auto n = static_cast<std::size_t>(n_);
    bool same = equal_bytes(keys, ref_keys_.get(), n * sizeof(K));
    if constexpr (kHasValues) same = same && equal_bytes(values_raw, ref_values_.get(), n * sizeof(V));
    if (same)
      return {true, std::to_string(n_) + " keys" + (kHasValues ? std::string(" and ") + what : std::string()) +
                        " equal the stable CPU sort, element by element"};
    std::uint64_t key_mismatches = 0, value_mismatches = 0;
    std::int64_t first_key = -1, first_value = -1;
    for (std::int64_t i = 0; i < n_; ++i) {
      if (!same_bits(keys[i], ref_keys_[i])) {
        ++key_mismatches;
        if (first_key < 0) first_key = i;
      }
    }
    if constexpr (kHasValues) {
      const V* values = static_cast<const V*>(values_raw);
      for (std::int64_t i = 0; i < n_; ++i) {
        if (values[i] != ref_values_[i]) {
          ++value_mismatches;
          if (first_value < 0) first_value = i;
        }
      }
    }
    std::ostringstream out;
    out << who << "mismatch: ";
    if (key_mismatches)
      out << key_mismatches << " keys differ, the first at " << first_key << " (got " << format_value(keys[first_key])
          << ", expected " << format_value(ref_keys_[first_key]) << ")";
    if constexpr (kHasValues) {
      const V* values = static_cast<const V*>(values_raw);
      if (value_mismatches)
        out << (key_mismatches ? "; " : "") << value_mismatches << " " << what << " differ, the first at " << first_value
            << " (got " << format_value(values[first_value]) << ", expected "
            << format_value(ref_values_[first_value]) << ")";
    }
    return {false, out.str()};
  }

  InputView keys_;
  HostArray values_;
  Op op_;
  KeyOrder order_;
  std::int64_t n_;
  DeviceBuffer d_keys_in_, d_keys_out_, d_values_in_, d_values_out_;
  HostArray got_keys_, got_values_;
  std::unique_ptr<K[]> ref_keys_;  // n_ of each, once computed
  std::unique_ptr<std::conditional_t<kHasValues, V, char>[]> ref_values_;
  bool reference_ready_ = false;
};

}  // namespace

std::unique_ptr<Workload> make_sort_workload(InputView keys, Op op, const KeyOrder& order, DType value) {
  return visit_dtype(keys.dtype(), [&](auto zero) -> std::unique_ptr<Workload> {
    using K = decltype(zero);
    if (op == Op::sort) return std::make_unique<SortWorkload<K, NoValue>>(keys, op, order);
    if (value == DType::uint32) return std::make_unique<SortWorkload<K, std::uint32_t>>(keys, op, order);
    return std::make_unique<SortWorkload<K, std::uint64_t>>(keys, op, order);
  });
}

}  // namespace gpuk::sort
