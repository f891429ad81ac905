// The Searcher family's operations: one table, read by the plugin (configs, kernels' leading
// template argument, CPU reference), its Thrust baseline and the typed calls of gpuk/search.hpp.
// The device policy's enumerator is named here as text ("gpuk::SearchOp::Find"), so no integer
// has to match the device header's. Plain C++17: nvcc compiles the baseline with it.
#pragma once
#include <string_view>

#include "gpuk/op_table.hpp"

namespace gpuk::search {

enum class Mode { find, any, count };

struct ModeInfo {
  Mode op;
  const char* name;    // in configs and OperationSpec: "find"
  const char* device;  // the policy's enumerator in kernels_src/include/gpuk/search.cuh
  const char* thrust;  // the library baseline's call
};

inline constexpr ModeInfo kModes[] = {
    {Mode::find, "find", "gpuk::SearchOp::Find", "thrust::find"},
    {Mode::any, "any", "gpuk::SearchOp::Any", "thrust::find"},  // Thrust has no "any index" search
    {Mode::count, "count", "gpuk::SearchOp::Count", "thrust::count"},
};

inline constexpr const ModeInfo& info(Mode mode) { return table_entry(kModes, mode); }

}  // namespace gpuk::search
