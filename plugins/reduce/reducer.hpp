// The Reducer family's CPU semantics, what its plugin implements: the interface tests reach on the
// loaded plugin. Beside the plugin, not installed: applications use gpuk/reduce.hpp.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "gpuk/reduce.hpp"
#include "plugin/plugin.hpp"

namespace gpuk::reduce {

class Reducer : public FamilyPlugin {
 public:
  // interface_of<Reducer>(plugin): the loaded plugin's Reducer, without RTTI across dlopen.
  static constexpr const char* kInterface = "gpuk::reduce::Reducer";
  const void* interface(std::string_view name) const override {
    return name == kInterface ? static_cast<const Reducer*>(this) : nullptr;
  }

  // The CPU reference: ties go to the lowest index; a NaN wins and the first NaN's index counts.
  // (argminmax answers two: argminmax_on_cpu; reduce_on_cpu refuses it.)
  virtual Answer reduce_on_cpu(const HostArray& input, Op op, bool abs) const = 0;
  // argminmax: argmin's answer, then argmax's, from one pass (an empty input: index -1 for both).
  virtual std::pair<Answer, Answer> argminmax_on_cpu(const HostArray& input, bool abs) const = 0;
  // Per segment input[begin[s], end[s]) (empty when end <= begin): the index relative to begin[s];
  // an empty segment gets cub::DeviceSegmentedReduce's initial value (lowest() for max/argmax,
  // max() for min/argmin, 0 for sum) and index -1.
  virtual std::vector<Answer> reduce_segments_on_cpu(const HostArray& input, const std::vector<std::int64_t>& begin,
                                                     const std::vector<std::int64_t>& end, Op op, bool abs) const = 0;
  // Per channel c of interleaved data (element i in channel i % channels): the index is the pixel.
  virtual std::vector<Answer> reduce_channels_on_cpu(const HostArray& input, std::int64_t channels, Op op,
                                                     bool abs) const = 0;
  // The segment offsets (segments + 1) a run of `problem` generates (segments:, segment_min, ...).
  virtual std::vector<std::int64_t> generated_offsets(const Problem& problem) const = 0;
};

}  // namespace gpuk::reduce
