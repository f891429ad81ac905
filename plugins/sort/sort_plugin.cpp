// The Sorter family: sort keys, sort key-value pairs, argsort; ascending or descending; stable.
// Kernel contract: docs/kernels/sort.md and kernels_src/include/gpuk/sort.cuh.
#include <parallel/algorithm>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>
#include <type_traits>


#include "config/config.hpp"
#include "cub_baseline.hpp"
#include "gpuk/error.hpp"
#include "run/host_memory.hpp"
#include "run/prepare.hpp"
#include "sort_launcher.hpp"
#include "sorter.hpp"
#include "util/host.hpp"

namespace gpuk::sort {

CubSortRun run_cub_sort(DType key_dtype, CubValues values, bool descending, int begin_bit, int end_bit, std::uint64_t d_keys_in,
                        std::uint64_t d_values_in, std::int64_t n, int warmup, int repeats, void* stream,
                        void* keys_out, void* values_out) {
  if (n < 1 || n > std::numeric_limits<int>::max()) {
    CubSortRun run;
    run.error = "n = " + std::to_string(n) + " is outside CUB's 32-bit num_items";
    return run;
  }
  const void* vin = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(d_values_in));
  const int count = static_cast<int>(n);
  return visit_dtype(key_dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* kin = reinterpret_cast<const T*>(static_cast<std::uintptr_t>(d_keys_in));
    if constexpr (std::is_same_v<T, std::uint32_t>)
      return run_cub_sort_uint32(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else if constexpr (std::is_same_v<T, std::int32_t>)
      return run_cub_sort_int32(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else if constexpr (std::is_same_v<T, float>)
      return run_cub_sort_float32(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else if constexpr (std::is_same_v<T, std::uint64_t>)
      return run_cub_sort_uint64(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else if constexpr (std::is_same_v<T, std::int64_t>)
      return run_cub_sort_int64(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else
      return run_cub_sort_float64(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
  });
}

namespace {

// gpuk::Sort<K, V, DESC, KIND> for the whole key in total order; a bit window or CUB's float
// order adds <..., BEGIN_BIT, END_BIT, ORDER> (kernels_src/include/gpuk/sort.cuh).
std::string leading_arg(DType key, Op op, std::optional<DType> value, const KeyOrder& o) {
  std::string arg = "gpuk::Sort<" + std::string(dtype_cuda_name(key)) + ", " +
                    (op == Op::sort ? std::string("gpuk::NoValue") : std::string(dtype_cuda_name(*value))) + ", " +
                    (o.descending ? "true" : "false") + ", " + info(op).device;
  const int key_bits = static_cast<int>(8 * dtype_size(key));
  const bool cub = o.cub && dtype_is_float(key);
  if (o.begin_bit != 0 || o.end_bit != key_bits || cub)
    arg += ", " + std::to_string(o.begin_bit) + ", " + std::to_string(o.end_bit) + ", " +
           (cub ? "gpuk::FloatOrder::Cub" : "gpuk::FloatOrder::Total");
  return arg + ">";
}
KeyOrder direction(bool descending, DType key) {
  KeyOrder o;
  o.descending = descending;
  o.end_bit = static_cast<int>(8 * dtype_size(key));
  return o;
}

// ---- host semantics (mirror kernels_src/include/gpuk/sort.cuh) ------------------------------

template <class K> using BitsOf = std::conditional_t<sizeof(K) == 4, std::uint32_t, std::uint64_t>;

// The order-preserving unsigned image of a key, as gpuk::Sort::bits computes it: IEEE total order
// for floats with every NaN equal and last, or CUB's (every NaN by its bits; after the descending
// flip, the image of -0.0 ascending / +0.0 descending made that of the other zero); signed
// integers with the sign bit flipped; descending flips every bit; then bits [begin_bit, end_bit)
// alone, shifted down.
template <class K> BitsOf<K> key_bits(K k, const KeyOrder& o) {
  using B = BitsOf<K>;
  constexpr int kBits = 8 * sizeof(B);
  constexpr B sign = B{1} << (kBits - 1);
  B b;
  if constexpr (std::is_floating_point_v<K>) {
    std::memcpy(&b, &k, sizeof b);
    if (!o.cub && std::isnan(k)) b = ~B{0};
    else b = (b & sign) ? static_cast<B>(~b) : static_cast<B>(b | sign);
  } else if constexpr (std::is_signed_v<K>) {
    b = static_cast<B>(k) ^ sign;
  } else {
    b = static_cast<B>(k);
  }
  if (o.descending) b = static_cast<B>(~b);
  if constexpr (std::is_floating_point_v<K>) {
    if (o.cub && b == static_cast<B>(sign - 1)) b = sign;
  }
  b = static_cast<B>(b >> o.begin_bit);
  if (o.sort_bits() < kBits) b &= static_cast<B>((B{1} << o.sort_bits()) - 1);
  return b;
}

template <class T> std::string format_value(T v) {
  std::ostringstream out;
  if constexpr (std::is_floating_point_v<T>) out << std::setprecision(std::numeric_limits<T>::max_digits10);
  out << +v;
  return out.str();
}

template <class T> bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }


// The stable permutation that sorts `keys`: perm[i] is the input index of output element i.
template <class K, class I>
std::vector<I> sorted_order(std::span<const K> keys, const KeyOrder& order, bool parallel) {
  struct Item {
    BitsOf<K> bits;
    I index;
  };
  std::vector<Item> items(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) items[i] = {key_bits(keys[i], order), static_cast<I>(i)};
  const auto by_bits = [](const Item& a, const Item& b) { return a.bits < b.bits; };
  if (parallel) __gnu_parallel::stable_sort(items.begin(), items.end(), by_bits);
  else std::stable_sort(items.begin(), items.end(), by_bits);
  std::vector<I> perm(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) perm[i] = items[i].index;
  return perm;
}

// Values a sort_pairs run carries: distinct (an odd multiplier is a bijection), not sorted, so
// that any unstable reordering of equal keys shows in the values.
template <class V> V pair_value(std::uint64_t i) { return static_cast<V>(i * 0x9E3779B97F4A7C15ull); }

struct NoValue {};

template <class K, class V>
class SortWorkload final : public Workload {
  static constexpr bool kHasValues = !std::is_same_v<V, NoValue>;

 public:
  SortWorkload(HostArray keys, Op op, const KeyOrder& order)
      : keys_(std::move(keys)), op_(op), order_(order), n_(static_cast<std::int64_t>(keys_.size())) {
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
    d_keys_out_.fill_bytes(kPoison, stream);
    if constexpr (kHasValues) d_values_out_.fill_bytes(kPoison, stream);
  }

  void download(const Stream& stream) override {
    // Allocated and page-locked once: the download runs at the bus's speed (core's HostArray::pin).
    if (got_keys_.size() != keys_.size()) {
      got_keys_ = HostArray(keys_.dtype(), keys_.size());
      (void)got_keys_.pin();
    }
    d_keys_out_.download(got_keys_.data(), got_keys_.bytes(), stream);
    if constexpr (kHasValues) {
      if (got_values_.size() != keys_.size()) {
        got_values_ = HostArray(dtype_of<V>(), keys_.size());
        (void)got_values_.pin();
      }
      d_values_out_.download(got_values_.data(), got_values_.bytes(), stream);
    }
    stream.synchronize();
  }

  std::vector<CpuTiming> cpu_reference(int repeats) override {
    CpuTiming sequential{"std::stable_sort", {}};
    CpuTiming parallel{"__gnu_parallel::stable_sort, " + std::to_string(cpu_threads()) + " threads", {}};
    // Past 2^26 elements the sequential sort takes tens of seconds a run: the parallel one alone
    // then computes (and times) the reference.
    const bool sequential_too = cpu_threads() == 1 || n_ <= (std::int64_t{1} << 26);
    for (int r = 0; sequential_too && r < std::max(1, repeats); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      compute_reference(false);
      sequential.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::vector<CpuTiming> out;
    if (sequential_too) out.push_back(sequential);
    if (cpu_threads() > 1) {
      for (int r = 0; r < std::max(1, repeats); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        compute_reference(true);
        parallel.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
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
  static constexpr unsigned char kPoison = 0xA5;

  void compute_reference(bool parallel) {
    const auto keys = keys_.as<K>();
    std::vector<std::uint64_t> perm;
    if (n_ <= std::numeric_limits<std::uint32_t>::max()) {
      const auto p = sorted_order<K, std::uint32_t>(keys, order_, parallel);
      perm.assign(p.begin(), p.end());
    } else {
      perm = sorted_order<K, std::uint64_t>(keys, order_, parallel);
    }
    ref_keys_.resize(keys.size());
    for (std::size_t i = 0; i < perm.size(); ++i) ref_keys_[i] = keys[perm[i]];
    if constexpr (kHasValues) {
      ref_values_.resize(keys.size());
      if (op_ == Op::argsort) {
        for (std::size_t i = 0; i < perm.size(); ++i) ref_values_[i] = static_cast<V>(perm[i]);
      } else {
        const auto values = values_.as<V>();
        for (std::size_t i = 0; i < perm.size(); ++i) ref_values_[i] = values[perm[i]];
      }
    }
    reference_ready_ = true;
  }

  // Every element, bit for bit: the keys, then the values (which prove stability).
  Verification compare(const K* keys, const void* values_raw, const std::string& who) const {
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
    const char* what = op_ == Op::argsort ? "indices" : "values";
    if (key_mismatches == 0 && value_mismatches == 0)
      return {true, std::to_string(n_) + " keys" + (kHasValues ? std::string(" and ") + what : std::string()) +
                        " equal the stable CPU sort, element by element"};
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

  HostArray keys_, values_;
  Op op_;
  KeyOrder order_;
  std::int64_t n_;
  DeviceBuffer d_keys_in_, d_keys_out_, d_values_in_, d_values_out_;
  HostArray got_keys_, got_values_;
  std::vector<K> ref_keys_;
  std::vector<std::conditional_t<kHasValues, V, char>> ref_values_;
  bool reference_ready_ = false;
};

template <class K, class V> void sort_keys_on_cpu(HostArray& keys, HostArray* values, const KeyOrder& order) {
  const auto k = keys.as<K>();
  const auto perm = sorted_order<K, std::uint64_t>(std::span<const K>(k.data(), k.size()), order, false);
  std::vector<K> sorted(k.size());
  for (std::size_t i = 0; i < perm.size(); ++i) sorted[i] = k[perm[i]];
  std::copy(sorted.begin(), sorted.end(), k.begin());
  if (values) {
    auto v = values->as<V>();
    std::vector<V> moved(v.size());
    for (std::size_t i = 0; i < perm.size(); ++i) moved[i] = v[perm[i]];
    std::copy(moved.begin(), moved.end(), v.begin());
  }
}

class SortPlugin final : public Sorter {
 public:
  std::string name() const override { return "sort"; }
  std::string description() const override {
    return "stable sort of keys, key-value pairs (sort_pairs) or indices (argsort), ascending or descending; "
           "floats in IEEE total order with NaN last, or in CUB's order; on all of the key's bits or CUB's "
           "begin_bit/end_bit";
  }
  std::vector<std::string> operations() const override { return table_names(kOps); }
  std::vector<DType> dtypes() const override { return all_dtypes(); }
  std::vector<OptionSpec> options() const override {
    return {{"order", OptionSpec::Kind::choice, "ascending", {"ascending", "descending"}, "sort order (both stable)"},
            {"values", OptionSpec::Kind::choice, "uint32", {"uint32", "uint64"},
             "sort_pairs: the values' dtype (argsort's indices are uint32 up to 2^32 elements, then uint64)"},
            {"begin_bit", OptionSpec::Kind::integer, "0", {},
             "the lowest bit of the key's order-preserving bits that counts (CUB's begin_bit)", true},
            {"end_bit", OptionSpec::Kind::integer, "none", {},
             "one past the highest bit that counts (CUB's end_bit; default: the key's width)", true},
            {"float_order", OptionSpec::Kind::choice, "total", {"total", "cub"},
             "total: IEEE total order, -0.0 before +0.0, NaNs equal and last; cub: as cub::DeviceRadixSort, "
             "-0.0 equal to +0.0, NaNs by their sign and bits",
             true}};
  }

  // begin_bit and end_bit within the key: 0 <= begin_bit < end_bit <= its width.
  void check(const Problem& p) const override {
    const int key_bits = static_cast<int>(8 * dtype_size(p.dtype));
    const auto it_begin = p.options.find("begin_bit"), it_end = p.options.find("end_bit");
    const std::string width = " (" + std::string(dtype_name(p.dtype)) + " keys have " + std::to_string(key_bits) + " bits)";
    long long begin = 0, end = key_bits;
    if (it_begin != p.options.end()) begin = std::stoll(it_begin->second);
    if (it_end != p.options.end() && it_end->second != "none") end = std::stoll(it_end->second);
    if (begin < 0 || begin >= key_bits)
      throw ConfigError("begin_bit must be at least 0 and less than " + std::to_string(key_bits) + width + ", not " +
                        std::to_string(begin));
    if (end <= begin || end > key_bits)
      throw ConfigError("end_bit must be greater than begin_bit (" + std::to_string(begin) + ") and at most " +
                        std::to_string(key_bits) + width + ", not " + std::to_string(end));
  }
  std::string default_kernel() const override { return "radix"; }

  std::vector<std::string> template_args(const Problem& problem) const override {
    const Op op = parse_op(problem.operation);
    return {leading_arg(problem.dtype, op,
                        op == Op::sort ? std::nullopt : std::optional<DType>(value_dtype_of(problem, op)),
                        key_order_of(problem.options, problem.dtype))};
  }

  // Every operation and key dtype, both orders, both value dtypes: 6 leading-argument lists per
  // key dtype (not the full product, to keep `gpuk check` and the JIT test quick).
  std::vector<std::vector<std::string>> all_template_args(const KernelFile& file) const override {
    std::vector<std::vector<std::string>> out;
    for (DType dtype : file.dtypes) {
      const KeyOrder up = direction(false, dtype), down = direction(true, dtype);
      // A bit window (and CUB's float order) too: keys descending on bits [3, width - 5).
      KeyOrder window = down;
      window.begin_bit = 3;
      window.end_bit -= 5;
      window.cub = true;
      if (file.supports("sort")) {
        for (const KeyOrder& o : {up, down}) out.push_back({leading_arg(dtype, Op::sort, std::nullopt, o)});
        out.push_back({leading_arg(dtype, Op::sort, std::nullopt, window)});
      }
      if (file.supports("sort_pairs")) {
        out.push_back({leading_arg(dtype, Op::sort_pairs, DType::uint32, up)});
        out.push_back({leading_arg(dtype, Op::sort_pairs, DType::uint64, down)});
      }
      if (file.supports("argsort")) {
        out.push_back({leading_arg(dtype, Op::argsort, DType::uint32, down)});
        out.push_back({leading_arg(dtype, Op::argsort, DType::uint64, up)});
      }
    }
    return out;
  }

  // rank_bucket where it fits: one launch, 2.1x CUB at 4,096 uint32 keys, 6.6x at 8,192, 4.3x at
  // 16,384 (H100, docs/PERFORMANCE.md, "Sort"), with sort_small.yaml's parameters and as many items
  // per thread as n needs; its block holds every key, at most 64 KiB of them. From 2^19 on (n in
  // the shipped file's 2^20 bucket and above): onesweep, measured at 2^20 to 2^28 on the H200
  // (docs/kernels/sort.md, "onesweep"), for 32-bit keys (keys, pairs with 4-byte values, argsort)
  // and 64-bit keys only; float32 argsort above 2^21 loads its indices late (VLOAD 1: 0.96x CUB at
  // 2^26 against 0.78x). Between: the radix sort with the parameters measured best for 32-bit keys
  // (configs/sort.yaml) and pairs (configs/sort_pairs.yaml). 32-bit look-back entries need
  // n < 2^30 (radix) or 2^29 (onesweep). Other cases keep radix's defaults: nothing was measured.
  std::optional<KernelChoice> choose_kernel(const Problem& p) const override {
    const std::uint64_t key_bytes = dtype_size(p.dtype);
    if (p.max_n <= 16384 && p.max_n * key_bytes <= 65536) {
      const std::int64_t items = p.max_n <= 4096 ? 4 : p.max_n <= 8192 ? 8 : 16;
      return KernelChoice{"rank_bucket",
                          {{"BLOCK", 1024}, {"ITEMS", items}, {"BUCKET_BITS", 12}, {"SPLIT", 16}, {"SHARE", 1}},
                          "for n <= 16384 (one launch)"};
    }
    const Op op = parse_op(p.operation);
    if (p.max_n >= (std::uint64_t{1} << 19) && (key_bytes == 4 || op == Op::sort)) {
      const std::int64_t lb32 = p.max_n < (std::uint64_t{1} << 29) ? 1 : 0;
      if (op == Op::sort)
        return KernelChoice{"onesweep",
                            {{"BLOCK", 384}, {"ITEMS", key_bytes == 4 ? 20 : 12}, {"MIN_BLOCKS", 3}, {"LB32", lb32}},
                            "for keys from n = 2^19 (measured best, docs/kernels/sort.md)"};
      if (op == Op::argsort && p.dtype == DType::float32 && p.max_n > (std::uint64_t{1} << 21))
        return KernelChoice{"onesweep",
                            {{"BLOCK", 384}, {"ITEMS", 20}, {"MIN_BLOCKS", 3}, {"VLOAD", 1}, {"LB32", lb32}},
                            "for float32 argsort above n = 2^21 (measured best, docs/kernels/sort.md)"};
      return KernelChoice{"onesweep",
                          {{"BLOCK", 384}, {"ITEMS", 20}, {"MIN_BLOCKS", 2}, {"VLOAD", 0}, {"LB32", lb32}},
                          "for 32-bit keys with values from n = 2^19 (measured best, docs/kernels/sort.md)"};
    }
    if (key_bytes != 4) return std::nullopt;
    const std::int64_t lb32 = p.max_n < (std::uint64_t{1} << 30) ? 1 : 0;
    if (op == Op::sort)
      return KernelChoice{"radix", {{"BLOCK", 256}, {"ITEMS", 16}, {"MIN_BLOCKS", 4}, {"LB32", lb32}},
                          "for 32-bit keys above n = 16384 (configs/sort.yaml's parameters)"};
    return KernelChoice{"radix", {{"BLOCK", 256}, {"ITEMS", 23}, {"MIN_BLOCKS", 2}, {"VLOAD", 0}, {"LB32", lb32}},
                        "for 32-bit keys with values above n = 16384 (configs/sort_pairs.yaml's parameters)"};
  }

  std::unique_ptr<Launcher> make_launcher(const Problem& problem) const override {
    return make_sort_launcher(problem);
  }

  std::unique_ptr<Workload> make_workload(const RunSpec& spec, HostArray input) const override {
    const Op op = parse_op(spec.operation);
    const KeyOrder order = key_order_of(spec.options, spec.dtype);
    const DType value = value_dtype_of(problem_of(spec), op);
    return visit_dtype(input.dtype(), [&](auto zero) -> std::unique_ptr<Workload> {
      using K = decltype(zero);
      if (op == Op::sort) return std::make_unique<SortWorkload<K, NoValue>>(std::move(input), op, order);
      if (value == DType::uint32) return std::make_unique<SortWorkload<K, std::uint32_t>>(std::move(input), op, order);
      return std::make_unique<SortWorkload<K, std::uint64_t>>(std::move(input), op, order);
    });
  }

  // Keys: the input, the CPU reference, the download and CUB's copy; values likewise (argsort's
  // indices for CUB); and while the reference is made, its stable permutation (a key and an
  // index per element, then the index twice).
  std::uint64_t host_bytes(const RunSpec& spec) const override {
    const Op op = parse_op(spec.operation);
    const std::uint64_t key = dtype_size(spec.dtype);
    const std::uint64_t value = op == Op::sort ? 0 : dtype_size(value_dtype_of(problem_of(spec), op));
    return bytes_for(spec.size, 4 * key + 4 * value + (key + 8) + 16);
  }

  void sort_on_cpu(HostArray& keys, HostArray* values, const Options& options) const override {
    if (values && values->size() != keys.size())
      throw Error("sort_on_cpu: " + std::to_string(values->size()) + " values for " + std::to_string(keys.size()) +
                  " keys");
    std::map<std::string, std::string> given = {
        {"order", options.order == Order::descending ? "descending" : "ascending"},
        {"float_order", options.floats == FloatOrder::cub ? "cub" : "total"},
        {"begin_bit", std::to_string(options.begin_bit)}};
    if (options.end_bit != -1) given["end_bit"] = std::to_string(options.end_bit);
    Problem p;
    p.family = "sort";
    p.dtype = keys.dtype();
    p.options = given;
    check(p);
    const KeyOrder key_order = key_order_of(given, keys.dtype());
    visit_dtype(keys.dtype(), [&](auto zero) {
      using K = decltype(zero);
      if (!values) return sort_keys_on_cpu<K, std::uint32_t>(keys, nullptr, key_order);
      visit_dtype(values->dtype(), [&](auto vzero) {
        using V = decltype(vzero);
        sort_keys_on_cpu<K, V>(keys, values, key_order);
      });
    });
  }
};

}  // namespace
}  // namespace gpuk::sort

extern "C" const GpukPluginInfo* gpuk_plugin_info() {
  static const GpukPluginInfo info = {
      GPUK_PLUGIN_ABI_VERSION, "sort", GPUK_VERSION,
      []() -> gpuk::FamilyPlugin* { return new gpuk::sort::SortPlugin(); },
      [](gpuk::FamilyPlugin* p) { delete p; }};
  return &info;
}
