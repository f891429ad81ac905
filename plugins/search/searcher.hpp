// The Searcher family's CPU semantics, what its plugin implements: the interface tests reach on the
// loaded plugin. Beside the plugin, not installed: applications use gpuk/search.hpp.
#pragma once
#include <cstdint>

#include "gpuk/search.hpp"
#include "plugin/plugin.hpp"

namespace gpuk::search {

class Searcher : public FamilyPlugin {
 public:
  // interface_of<Searcher>(plugin): the loaded plugin's Searcher, without RTTI across dlopen.
  static constexpr const char* kInterface = "gpuk::search::Searcher";
  const void* interface(std::string_view name) const override {
    return name == kInterface ? static_cast<const Searcher*>(this) : nullptr;
  }

  // find: the lowest matching index or -1; any: some matching index or -1; count: matches.
  // Elements match with ==: a NaN matches nothing, -0.0 matches +0.0. value.dtype must be input's.
  virtual std::int64_t search_on_cpu(const HostArray& input, const Value& value, Mode mode) const = 0;
  // find_if: the lowest index i with `input[i] OP value` as C++ compares, or -1; for a range
  // (compare: range, closed_range) `value <= input[i] < hi` (`<= hi`).
  virtual std::int64_t find_if_on_cpu(const HostArray& input, const Value& value, Compare compare,
                                      const Value& hi = Value{}) const = 0;
  // lower_bound (upper: upper_bound) of each needle in `haystack` (sorted: NaN last, -0.0 before
  // +0.0, else Error) into out[0, needles.size()): std::lower_bound / std::upper_bound in that order.
  virtual void bounds_on_cpu(const HostArray& haystack, const HostArray& needles, bool upper, std::int64_t* out) const = 0;
  // The value a run searches for, from the problem's options: `value`, or the element that
  // `value_at` / `value_index` picks in `input` (a random position is drawn from its seed), or
  // one that is not in `input` (value_at: absent). Throws ConfigError (the runner adds the
  // config's name).
  virtual Value target(const Problem& problem, const InputView& input) const = 0;
  // A range's upper bound (compare: range, closed_range): `value_hi`, or with value_at: absent
  // the upper end of a range that no element falls in (target() gives its lower end).
  virtual Value range_hi(const Problem& problem, const InputView& input) const = 0;
};

}  // namespace gpuk::search
