// The three algorithm families' interfaces. Each family plugin implements one of them; core's
// runner sees only FamilyPlugin, while tools and tests can ask a family for its semantics.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "gpuk/data.hpp"
#include "gpuk/plugin.hpp"

namespace gpuk {

// --- Reducer: max, min, sum, argmax, argmin, optionally of |x| -------------------------------
enum class ReduceOp { max = 0, min = 1, sum = 2, argmax = 3, argmin = 4 };

struct ReduceAnswer {
  // The reduced value: max/min/argmax/argmin give the element (|x| when abs), sum the sum in its
  // 64-bit accumulator. Exactly one of these is meaningful, by the input's dtype.
  double float_value = 0;
  std::int64_t int_value = 0;
  std::uint64_t uint_value = 0;
  std::optional<std::int64_t> index;  // argmax / argmin: the lowest index of the best value
};

class Reducer : public FamilyPlugin {
 public:
  // The CPU reference: ties go to the lowest index; a NaN wins and the first NaN's index counts.
  virtual ReduceAnswer reduce_on_cpu(const HostArray& input, ReduceOp op, bool abs) const = 0;
};

// --- Searcher: find a value in an unsorted array (implemented by a later plugin) ------------
enum class SearchMode { find, any, count };

class Searcher : public FamilyPlugin {
 public:
  // find: the lowest matching index or -1; any: some matching index or -1; count: matches.
  virtual std::int64_t search_on_cpu(const HostArray& input, double value, SearchMode mode) const = 0;
};

// --- Sorter: keys and key-value pairs (implemented by a later plugin) -----------------------
enum class SortOrder { ascending, descending };

class Sorter : public FamilyPlugin {
 public:
  // Stable sort of keys in IEEE total order for floats; values follow their keys when given.
  virtual void sort_on_cpu(HostArray& keys, HostArray* values, SortOrder order) const = 0;
};

}  // namespace gpuk
