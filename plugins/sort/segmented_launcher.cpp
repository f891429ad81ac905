// The sort family's segmented sort Launcher (docs/kernels/sort.md, "Segmented sort").
#include "segmented_launcher.hpp"

#include <cstring>

#include "gpuk/error.hpp"

namespace gpuk::sort {

namespace {

// The host mirror of SegArgs<S> (kernels_src/sort/segmented.cu): the same fields, the same layout.
struct SegArgs {
  CUdeviceptr keys_in, keys_out, values_in, values_out, begin_offsets, end_offsets, scratch;
  std::int64_t n, segments;
};
static_assert(sizeof(SegArgs) == 72);

// Arrays, in CUB's order: keys_in, keys_out, (values_in, values_out), begin_offsets, end_offsets
// (int64, one per segment: segment s is [begin_offsets[s], end_offsets[s]), empty when end <=
// begin; n + 1 offsets serve as both, the end array one element on). The scalar: how many
// segments this call sorts (1 to the prepared count). Scratch: 2 * n (bits, u32 index) pairs for
// the merges of segments longer than a block's tile. Keys outside every segment are not written.
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
    out.push_back({"begin_offsets", false, "int64", spec_.segments * 8, false});
    out.push_back({"end_offsets", false, "int64", spec_.segments * 8, false});
    return out;
  }

  std::optional<ScalarSlot> scalar() const override { return ScalarSlot{"segments", DType::int64}; }

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
    std::int64_t segments = static_cast<std::int64_t>(spec_.segments);
    if (call.scalar) std::memcpy(&segments, call.scalar, sizeof segments);
    if (segments < 1 || static_cast<std::uint64_t>(segments) > spec_.segments)
      throw ConfigError(target.where + ": segments = " + std::to_string(segments) +
                        ": this operation was prepared for 1 to " + std::to_string(spec_.segments) + " segments");
    SegArgs a{call.arrays[0], call.arrays[1], pairs ? call.arrays[2] : 0, pairs ? call.arrays[3] : 0,
              call.arrays[pairs ? 4 : 2], call.arrays[pairs ? 5 : 3], call.scratch,
              static_cast<std::int64_t>(call.n), segments};
    void* args[] = {&a};
    ResolvedLaunch warp = target.plan.launches[0], block = target.plan.launches[1];
    const std::uint64_t warps = std::max<std::uint64_t>(1, warp.block / 32);
    warp.grid = static_cast<std::uint32_t>((static_cast<std::uint64_t>(segments) + warps - 1) / warps);
    block.grid = static_cast<std::uint32_t>(segments);
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
