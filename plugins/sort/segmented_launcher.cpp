// The sort family's segmented sort Launcher (docs/kernels/sort.md, "Segmented sort").
#include "segmented_launcher.hpp"

#include <cmath>
#include <random>
#include <stdexcept>

#include "gpuk/error.hpp"

namespace gpuk::sort {

SegmentSpec segment_spec_of(const std::map<std::string, std::string>& options) {
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

bool has_segment_options(const std::map<std::string, std::string>& options) {
  return options.count("segments") || options.count("segment_lengths");
}

bool is_segmented(Op op) { return op == Op::segmented_sort || op == Op::segmented_sort_pairs; }

void check_segments(const SegmentSpec& s, std::uint64_t n) {
  if (s.segments > n)
    throw ConfigError("segments (" + std::to_string(s.segments) + ") must be at most n (" + std::to_string(n) + ")");
  if (s.segments >= (std::uint64_t{1} << 31))
    throw ConfigError("segments must be fewer than 2^31, not " + std::to_string(s.segments));
  if (n >= (std::uint64_t{1} << 32) - 1)
    throw ConfigError("segmented_sort takes fewer than 2^32 - 1 keys, not " + std::to_string(n));
}

std::vector<std::int64_t> segment_offsets(const SegmentSpec& s, std::uint64_t n) {
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

namespace {

// The host mirror of SegArgs<S> (kernels_src/sort/segmented.cu): the same fields, the same layout.
struct SegArgs {
  CUdeviceptr keys_in, keys_out, values_in, values_out, begin_offsets, end_offsets, scratch;
  std::int64_t n, segments;
};
static_assert(sizeof(SegArgs) == 72);

// Arrays: keys_in, keys_out, (values_in, values_out), offsets (segments + 1 int64). Scratch: 2 * n
// (bits, u32 index) pairs for the merges of segments longer than a block's tile.
class SegmentedLauncher final : public Launcher {
 public:
  explicit SegmentedLauncher(const Problem& p)
      : keys_(p.dtype), n_(p.n), max_n_(p.max_n), op_(parse_op(p.operation)), spec_(segment_spec_of(p.options)) {
    if (op_ == Op::segmented_sort_pairs) values_ = value_dtype_of(p, op_);
  }

  std::vector<ArraySlot> arrays() const override {
    const std::string k(dtype_name(keys_));
    std::vector<ArraySlot> out = {{"keys_in", false, k, n_ * dtype_size(keys_), false},
                                  {"keys_out", true, k, n_ * dtype_size(keys_), false}};
    if (op_ == Op::segmented_sort_pairs) {
      const std::string v(dtype_name(values_));
      out.push_back({"values_in", false, v, n_ * dtype_size(values_), false});
      out.push_back({"values_out", true, v, n_ * dtype_size(values_), false});
    }
    out.push_back({"offsets", false, "int64", (spec_.segments + 1) * 8, false});
    return out;
  }

  std::uint64_t scratch_bytes(const LaunchPlan&) const override {
    return 2 * std::max(n_, max_n_) * (dtype_size(keys_) + 4);
  }
  void init_scratch(CUdeviceptr, std::uint64_t, CUstream) const override {}

  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    try {
      check_segments(spec_, call.n);
    } catch (const ConfigError& e) {
      throw ConfigError(target.where + ": " + e.what());
    }
    if (target.plan.launches.size() != 2)
      throw Error(target.where + ": segmented_sort runs two launches (warp, block), not " +
                  std::to_string(target.plan.launches.size()));
    if (call.scratch_bytes < 2 * call.n * (dtype_size(keys_) + 4))
      throw Error(target.where + ": segmented_sort needs " + std::to_string(2 * call.n * (dtype_size(keys_) + 4)) +
                  " bytes of scratch, got " + std::to_string(call.scratch_bytes));
    const bool pairs = op_ == Op::segmented_sort_pairs;
    const CUdeviceptr offsets = call.arrays[pairs ? 4 : 2];
    SegArgs a{call.arrays[0], call.arrays[1], pairs ? call.arrays[2] : 0, pairs ? call.arrays[3] : 0,
              offsets, offsets + 8, call.scratch, static_cast<std::int64_t>(call.n),
              static_cast<std::int64_t>(spec_.segments)};
    void* args[] = {&a};
    ResolvedLaunch warp = target.plan.launches[0], block = target.plan.launches[1];
    const std::uint64_t warps = std::max<std::uint64_t>(1, warp.block / 32);
    warp.grid = static_cast<std::uint32_t>((spec_.segments + warps - 1) / warps);
    block.grid = static_cast<std::uint32_t>(spec_.segments);
    launch_kernel(target.functions[0], warp, args, target.stream, target.where);
    launch_kernel(target.functions[1], block, args, target.stream, target.where);
  }

 private:
  DType keys_, values_ = DType::uint32;
  std::uint64_t n_, max_n_;
  Op op_;
  SegmentSpec spec_;
};

}  // namespace

std::unique_ptr<Launcher> make_segmented_launcher(const Problem& problem) {
  return std::make_unique<SegmentedLauncher>(problem);
}

}  // namespace gpuk::sort
