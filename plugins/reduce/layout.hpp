// The shape of a reduction's input, from the reduce family's options: one contiguous array (the
// default), `segments: N` (consecutive runs, as cub::DeviceSegmentedReduce), or `channels: C`
// (interleaved, HWC: element i belongs to channel i % C). Internal to the plugin.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugin/plugin.hpp"

namespace gpuk::reduce {

enum class Shape { contiguous, segments, channels };

struct Layout {
  Shape shape = Shape::contiguous;
  std::int64_t count = 1;  // segments or channels; 1 for a contiguous input
  // Generated segments (a run's data; a library call brings its own offsets): lengths in
  // [min, max] adding up to n, drawn with `seed`; without min and max, lengths as equal as can be.
  std::optional<std::int64_t> min, max;
  std::uint64_t seed = 1;

  std::int64_t results() const { return count; }
};

// The options this adds to the family, with their help.
std::vector<OptionSpec> layout_options();

// The layout a problem asks for, checked against n; throws ConfigError with the config's words
// (what is wrong and what to write instead).
Layout layout_of(const Problem& problem);

// The count + 1 offsets of the generated segments over n elements (begin[s] = offsets[s],
// end[s] = offsets[s + 1]).
std::vector<std::int64_t> segment_offsets(const Layout& layout, std::uint64_t n);

// The kernel entries that follow each layout's contract (docs/kernels/reduce.md, "Segments and
// channels"): entries named reduce_segmented_* take segments, reduce_per_channel* channels, every
// other entry one contiguous array. Throws ConfigError when a planned entry does not fit.
void check_entries(const Layout& layout, const LaunchPlan& plan);

}  // namespace gpuk::reduce
