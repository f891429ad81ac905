// The Searcher family's CPU semantics, what its plugin implements: the interface tests reach on the
// loaded plugin. Beside the plugin, not installed: applications use gpuk/search.hpp.
#pragma once
#include <cstdint>

#include "gpuk/search.hpp"
#include "plugin/plugin.hpp"

namespace gpuk {
struct RunSpec;
}

namespace gpuk::search {

class Searcher : public FamilyPlugin {
 public:
  // find: the lowest matching index or -1; any: some matching index or -1; count: matches.
  // Elements match with ==: a NaN matches nothing, -0.0 matches +0.0. value.dtype must be input's.
  virtual std::int64_t search_on_cpu(const HostArray& input, const Value& value, Mode mode) const = 0;
  // The value a run searches for, from the config: `value`, or the element that `value_at` /
  // `value_index` picks in `input` (a random position is drawn from data.seed), or one that is
  // not in `input` (value_at: absent). Throws ConfigError naming the config.
  virtual Value target(const RunSpec& spec, const HostArray& input) const = 0;
};

}  // namespace gpuk::search
