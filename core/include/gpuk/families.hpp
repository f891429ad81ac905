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

// --- Searcher: find, any or count a value in an unsorted array ------------------------------
enum class SearchMode { find, any, count };

// The value searched for, exact in the input's own dtype (int64 values above 2^53 included).
struct SearchValue {
  DType dtype = DType::int32;
  std::int64_t int_value = 0;    // int32, int64
  std::uint64_t uint_value = 0;  // uint32, uint64
  double float_value = 0;        // float32 (exact in double), float64

  template <class T> static SearchValue of(T v) {
    SearchValue s;
    s.dtype = dtype_of<T>();
    if constexpr (std::is_floating_point_v<T>) s.float_value = static_cast<double>(v);
    else if constexpr (std::is_signed_v<T>) s.int_value = static_cast<std::int64_t>(v);
    else s.uint_value = static_cast<std::uint64_t>(v);
    return s;
  }
  template <class T> T as() const {
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(float_value);
    else if constexpr (std::is_signed_v<T>) return static_cast<T>(int_value);
    else return static_cast<T>(uint_value);
  }
};

class Searcher : public FamilyPlugin {
 public:
  // find: the lowest matching index or -1; any: some matching index or -1; count: matches.
  // Elements match with ==: a NaN matches nothing, -0.0 matches +0.0. value.dtype must be input's.
  virtual std::int64_t search_on_cpu(const HostArray& input, const SearchValue& value, SearchMode mode) const = 0;
  // The value a run searches for, from the config: `value`, or the element that `value_at` /
  // `value_index` picks in `input` (a random position is drawn from data.seed), or one that is
  // not in `input` (value_at: absent). Throws ConfigError naming the config.
  virtual SearchValue target(const RunSpec& spec, const HostArray& input) const = 0;
};

// --- Sorter: keys, key-value pairs and argsort (plugins/sort) --------------------------------
enum class SortOrder { ascending, descending };

class Sorter : public FamilyPlugin {
 public:
  // Stable sort of keys, in place; values (any dtype, as many as keys) follow their keys when
  // given. Floats in IEEE total order (-0.0 before +0.0) with every NaN, of either sign, equal to
  // every other and after +inf: last ascending, first descending, in input order. Descending is
  // stable too (equal keys keep their input order). Throws gpuk::Error on a size mismatch.
  virtual void sort_on_cpu(HostArray& keys, HostArray* values, SortOrder order) const = 0;
};

}  // namespace gpuk
