// The segmented sort's segments (docs/kernels/sort.md, "Segmented sort"): the options that
// describe them, their checks, and the offsets they make of n keys. Header-only: the plugin and
// the CPU tests share it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuk/error.hpp"
#include "sort_launcher.hpp"

namespace gpuk::sort {

// segmented_sort's options: `segments` (how many, >= 1) and `segment_lengths`: equal (segment i is
// [i * n / segments, (i + 1) * n / segments)) or power_law (heavy-tailed lengths, empty segments
// among them, from a fixed seed; summing to n).
struct SegmentSpec {
  std::uint64_t segments = 1;
  bool power_law = false;
};
// Whether a problem's options name one of segmented_sort's (the other operations refuse them).
// check_segments throws ConfigError naming the option: fewer than 2^31 segments (one block
// each), fewer than 2^32 - 1 keys (u32 indices in a segment). More segments than keys is fine,
// as in CUB: the extra ones are empty (a prepared handle's small size buckets serve its largest
// segment count). segment_offsets: the segments + 1 offsets the spec makes of n keys (first 0,
// last n, never decreasing).
inline SegmentSpec segment_spec_of(const std::map<std::string, std::string>& options) {
  SegmentSpec s;
  if (const auto it = options.find("segments"); it != options.end()) {
    long long v = 0;
    try {
      v = std::stoll(it->second);
    } catch (const std::exception&) {
      throw ConfigError("segments must be a whole number, not " + it->second);
    }
    if (v < 1) throw ConfigError("segments must be at least 1, not " + it->second);
    s.segments = static_cast<std::uint64_t>(v);
  }
  if (const auto it = options.find("segment_lengths"); it != options.end()) {
    if (it->second != "equal" && it->second != "power_law")
      throw ConfigError("segment_lengths must be equal or power_law, not " + it->second);
    s.power_law = it->second == "power_law";
  }
  return s;
}

inline bool has_segment_options(const std::map<std::string, std::string>& options) {
  return options.count("segments") || options.count("segment_lengths");
}

inline bool is_segmented(Op op) { return op == Op::segmented_sort || op == Op::segmented_sort_pairs; }

inline void check_segments(const SegmentSpec& s, std::uint64_t n) {
  if (s.segments >= (std::uint64_t{1} << 31))
    throw ConfigError("segments must be fewer than 2^31, not " + std::to_string(s.segments));
  if (n >= (std::uint64_t{1} << 32) - 1)
    throw ConfigError("segmented_sort takes fewer than 2^32 - 1 keys, not " + std::to_string(n));
}

inline std::vector<std::int64_t> segment_offsets(const SegmentSpec& s, std::uint64_t n) {
  std::vector<std::int64_t> off(s.segments + 1, 0);
  if (!s.power_law) {
    for (std::uint64_t i = 0; i <= s.segments; ++i)
      off[i] = static_cast<std::int64_t>(static_cast<unsigned __int128>(i) * n / s.segments);
    return off;
  }
  // Lomax(alpha 1.2) weights: most segments short (many empty), a few long.
  std::mt19937_64 rng(0x5e6);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> cum(s.segments + 1, 0.0);
  for (std::uint64_t i = 0; i < s.segments; ++i) cum[i + 1] = cum[i] + (std::pow(1.0 - u(rng), -1.0 / 1.2) - 1.0);
  for (std::uint64_t i = 1; i < s.segments; ++i) {
    const double f = cum[i] / cum[s.segments];
    off[i] = std::min<std::int64_t>(static_cast<std::int64_t>(n), static_cast<std::int64_t>(f * static_cast<double>(n)));
    off[i] = std::max(off[i], off[i - 1]);
  }
  off[s.segments] = static_cast<std::int64_t>(n);
  return off;
}

}  // namespace gpuk::sort
