// The Sorter family's operations: one table, read by the plugin (configs, kernels' leading
// template argument, arrays, CPU reference) and the typed calls of gpuk/sort.hpp. The device
// policy's kind is named here as text ("gpuk::SortKind::Pairs"), so no integer has to match the
// device header's. Plain C++17.
#pragma once
#include <cstdint>
#include <string_view>

#include "gpuk/op_table.hpp"

namespace gpuk::sort {

enum class Op { sort, sort_pairs, argsort, topk, segmented_sort, segmented_sort_pairs };
enum class Order { ascending, descending };

// How floats order (docs/api.md, "Sort orders"). total (the default): IEEE total order,
// -0.0 before +0.0, every NaN equal to every other and after +inf. cub: as cub::DeviceRadixSort,
// -0.0 equal to +0.0 (stable: in input order), NaNs ordered by their bits (a NaN with the sign
// bit set before -inf, one without after +inf). Integers order the same either way.
enum class FloatOrder { total, cub };

// A sort's options: the order, CUB's begin_bit and end_bit (only bits [begin_bit, end_bit) of the
// key's order-preserving bits count, as in cub::DeviceRadixSort; end_bit -1: every bit), and the
// float order. An Order converts to Options, so `..., stream, Order::descending)` still reads.
struct Options {
  Order order = Order::ascending;
  int begin_bit = 0;
  int end_bit = -1;
  FloatOrder floats = FloatOrder::total;

  constexpr Options() = default;
  constexpr Options(Order o) : order(o) {}  // NOLINT: implicit on purpose
  constexpr Options(Order o, int begin, int end, FloatOrder f = FloatOrder::total)
      : order(o), begin_bit(begin), end_bit(end), floats(f) {}
};

struct OpInfo {
  Op op;
  const char* name;    // in configs and OperationSpec: "sort_pairs"
  const char* device;  // the policy's kind in kernels_src/include/gpuk/sort.cuh
  bool values_in;      // the caller passes values (sort_pairs)
  bool values_out;     // values come out: the caller's (sort_pairs) or the keys' indices (argsort)
};

inline constexpr OpInfo kOps[] = {
    {Op::sort, "sort", "gpuk::SortKind::Keys", false, false},
    {Op::sort_pairs, "sort_pairs", "gpuk::SortKind::Pairs", true, true},
    {Op::argsort, "argsort", "gpuk::SortKind::Index", false, true},
    {Op::topk, "topk", "gpuk::SortKind::TopK", false, true},
    // Each segment [offsets[s], offsets[s + 1]) sorted stably on its own (docs/kernels/sort.md).
    {Op::segmented_sort, "segmented_sort", "gpuk::SortKind::Keys", false, false},
    {Op::segmented_sort_pairs, "segmented_sort_pairs", "gpuk::SortKind::Pairs", true, true},
};

// Top-k (docs/api.md, "Top-k"): of each of `rows` rows of equal length, the first k keys of the
// row's stable sort, with their indices in the row (int64): largest, the k largest keys (the
// descending sort's first k), else the k smallest; ties by the lower index; floats in the order
// of `floats` (total: every NaN above +inf, so the largest takes NaNs first). sorted: the k in
// that order; else in input order. Sorted output takes k <= kTopKSortedMax (the k of a row are
// sorted in one block's shared memory: kernels_src/sort/topk_radix.cu's topk_sort).
inline constexpr std::uint64_t kTopKSortedMax = 4096;
struct TopKOptions {
  bool largest = true;
  bool sorted = true;
  std::uint64_t rows = 1;
  FloatOrder floats = FloatOrder::total;
};

inline constexpr const OpInfo& info(Op op) { return table_entry(kOps, op); }

}  // namespace gpuk::sort
