// The Sorter family: sort keys, sort key-value pairs, argsort; ascending or descending; stable.
// Kernel contract: docs/kernels/sort.md and kernels_src/include/gpuk/sort.cuh.
#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "device/host_memory.hpp"
#include "gpuk/error.hpp"
#include "host_order.hpp"
#include "run/prepare.hpp"
#include "sort_launcher.hpp"
#include "sort_workload.hpp"
#include "sorter.hpp"
#include "host_topk.hpp"
#include "segmented_launcher.hpp"
#include "segmented_workload.hpp"
#include "topk_launcher.hpp"
#include "topk_workload.hpp"
#include "util/host.hpp"

namespace gpuk::sort {
namespace {

// gpuk::Sort<K, V, DESC, KIND> for the whole key in total order; a bit window or CUB's float
// order adds <..., BEGIN_BIT, END_BIT, ORDER> (kernels_src/include/gpuk/sort.cuh).
std::string leading_arg(DType key, Op op, std::optional<DType> value, const KeyOrder& o) {
  std::string arg = "gpuk::Sort<" + std::string(dtype_cuda_name(key)) + ", " +
                    (op == Op::sort || op == Op::segmented_sort ? std::string("gpuk::NoValue") : std::string(dtype_cuda_name(*value))) + ", " +
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

class SortPlugin final : public Sorter {
 public:
  std::string name() const override { return "sort"; }
  std::string description() const override {
    return "stable sort of keys, key-value pairs (sort_pairs) or indices (argsort), ascending or descending; "
           "floats in IEEE total order with NaN last, or in CUB's order; on all of the key's bits or CUB's "
           "begin_bit/end_bit; topk: the first k keys of the sort of each row, with their indices; segmented_sort "
           "(and _pairs): each segment sorted on its own";
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
             "-0.0 equal to +0.0, NaNs by their sign and bits (integer keys have the one order either way)",
             true},
            {"k", OptionSpec::Kind::integer, "1", {},
             "topk: how many keys of each row (the first k of its sort: order descending takes the k largest)", true},
            {"rows", OptionSpec::Kind::integer, "1", {}, "topk: the rows of equal length the n keys form", true},
            {"sorted", OptionSpec::Kind::boolean, "true", {},
             "topk: the k in the sort's order (true, k <= 4096) or in input order (false)", true},
            {"segments", OptionSpec::Kind::integer, "1", {}, "segmented_sort: how many segments the n keys form", true},
            {"segment_lengths", OptionSpec::Kind::choice, "equal", {"equal", "power_law"},
             "segmented_sort: equal lengths (n / segments, rounded), or heavy-tailed ones (empty segments among "
             "them) from a fixed seed",
             true}};
  }

  // begin_bit and end_bit within the key: 0 <= begin_bit < end_bit <= its width.
  void check(const Problem& p) const override {
    if (p.operation == "topk") check_topk_options(topk_spec_of(p.options), p.n);
    else if (has_topk_options(p.options))
      throw ConfigError("k, rows and sorted are options of topk, not of " + p.operation);
    if (p.operation == info(Op::segmented_sort).name || p.operation == info(Op::segmented_sort_pairs).name) {
      check_segments(segment_spec_of(p.options), p.n);
      if (p.options.count("begin_bit") || p.options.count("end_bit"))
        throw ConfigError("segmented_sort sorts by the whole key: begin_bit and end_bit are options of sort");
    } else if (has_segment_options(p.options)) {
      throw ConfigError("segments and segment_lengths are options of segmented_sort, not of " + p.operation);
    }
    const int key_bits = static_cast<int>(8 * dtype_size(p.dtype));
    const auto it_begin = p.options.find("begin_bit"), it_end = p.options.find("end_bit");
    const std::string width = " (" + std::string(dtype_name(p.dtype)) + " keys have " + std::to_string(key_bits) + " bits)";
    long long begin = 0, end = key_bits;
    if (it_begin != p.options.end()) begin = std::stoll(it_begin->second);
    if (it_end != p.options.end() && it_end->second != "none") end = std::stoll(it_end->second);
    // `values` is sort_pairs' (and segmented_sort_pairs') values' dtype: argsort's indices take
    // theirs from n, sort has none.
    if (const auto v = p.options.find("values");
        v != p.options.end() && v->second != "uint32" && p.operation != "sort_pairs" &&
        p.operation != "segmented_sort_pairs")
      throw ConfigError("values: " + v->second + " is the dtype of sort_pairs' values; " + p.operation +
                        (p.operation == "argsort" ? "'s indices are uint32 up to 2^32 elements, then uint64: remove it"
                                                  : " has no values: remove it"));
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
                        op == Op::sort || op == Op::segmented_sort ? std::nullopt
                                                                   : std::optional<DType>(value_dtype_of(problem, op)),
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
      if (file.supports("segmented_sort")) {
        for (const KeyOrder& o : {up, down}) out.push_back({leading_arg(dtype, Op::segmented_sort, std::nullopt, o)});
        KeyOrder cub = down;
        cub.cub = true;
        out.push_back({leading_arg(dtype, Op::segmented_sort, std::nullopt, cub)});
      }
      if (file.supports("segmented_sort_pairs")) {
        out.push_back({leading_arg(dtype, Op::segmented_sort_pairs, DType::uint32, up)});
        out.push_back({leading_arg(dtype, Op::segmented_sort_pairs, DType::uint64, down)});
      }
      if (file.supports("topk")) {
        for (const KeyOrder& o : {up, down}) out.push_back({leading_arg(dtype, Op::topk, DType::int64, o)});
        out.push_back({leading_arg(dtype, Op::topk, DType::int64, window)});
      }
    }
    return out;
  }

  // rank_bucket where it fits: one launch, 2.1x CUB at 4,096 uint32 keys, 6.6x at 8,192, 4.3x at
  // 16,384 (H100, docs/PERFORMANCE.md, "Sort"), with sort_small.yaml's parameters and as many items
  // per thread as n needs; its block holds every key, at most 64 KiB of them. From 2^19 on (n in
  // the shipped file's 2^20 bucket and above): onesweep, measured at 2^20 to 2^28 on the H200
  // (docs/kernels/sort.md, "onesweep"), for 32-bit keys (keys, pairs with 4-byte values, argsort)
  // and 64-bit keys only; float32 argsort copies its indices to shared memory at their rank, 3
  // blocks per SM (VLOAD 2: on the H100 0.892x CUB at 2^26 against VLOAD 1's 0.862x, 0.945x
  // against 0.915x at 2^24, 1.185x against VLOAD 0's 1.131x at 2^20). Between: the radix sort with the parameters measured best for 32-bit keys
  // (configs/sort.yaml) and pairs (configs/sort_pairs.yaml). 32-bit look-back entries need
  // n < 2^30 (radix) or 2^29 (onesweep). Other cases keep radix's defaults: nothing was measured.
  std::optional<KernelChoice> choose_kernel(const Problem& p) const override {
    // topk: a batch of at least kTopKBlockMinRows rows of at most kTopKBlockRowKeys keys takes
    // topk_rows (a block owns a row held in its shared memory: one launch, no scratch, no
    // global atomics; topk_radix spends a launch per digit pass and two more on each batch, which
    // on an H200 kept 1024 rows of 4096 float32 at 0.070-0.088 ms against CUB's 0.029-0.045).
    // 64 rows: about half the SMs of an H100 or H200 get a row (the Problem does not know the SM
    // count); fewer rows leave the GPU idle, where topk_radix splits each row over many blocks.
    // The row limit is topk_rows's default ROW_KEYS (the row in shared memory), on max_n / rows:
    // a library Operation serves its whole size bucket (topk_rows would read longer rows from
    // global memory every pass, correct but not what it is for). Measured on an H200: docs/
    // PERFORMANCE.md, "top-k" (configs/tune_topk_batch.yaml is the space). Otherwise the radix select; 11-bit digits for
    // rows of 2^18 keys or more (3 reads of 32-bit keys instead of 4), 8-bit below, where a row's
    // histogram (2^11 words cleared and scanned each pass) would cost as much as its keys. Not yet
    // measured (configs/tune_topk.yaml).
    if (p.operation == "topk") {
      const TopKSpec s = topk_spec_of(p.options);
      // ROW_KEYS: the shared memory a block holds its row in, and so how many blocks share an SM;
      // 4096 where this call's rows fit it (16 KiB of float32), else the limit. A later call of the
      // bucket with longer rows reads them from global memory. BLOCK 128, ITEMS 8, plain atomics
      // (MATCH 0): the winner of every k (1 to 4096) of 1024 rows of 4096 float32 on an H200
      // (36 variants each; docs/PERFORMANCE.md, "top-k"), and again of k = 256 to 4096 with the
      // vector first read (float32 and int32; ITEMS 4 led k = 8 and 32 of float32 by about 10%:
      // one choice for every k kept; docs/PERFORMANCE.md, "Top-k's first read by vectors").
      if (s.rows >= kTopKBlockMinRows && p.max_n / s.rows <= kTopKBlockRowKeys) {
        const std::int64_t row_keys = p.n > 0 && p.n / s.rows <= 4096 ? 4096 : static_cast<std::int64_t>(kTopKBlockRowKeys);
        return KernelChoice{"topk_rows", {{"ROW_KEYS", row_keys}, {"BLOCK", 128}, {"ITEMS", 8}, {"MATCH", 0}},
                            "topk: one block per row in shared memory, for " + std::to_string(kTopKBlockMinRows) +
                                " rows or more of at most " + std::to_string(kTopKBlockRowKeys) + " keys"};
      }
      const bool long_rows = p.max_n / s.rows >= (std::uint64_t{1} << 18);
      return KernelChoice{"topk_radix", {{"RADIX_BITS", long_rows ? 11 : 8}},
                          long_rows ? "topk: the radix select, 11-bit digits for rows of 2^18 keys or more"
                                    : "topk: the radix select, 8-bit digits for rows under 2^18 keys"};
    }
    if (is_segmented(parse_op(p.operation))) {
      // By the mean segment length the prepared n and segment count give (docs/PERFORMANCE.md,
      // "Segmented sort merged across the GPU" and "Long segments by digit passes": winners of
      // their float32 cells on an H200): segments of 2^17 keys or more by digit passes over
      // 8192-key tiles (LONG 1: 2^26 keys in 64 segments 2.97 ms, merged 5.65); from 2^15, 4-byte
      // keys merge from 8192-key tiles (2^24 keys in 512 segments: 0.60 ms; digit passes 0.70,
      // 4096-key tiles 0.94), 8-byte keys from 4096-key ones (at 8192 they spill: not measured);
      // segments of a few thousand keys sort fastest on the 4096-key tile, shorter and mixed ones
      // on a 1024-key tile.
      const std::uint64_t mean = p.max_n / std::max<std::uint64_t>(1, segment_spec_of(p.options).segments);
      if (mean >= (std::uint64_t{1} << 17))
        return KernelChoice{"segmented", {{"BLOCK", 512}, {"ITEMS", 16}, {"MIN_BLOCKS", 2}, {"LONG", 1}, {"WARP", 0}},
                            "segmented sort: segments of 2^17 keys or more on average (digit passes over 8192-key tiles)"};
      if (mean >= (std::uint64_t{1} << 15) && dtype_size(p.dtype) == 4)
        return KernelChoice{"segmented", {{"BLOCK", 512}, {"ITEMS", 16}, {"MIN_BLOCKS", 2}, {"WARP", 0}},
                            "segmented sort: segments of 2^15 to 2^17 keys on average, 4-byte keys (8192-key tiles)"};
      if (mean >= 2048)
        return KernelChoice{"segmented", {{"BLOCK", 256}, {"ITEMS", 16}, {"MIN_BLOCKS", 2}, {"WARP", 0}},
                            "segmented sort: segments of 2048 keys or more on average (4096-key tiles)"};
      return KernelChoice{"segmented", {{"BLOCK", 128}, {"ITEMS", 8}, {"MIN_BLOCKS", 2}},
                          "segmented sort: segments under 2048 keys on average (1024-key tiles)"};
    }
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
      if (op == Op::argsort && p.dtype == DType::float32)
        return KernelChoice{"onesweep",
                            {{"BLOCK", 384}, {"ITEMS", 20}, {"MIN_BLOCKS", 3}, {"VLOAD", 2}, {"LB32", lb32}},
                            "for float32 argsort from n = 2^19 (measured best on the H100, docs/kernels/sort.md)"};
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
    if (parse_op(problem.operation) == Op::topk) return make_topk_launcher(problem);
    if (is_segmented(parse_op(problem.operation))) return make_segmented_launcher(problem);
    return make_sort_launcher(problem);
  }

  std::unique_ptr<Workload> make_workload(const Problem& problem, InputView input) const override {
    const Op op = parse_op(problem.operation);
    if (op == Op::topk)
      return make_topk_workload(input, key_order_of(problem.options, problem.dtype), topk_spec_of(problem.options));
    if (is_segmented(op))
      return make_segmented_workload(input, op, key_order_of(problem.options, problem.dtype),
                                     op == Op::segmented_sort_pairs ? value_dtype_of(problem, op) : DType::uint32,
                                     segment_spec_of(problem.options));
    return make_sort_workload(input, op, key_order_of(problem.options, problem.dtype), value_dtype_of(problem, op));
  }

  // Keys: the input, the CPU reference, the download and CUB's copy; values likewise (argsort's
  // indices for CUB); and while the reference is made, the radix sort's spare keys and values.
  std::uint64_t host_bytes(const Problem& problem) const override {
    const Op op = parse_op(problem.operation);
    const std::uint64_t key = dtype_size(problem.dtype);
    if (op == Op::topk) {  // the keys, the reference's bits of a row and their copy, the answers
      const TopKSpec s = topk_spec_of(problem.options);
      return bytes_for(problem.n, 3 * key) + bytes_for(s.rows * s.k, 2 * (key + 8));
    }
    if (is_segmented(op)) {  // keys in, out and the reference; values likewise; the offsets
      const std::uint64_t value = op == Op::segmented_sort_pairs ? dtype_size(value_dtype_of(problem, op)) : 0;
      return bytes_for(problem.n, 3 * key + 3 * value + 4) + bytes_for(segment_spec_of(problem.options).segments + 1, 8);
    }
    const std::uint64_t value = op == Op::sort ? 0 : dtype_size(value_dtype_of(problem, op));
    return bytes_for(problem.n, 5 * key + 5 * value);
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
    sort_on_host(keys, values, key_order_of(given, keys.dtype()));
  }

  TopKAnswer topk_on_cpu(const HostArray& keys, std::uint64_t k, const TopKOptions& options) const override {
    const TopKSpec spec{k, options.rows, options.sorted};
    if (k == 0) throw ConfigError("k must be at least 1, not 0");
    if (options.rows == 0) throw ConfigError("rows must be at least 1, not 0");
    check_topk(spec, keys.size());
    std::map<std::string, std::string> given = {{"order", options.largest ? "descending" : "ascending"},
                                                {"float_order", options.floats == FloatOrder::cub ? "cub" : "total"}};
    TopKAnswer a{HostArray(keys.dtype(), options.rows * k), HostArray(DType::int64, options.rows * k)};
    visit_dtype(keys.dtype(), [&](auto zero) {
      using K = decltype(zero);
      topk_on_host<K>(keys.as<K>(), options.rows, k, key_order_of(given, keys.dtype()), options.sorted,
                      a.values.as<K>().data(), a.indices.as<std::int64_t>().data(),
                      static_cast<unsigned>(cpu_threads()));
    });
    return a;
  }
};

}  // namespace
}  // namespace gpuk::sort

GPUK_PLUGIN("sort", gpuk::sort::SortPlugin)
