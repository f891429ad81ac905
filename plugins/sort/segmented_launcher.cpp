// The sort family's segmented sort Launcher (docs/kernels/sort.md, "Segmented sort").
#include "segmented_launcher.hpp"

#include <algorithm>
#include <cstring>

#include "gpuk/error.hpp"

namespace gpuk::sort {

namespace {

// The host mirror of SegArgs<S> (kernels_src/sort/segmented.cu): the same fields, the same layout.
struct SegArgs {
  CUdeviceptr keys_in, keys_out, values_in, values_out, begin_offsets, end_offsets, words, keys_spare, values_spare;
  std::int64_t n, segments;
};
static_assert(sizeof(SegArgs) == 88);

// Arrays, in CUB's order: keys_in, keys_out, (values_in, values_out), begin_offsets, end_offsets
// (int64, one per segment: segment s is [begin_offsets[s], end_offsets[s]), empty when end <=
// begin; n + 1 offsets serve as both, the end array one element on). The scalar: how many
// segments this call sorts (1 to the prepared count). Scratch: the kernel's words (its list of the
// tiles of segments longer than a block's tile, and the merge passes' counters), then n keys and
// n values, the other buffer of the merge passes. Keys outside every segment are not written.
// Out of place only: the outputs are the merge passes' buffers while the inputs are still read,
// so an output that overlaps any input (or the other output) is refused.
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

  std::uint64_t scratch_bytes(const LaunchPlan& plan) const override {
    return words_bytes(plan) + spare_bytes();
  }
  // Zero: the kernel's words start so, and its last launch leaves them so.
  void init_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) const override {
    GPUK_CU(driver().cuMemsetD8Async(scratch, 0, bytes, stream));
  }

  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    try {
      check_segments(spec_, call.n);
    } catch (const ConfigError& e) {
      throw ConfigError(target.where + ": " + e.what());
    }
    const std::size_t launches = target.plan.launches.size();
    if (launches != 2 && launches != 3)
      throw Error(target.where + ": segmented_sort runs a block launch and a merge launch, after one of warps with "
                  "WARP 1, not " + std::to_string(launches) + " launches");
    if (call.scratch_bytes < scratch_bytes(target.plan))
      throw Error(target.where + ": segmented_sort needs " + std::to_string(scratch_bytes(target.plan)) +
                  " bytes of scratch, got " + std::to_string(call.scratch_bytes));
    const bool pairs = op_ == Op::segmented_sort_pairs;
    std::int64_t segments = static_cast<std::int64_t>(spec_.segments);
    if (call.scalar) std::memcpy(&segments, call.scalar, sizeof segments);
    if (segments < 1 || static_cast<std::uint64_t>(segments) > spec_.segments)
      throw ConfigError(target.where + ": segments = " + std::to_string(segments) +
                        ": this operation was prepared for 1 to " + std::to_string(spec_.segments) + " segments");
    const CUdeviceptr keys_spare = call.scratch + words_bytes(target.plan);
    SegArgs a{call.arrays[0],
              call.arrays[1],
              pairs ? call.arrays[2] : 0,
              pairs ? call.arrays[3] : 0,
              call.arrays[pairs ? 4 : 2],
              call.arrays[pairs ? 5 : 3],
              call.scratch,
              keys_spare,
              pairs ? keys_spare + aligned(std::max(n_, max_n_) * dtype_size(keys_)) : 0,
              static_cast<std::int64_t>(call.n),
              segments};
    check_overlaps(a, static_cast<std::uint64_t>(segments), target.where);
    void* args[] = {&a};
    // With WARP 1 a warp per segment first (the short ones).
    const std::size_t block = launches - 2;
    if (launches == 3) {
      warp_ = target.plan.launches[0];
      const std::uint64_t warps = std::max<std::uint64_t>(1, warp_.block / 32);
      warp_.grid = static_cast<std::uint32_t>((static_cast<std::uint64_t>(segments) + warps - 1) / warps);
      launch_kernel(target.functions[0], warp_, args, target.stream, target.where);
    }
    // The block launch strides over the segments: no more blocks than segments.
    block_ = target.plan.launches[block];
    block_.grid = static_cast<std::uint32_t>(std::min<std::uint64_t>(block_.grid, static_cast<std::uint64_t>(segments)));
    launch_kernel(target.functions[block], block_, args, target.stream, target.where);
    launch_kernel(target.functions[block + 1], target.plan.launches[block + 1], args, target.stream, target.where);
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

  std::uint64_t words_bytes(const LaunchPlan& plan) const {
    return aligned(static_cast<std::uint64_t>(std::max<std::int64_t>(1, plan.scratch_slots)) * 4);
  }
  std::uint64_t spare_bytes() const {
    const std::uint64_t n = std::max(n_, max_n_);
    return aligned(n * dtype_size(keys_)) + (op_ == Op::segmented_sort_pairs ? aligned(n * dtype_size(values_)) : 0);
  }

  DType keys_, values_ = DType::uint32;
  std::uint64_t n_, max_n_;
  Op op_;
  SegmentSpec spec_;
  // The plan's launches with this call's grids, kept between calls so that copying a plan's names
  // reuses their memory: a prepared handle's call allocates nothing
  // (tests/api/test_host_path.cpp). A Launcher serves one Operation, one thread at a time.
  mutable ResolvedLaunch warp_, block_;
};

}  // namespace

std::unique_ptr<Launcher> make_segmented_launcher(const Problem& problem) {
  return std::make_unique<SegmentedLauncher>(problem);
}

}  // namespace gpuk::sort
