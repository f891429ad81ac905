// The Reducer family's CPU semantics, what its plugin implements: the interface tests reach on the
// loaded plugin. Beside the plugin, not installed: applications use gpuk/reduce.hpp.
#pragma once
#include <cstdint>

#include "gpuk/reduce.hpp"
#include "plugin/plugin.hpp"

namespace gpuk {
struct RunSpec;
}

namespace gpuk::reduce {

class Reducer : public FamilyPlugin {
 public:
  // The CPU reference: ties go to the lowest index; a NaN wins and the first NaN's index counts.
  virtual Answer reduce_on_cpu(const HostArray& input, Op op, bool abs) const = 0;
};

}  // namespace gpuk::reduce
