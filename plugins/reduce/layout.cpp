#include "layout.hpp"

#include <algorithm>
#include <random>

#include "gpuk/error.hpp"

namespace gpuk::reduce {
namespace {

// No default: the layout options are absent from a problem that does not use them, so the tuning
// key of every contiguous problem ("abs=false") stays what it was.
constexpr const char* kNone = "";
constexpr std::int64_t kMaxSegments = 2147483647;  // the kernels' queues count in 32 bits
constexpr std::int64_t kMaxChannels = 1024;        // per_channel keeps one channel per thread

std::optional<std::int64_t> integer(const Problem& p, const std::string& name) {
  const auto it = p.options.find(name);
  if (it == p.options.end() || it->second.empty()) return std::nullopt;
  return std::stoll(it->second);
}

std::string text(std::int64_t v) { return std::to_string(v); }

}  // namespace

std::vector<OptionSpec> layout_options() {
  using K = OptionSpec::Kind;
  return {
      {"segments", K::integer, kNone, {},
       "reduce each of N segments (consecutive runs of the input, as cub::DeviceSegmentedReduce): N answers"},
      {"segment_min", K::integer, kNone, {}, "with segments: random segment lengths of at least this many elements"},
      {"segment_max", K::integer, kNone, {}, "with segments: random segment lengths of at most this many elements"},
      {"segment_seed", K::integer, kNone, {}, "with segment_min / segment_max: the seed of the random lengths (1)"},
      {"channels", K::integer, kNone, {},
       "reduce each of C interleaved channels (HWC: element i belongs to channel i % C): C answers"},
  };
}

Layout layout_of(const Problem& p) {
  Layout l;
  const auto segments = integer(p, "segments"), channels = integer(p, "channels");
  const auto min = integer(p, "segment_min"), max = integer(p, "segment_max");
  const auto seed = integer(p, "segment_seed");
  const bool seeded = seed.has_value();
  if (segments && channels)
    throw ConfigError("segments and channels do not go together: segments are runs of consecutive elements, "
                      "channels are interleaved (HWC); give one of them");
  if (!segments) {
    for (const char* key : {"segment_min", "segment_max"})
      if (integer(p, key)) throw ConfigError(std::string(key) + " shapes the lengths of segments: give segments: N too");
    if (seeded) throw ConfigError("segment_seed draws the lengths of segments: give segments: N too");
  }
  const auto n = static_cast<std::int64_t>(p.n);
  if (segments) {
    if (*segments < 1 || *segments > kMaxSegments)
      throw ConfigError("segments must be between 1 and " + text(kMaxSegments) + ", not " + text(*segments));
    l.shape = Shape::segments;
    l.count = *segments;
    if (seeded && !min && !max)
      throw ConfigError("segment_seed draws random lengths: give segment_min and/or segment_max too");
    if (min || max) {
      const std::int64_t lo = min.value_or(0), hi = max.value_or(n);
      if (lo < 0) throw ConfigError("segment_min must be at least 0, not " + text(lo));
      if (hi < lo) throw ConfigError("segment_max (" + text(hi) + ") is below segment_min (" + text(lo) + ")");
      // count * lo and count * hi against n, without overflow (count < 2^31).
      if (lo > 0 && l.count > n / lo)
        throw ConfigError("segments: " + text(l.count) + " of at least segment_min: " + text(lo) +
                          " elements need a size of at least " + text(l.count) + " * " + text(lo) +
                          ", not " + text(n) + "; raise size or lower segments or segment_min");
      if (hi < n / l.count + (n % l.count ? 1 : 0))
        throw ConfigError("segments: " + text(l.count) + " of at most segment_max: " + text(hi) +
                          " elements hold fewer than size: " + text(n) + "; lower size or raise segments or segment_max");
      l.min = lo;
      l.max = hi;
      l.seed = static_cast<std::uint64_t>(seed.value_or(1));
    }
  } else if (channels) {
    if (*channels < 1 || *channels > kMaxChannels)
      throw ConfigError("channels must be between 1 and " + text(kMaxChannels) + ", not " + text(*channels));
    if (n % *channels != 0)
      throw ConfigError("size " + text(n) + " is not a multiple of channels: " + text(*channels) +
                        " (interleaved data holds channels elements per pixel)");
    l.shape = Shape::channels;
    l.count = *channels;
  }
  return l;
}

std::vector<std::int64_t> segment_offsets(const Layout& layout, std::uint64_t n) {
  const auto count = static_cast<std::uint64_t>(layout.count);
  std::vector<std::int64_t> offsets(count + 1);
  if (!layout.min) {
    for (std::uint64_t s = 0; s <= count; ++s)
      offsets[s] = static_cast<std::int64_t>(static_cast<unsigned __int128>(n) * s / count);
    return offsets;
  }
  // Every segment starts at min; the rest is shared in proportion to uniform weights, each share
  // capped at max - min; what the caps and the rounding leave goes round from a random segment.
  const auto lo = static_cast<std::uint64_t>(*layout.min), hi = static_cast<std::uint64_t>(*layout.max);
  const std::uint64_t rest = n - count * lo, cap = hi - lo;
  std::mt19937_64 rng(layout.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> w(count);
  double total = 0;
  for (auto& x : w) total += (x = uniform(rng));
  std::vector<std::uint64_t> extra(count);
  std::uint64_t given = 0;
  for (std::uint64_t s = 0; s < count; ++s) {
    const double share = total > 0 ? static_cast<double>(rest) * (w[s] / total) : 0.0;
    extra[s] = std::min<std::uint64_t>(cap, static_cast<std::uint64_t>(share));
    given += extra[s];
  }
  given = std::min(given, rest);
  std::uint64_t left = rest - given;
  for (std::uint64_t k = 0, s = rng() % count; left > 0 && k < count; ++k, s = (s + 1) % count) {
    const std::uint64_t add = std::min(cap - extra[s], left);
    extra[s] += add;
    left -= add;
  }
  offsets[0] = 0;
  for (std::uint64_t s = 0; s < count; ++s) offsets[s + 1] = offsets[s] + static_cast<std::int64_t>(lo + extra[s]);
  return offsets;
}

void check_entries(const Layout& layout, const LaunchPlan& plan) {
  for (const ResolvedLaunch& l : plan.launches) {
    const std::string& e = l.name_expression;
    const Shape entry = e.rfind("reduce_segmented_", 0) == 0 ? Shape::segments
                        : e.rfind("reduce_per_channel", 0) == 0 ? Shape::channels
                                                                 : Shape::contiguous;
    if (entry == layout.shape) continue;
    const std::string name = e.substr(0, e.find('<'));
    const char* wants = layout.shape == Shape::segments   ? "segments: the reduce family's segmented_chunks or segmented_warps"
                        : layout.shape == Shape::channels ? "channels: the reduce family's per_channel"
                                                          : "one contiguous array: onepass or another kernel without segments or channels";
    const char* takes = entry == Shape::segments   ? "segments (it needs segments: N)"
                        : entry == Shape::channels ? "interleaved channels (it needs channels: C)"
                                                   : "one contiguous array";
    throw ConfigError("kernel entry " + name + " reduces " + takes + "; this problem has " + wants +
                      " serve it (kernel: NAME, or leave kernel out)");
  }
  if (layout.shape == Shape::channels)
    for (const ResolvedLaunch& l : plan.launches)
      if (l.block < static_cast<std::uint32_t>(layout.count))
        throw ConfigError("channels: " + std::to_string(layout.count) + " needs BLOCK >= " +
                          std::to_string(layout.count) + " (one channel per thread), not " + std::to_string(l.block));
}

}  // namespace gpuk::reduce
