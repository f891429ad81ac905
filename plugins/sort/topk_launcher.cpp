// The sort family's top-k Launcher (docs/kernels/sort.md, "Top-k").
#include "topk_launcher.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuk/error.hpp"

namespace gpuk::sort {

namespace {
std::uint64_t positive(const std::map<std::string, std::string>& options, const char* name) {
  const auto it = options.find(name);
  if (it == options.end()) return 1;
  long long v = 0;
  try {
    v = std::stoll(it->second);
  } catch (const std::exception&) {
    throw ConfigError(std::string(name) + " must be a whole number, not " + it->second);
  }
  if (v < 1) throw ConfigError(std::string(name) + " must be at least 1, not " + it->second);
  return static_cast<std::uint64_t>(v);
}
}  // namespace

TopKSpec topk_spec_of(const std::map<std::string, std::string>& options) {
  TopKSpec s;
  s.k = positive(options, "k");
  s.rows = positive(options, "rows");
  const auto it = options.find("sorted");
  s.sorted = it == options.end() || it->second == "true";
  return s;
}

bool has_topk_options(const std::map<std::string, std::string>& options) {
  return options.count("k") || options.count("rows") || options.count("sorted");
}

void check_topk_options(const TopKSpec& s, std::uint64_t n) {
  if (n % s.rows != 0)
    throw ConfigError("rows (" + std::to_string(s.rows) + ") must divide n (" + std::to_string(n) +
                      "): a batch's rows have equal lengths");
  if (s.sorted && s.k > kTopKSortedMax)
    throw ConfigError("sorted topk takes k <= " + std::to_string(kTopKSortedMax) + ", not " + std::to_string(s.k) +
                      " (each row's k are sorted in one block's shared memory): use sorted: false, or sort or "
                      "argsort the whole row");
}

void check_topk(const TopKSpec& s, std::uint64_t n) {
  check_topk_options(s, n);
  const std::uint64_t row_len = n / s.rows;
  if (s.k > row_len)
    throw ConfigError("k (" + std::to_string(s.k) + ") must be at most the row's length, " + std::to_string(row_len) +
                      (s.rows > 1 ? " (n / rows)" : " (n)"));
  if (row_len >= 0xffffffffull)
    throw ConfigError("topk takes rows of fewer than 2^32 - 1 keys, not " + std::to_string(row_len) +
                      ": split the keys into more rows");
}

namespace {

// The host mirror of gpuk::TopKArgs<S> (topk.cuh): the same fields, the same layout (88 bytes).
struct TopKArgs {
  CUdeviceptr keys_in, values_out, indices_out, scratch;
  std::int64_t n, rows, row_len, k, row_words;
  std::int32_t pass, passes, sorted, unused;
};
static_assert(sizeof(TopKArgs) == 88);

// Arrays: keys_in (n keys), values_out and indices_out (rows * k keys and int64 indices).
// Scratch: the metadata's `scratch` words for each row (zeroed once; the kernels leave them so).
// Launches: each planned launch `repeat` times (the digit passes: pass 0 is the most significant
// digit), all with the same arguments but the pass.
class TopKLauncher final : public Launcher {
 public:
  explicit TopKLauncher(const Problem& p) : keys_(p.dtype), n_(p.n), spec_(topk_spec_of(p.options)) {}

  std::vector<ArraySlot> arrays() const override {
    const std::uint64_t out = spec_.rows * spec_.k;
    return {{"keys_in", false, std::string(dtype_name(keys_)), n_ * dtype_size(keys_), false},
            {"values_out", true, std::string(dtype_name(keys_)), out * dtype_size(keys_), false},
            {"indices_out", true, "int64", out * 8, false}};
  }

  std::uint64_t scratch_bytes(const LaunchPlan& plan) const override {
    return spec_.rows * static_cast<std::uint64_t>(row_words(plan)) * 4;
  }

  void init_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) const override {
    GPUK_CU(driver().cuMemsetD8Async(scratch, 0, bytes, stream));
  }

  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    try {
      check_topk(spec_, call.n);
    } catch (const ConfigError& e) {
      throw ConfigError(target.where + ": " + e.what());
    }
    const auto& launches = target.plan.launches;
    // The first three launches split the rows by their grid: it must be one grid.
    for (std::size_t i = 1; i < launches.size() && i < 3; ++i)
      if (launches[i].grid != launches[0].grid)
        throw Error(target.where + ": topk's histogram, count and scatter launches must have one grid (" +
                    std::to_string(launches[0].grid) + " and " + std::to_string(launches[i].grid) + ")");
    const std::uint64_t key_bytes = call.n * dtype_size(keys_), out = spec_.rows * spec_.k;
    const CUdeviceptr keys = call.arrays[0], values = call.arrays[1], indices = call.arrays[2];
    if (ranges_overlap(keys, key_bytes, values, out * dtype_size(keys_)) ||
        ranges_overlap(keys, key_bytes, indices, out * 8) ||
        ranges_overlap(values, out * dtype_size(keys_), indices, out * 8))
      throw ConfigError(target.where + ": topk's keys_in, values_out and indices_out must not overlap");
    if (call.scratch_bytes < scratch_bytes(target.plan))
      throw Error(target.where + ": topk needs " + std::to_string(scratch_bytes(target.plan)) +
                  " bytes of scratch, got " + std::to_string(call.scratch_bytes));
    TopKArgs a{keys,
               values,
               indices,
               call.scratch,
               static_cast<std::int64_t>(call.n),
               static_cast<std::int64_t>(spec_.rows),
               static_cast<std::int64_t>(call.n / spec_.rows),
               static_cast<std::int64_t>(spec_.k),
               row_words(target.plan),
               0,
               1,
               spec_.sorted ? 1 : 0,
               0};
    // A launch whose entry begins with topk_sort orders each row's k: none for unsorted output,
    // nor for k = 1 (one key is in order). One whose entry begins with topk_copy copies each row
    // (k >= the row's length): where a file has one, it runs instead of the file's other launches
    // (but the sort) for such k, and never otherwise.
    const auto starts = [&](std::size_t i, const char* prefix) {
      return launches[i].name_expression.rfind(prefix, 0) == 0;
    };
    bool has_copy = false;
    for (std::size_t i = 0; i < launches.size(); ++i) has_copy = has_copy || starts(i, "topk_copy");
    const bool copy = a.k >= a.row_len;
    for (std::size_t i = 0; i < launches.size(); ++i) {
      if (starts(i, "topk_sort")) {
        if (!spec_.sorted || spec_.k == 1) continue;
      } else if (has_copy && starts(i, "topk_copy") != copy) {
        continue;
      }
      a.passes = static_cast<std::int32_t>(launches[i].repeat);
      for (std::uint32_t pass = 0; pass < launches[i].repeat; ++pass) {
        a.pass = static_cast<std::int32_t>(pass);
        void* args[] = {&a};
        launch_kernel(target.functions[i], launches[i], args, target.stream, target.where);
      }
    }
  }

 private:
  // A row's words, even so that every row's TopKRow (a u64 first) is 8-byte aligned.
  static std::int64_t row_words(const LaunchPlan& plan) { return (std::max<std::int64_t>(8, plan.scratch_slots) + 1) / 2 * 2; }

  DType keys_;
  std::uint64_t n_;
  TopKSpec spec_;
};

}  // namespace

std::unique_ptr<Launcher> make_topk_launcher(const Problem& problem) {
  return std::make_unique<TopKLauncher>(problem);
}

}  // namespace gpuk::sort
