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
// Out of place only: the last pass gathers keys_out from keys_in while other threads write, so
// an output that overlaps any input (or the other output) is refused.
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
    check_overlaps(a, static_cast<std::uint64_t>(segments), target.where);
    void* args[] = {&a};
    warp_ = target.plan.launches[0];
    block_ = target.plan.launches[1];
    const std::uint64_t warps = std::max<std::uint64_t>(1, warp_.block / 32);
    warp_.grid = static_cast<std::uint32_t>((static_cast<std::uint64_t>(segments) + warps - 1) / warps);
    block_.grid = static_cast<std::uint32_t>(segments);
    launch_kernel(target.functions[0], warp_, args, target.stream, target.where);
    launch_kernel(target.functions[1], block_, args, target.stream, target.where);
  }

 private:
  void check_overlaps(const SegArgs& a, std::uint64_t segments, const std::string& where) const {
    const std::uint64_t kb = static_cast<std::uint64_t>(a.n) * dtype_size(keys_),
                        vb = a.values_in ? static_cast<std::uint64_t>(a.n) * dtype_size(values_) : 0;
    struct Range {
      const char* name;
      CUdeviceptr at;
      std::uint64_t bytes;
    };
    // On the stack: a prepared handle's call allocates nothing (tests/api/test_host_path.cpp).
    const Range outputs[2] = {{"keys_out", a.keys_out, kb}, {"values_out", a.values_out, vb}};
    const Range inputs[5] = {{"keys_in", a.keys_in, kb},
                             {"values_in", a.values_in, vb},
                             {"begin_offsets", a.begin_offsets, segments * 8},
                             {"end_offsets", a.end_offsets, segments * 8},
                             {"values_out", a.values_out, vb}};
    for (std::size_t o = 0; o < 2; ++o)
      for (std::size_t i = 0; i < 5 - o; ++i) {  // keys_out against values_out too, once
        if (!ranges_overlap(outputs[o].at, outputs[o].bytes, inputs[i].at, inputs[i].bytes)) continue;
        throw ConfigError(where + ": " + outputs[o].name + " and " + inputs[i].name +
                          " overlap; a segmented sort is out of place: its outputs must overlap neither an input "
                          "nor each other");
      }
  }

  DType keys_, values_ = DType::uint32;
  std::uint64_t n_, max_n_;
  Op op_;
  SegmentSpec spec_;
  // The plan's two launches with this call's grids, kept between calls so that copying a plan's
  // names reuses their memory: a prepared handle's call allocates nothing
  // (tests/api/test_host_path.cpp). A Launcher serves one Operation, one thread at a time.
  mutable ResolvedLaunch warp_, block_;
};

}  // namespace

std::unique_ptr<Launcher> make_segmented_launcher(const Problem& problem) {
  return std::make_unique<SegmentedLauncher>(problem);
}

}  // namespace gpuk::sort
