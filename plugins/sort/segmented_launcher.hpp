// The sort family's segmented sort (docs/kernels/sort.md, "Segmented sort"): its options as a
// problem gives them, the segments' offsets they describe, and its Launcher.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sort_launcher.hpp"

namespace gpuk::sort {

// segmented_sort's options: `segments` (how many, >= 1) and `segment_lengths`: equal (segment i is
// [i * n / segments, (i + 1) * n / segments)) or power_law (heavy-tailed lengths, empty segments
// among them, from a fixed seed; summing to n).
struct SegmentSpec {
  std::uint64_t segments = 1;
  bool power_law = false;
};
SegmentSpec segment_spec_of(const std::map<std::string, std::string>& options);

// Whether a problem's options name one of segmented_sort's (the other operations refuse them).
bool has_segment_options(const std::map<std::string, std::string>& options);

// Throws ConfigError naming the option: segments <= n, segments < 2^31 (one block each).
void check_segments(const SegmentSpec& spec, std::uint64_t n);

// The segments + 1 offsets the spec makes of n keys (first 0, last n, never decreasing).
std::vector<std::int64_t> segment_offsets(const SegmentSpec& spec, std::uint64_t n);

bool is_segmented(Op op);

std::unique_ptr<Launcher> make_segmented_launcher(const Problem& problem);

}  // namespace gpuk::sort
