// The Reducer family's operations: one table, read by the plugin (configs, kernels' leading
// template argument, CPU reference), its CUB baseline and the typed calls of gpuk/reduce.hpp.
// The device policy's enumerator is named here as text ("gpuk::ReduceOp::ArgMax"), so no
// integer has to match the device header's. Plain C++17: nvcc compiles the baseline with it.
// gpuk/op_table.hpp reads it (table_find, table_names, ...).
#pragma once
#include <string_view>

#include "gpuk/op_table.hpp"

namespace gpuk::reduce {

enum class Op { max, min, sum, argmax, argmin, argminmax };

struct OpInfo {
  Op op;
  const char* name;    // in configs and OperationSpec: "argmax"
  const char* device;  // the policy's enumerator in kernels_src/include/gpuk/reduce.cuh
  const char* cub;     // the library baseline's call (without abs)
  bool largest;        // the largest value wins (max, argmax)
  bool index;          // the answer carries the index of the value (argmax, argmin, argminmax)
  bool pair;           // the answer is two candidates, the smallest then the largest (argminmax)
};

inline constexpr OpInfo kOps[] = {
    {Op::max, "max", "gpuk::ReduceOp::Max", "cub::DeviceReduce::Max", true, false, false},
    {Op::min, "min", "gpuk::ReduceOp::Min", "cub::DeviceReduce::Min", false, false, false},
    {Op::sum, "sum", "gpuk::ReduceOp::Sum", "cub::DeviceReduce::Sum", false, false, false},
    {Op::argmax, "argmax", "gpuk::ReduceOp::ArgMax", "cub::DeviceReduce::ArgMax", true, true, false},
    {Op::argmin, "argmin", "gpuk::ReduceOp::ArgMin", "cub::DeviceReduce::ArgMin", false, true, false},
    // One pass for both answers; CUB 3.5 has no ArgMinMax, so its baseline is ArgMin then ArgMax.
    {Op::argminmax, "argminmax", "gpuk::ReduceOp::ArgMinMax", "cub::DeviceReduce::ArgMin + ArgMax", false, true,
     true},
};

inline constexpr const OpInfo& info(Op op) { return table_entry(kOps, op); }

}  // namespace gpuk::reduce
