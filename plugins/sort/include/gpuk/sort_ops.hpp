// The Sorter family's operations: one table, read by the plugin (configs, kernels' leading
// template argument, arrays, CPU reference) and the typed calls of gpuk/sort.hpp. The device
// policy's kind is named here as text ("gpuk::SortKind::Pairs"), so no integer has to match the
// device header's. Plain C++17.
#pragma once
#include <string_view>

#include "gpuk/op_table.hpp"

namespace gpuk::sort {

enum class Op { sort, sort_pairs, argsort };
enum class Order { ascending, descending };

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
};

inline constexpr const OpInfo& info(Op op) { return table_entry(kOps, op); }

}  // namespace gpuk::sort
