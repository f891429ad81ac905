// The sort family's top-k (docs/kernels/sort.md, "Top-k"): its options as a problem gives them,
// the checks of k and rows against n, and its Launcher.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "sort_launcher.hpp"

namespace gpuk::sort {

// The batches the family's choice gives to topk_rows.cu (sort_plugin.cpp, choose_kernel): at
// least this many rows, of at most this many keys (topk_rows's default ROW_KEYS, the keys of a
// row its shared memory holds; keep them in step).
inline constexpr std::uint64_t kTopKBlockMinRows = 64;
inline constexpr std::uint64_t kTopKBlockRowKeys = 8192;

// topk's options (k, rows, sorted: left out of a problem's options while at their defaults).
struct TopKSpec {
  std::uint64_t k = 1;
  std::uint64_t rows = 1;
  bool sorted = true;
};
TopKSpec topk_spec_of(const std::map<std::string, std::string>& options);

// What a problem's check can say before the data (a prepared handle checks its spec with n = rows,
// its smallest size): rows divides n, and sorted output takes k <= kTopKSortedMax. Throws
// ConfigError naming the option.
void check_topk_options(const TopKSpec& spec, std::uint64_t n);
// All of it, for n keys (a run, a launch): the above, and k <= n / rows < 2^32 - 1.
void check_topk(const TopKSpec& spec, std::uint64_t n);

// Whether a problem's options name one of topk's (for the other operations, which refuse them).
bool has_topk_options(const std::map<std::string, std::string>& options);

std::unique_ptr<Launcher> make_topk_launcher(const Problem& problem);

}  // namespace gpuk::sort
