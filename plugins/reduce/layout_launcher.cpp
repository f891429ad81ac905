// Segmented and per-channel reductions: their launches (segmented.hpp).
#include <algorithm>
#include <cstring>

#include "gpuk/error.hpp"
#include "segmented.hpp"
#include "semantics.hpp"

namespace gpuk::reduce {
namespace {

constexpr std::uint64_t kCounters = 256;  // the kernels' counters, zero between runs

// Where a segmented kernel's partials start in its scratch (segmented_chunks.cu's carve: 256
// bytes of counters, segments + 1 chunk numbers, segments done-counters, 16-byte aligned).
std::uint64_t partials_at(std::int64_t segments) {
  const std::uint64_t s = static_cast<std::uint64_t>(segments);
  return (kCounters + (s + 1) * 8 + s * 4 + 15) / 16 * 16;
}

std::string result_type(DType dtype, Op op, bool abs) {
  const DType v = value_dtype(dtype, abs);
  if (op == Op::sum) return std::string(dtype_name(sum_dtype(v)));
  // Appended, not "{" + ...: GCC 12 warns (-Wrestrict) on that concatenation inlined here.
  std::string type = "{";
  type += dtype_name(v);
  type += " value; int64 index at byte 8}";
  return type;
}

class LayoutLauncher final : public Launcher {
 public:
  LayoutLauncher(const Problem& p, Layout layout)
      : dtype_(p.dtype), op_(op_named(p.operation)), abs_(p.option_bool("abs")), n_(p.max_n), layout_(layout) {}

  std::vector<ArraySlot> arrays() const override {
    const auto count = static_cast<std::uint64_t>(layout_.count);
    const std::string each = result_type(dtype_, op_, abs_) + " x " + std::to_string(count);
    std::vector<ArraySlot> out = {{"input", false, std::string(dtype_name(dtype_)), n_ * dtype_size(dtype_), false}};
    if (layout_.shape == Shape::segments) {
      out.push_back({"begin_offsets", false, "int64 x " + std::to_string(count), count * 8, false});
      out.push_back({"end_offsets", false, "int64 x " + std::to_string(count), count * 8, false});
    }
    // A channel count is at most 1,024 answers: small enough for the host-returning calls
    // (launch_and_read); a segmented call's answers, one per segment, stay on the device.
    out.push_back({"results", true, each, count * result_bytes(op_), layout_.shape == Shape::channels});
    return out;
  }

  // A segmented call says how many segments it has: at most the count prepared for (which sizes
  // the offsets, results and scratch), so that one Operation serves every count up to it (a
  // prepared handle's max_segments). Without it (a run's workload) the count prepared for.
  std::optional<ScalarSlot> scalar() const override {
    if (layout_.shape == Shape::segments) return ScalarSlot{"segments", DType::int64};
    return std::nullopt;
  }

  std::uint64_t scratch_bytes(const LaunchPlan& plan) const override {
    check_entries(layout_, plan);
    const auto slots = static_cast<std::uint64_t>(std::max<std::int64_t>(0, plan.scratch_slots));
    const auto count = static_cast<std::uint64_t>(layout_.count);
    if (layout_.shape == Shape::segments) return partials_at(layout_.count) + (slots + count) * 16;
    // per_channel: a partial per block and channel; `scratch:` says the grid, and the largest
    // grid planned is taken too, so that a file that says less cannot write past the end.
    std::uint64_t blocks = slots;
    for (const ResolvedLaunch& l : plan.launches) blocks = std::max<std::uint64_t>(blocks, l.grid);
    return kCounters + blocks * count * 16;
  }

  void init_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) const override {
    GPUK_CU(driver().cuMemsetD8Async(scratch, 0, bytes, stream));
    last_segments_ = layout_.count;
  }

  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    CUdeviceptr in = call.arrays[0];
    CUdeviceptr scratch = call.scratch;
    if (layout_.shape == Shape::segments) {
      CUdeviceptr begin = call.arrays[1], end = call.arrays[2], out = call.arrays[3];
      std::int64_t segments = layout_.count;
      if (call.scalar) std::memcpy(&segments, call.scalar, sizeof segments);
      if (segments < 1 || segments > layout_.count)
        throw ConfigError("segments = " + std::to_string(segments) + ": this operation was prepared for 1 to " +
                          std::to_string(layout_.count) + " segments");
      if (segments != last_segments_) {
        // The done-counters (zero between runs) sit after segments + 1 chunk numbers, so another
        // count moves them onto what the last run left there: zero them for this count.
        const std::uint64_t done = kCounters + (static_cast<std::uint64_t>(segments) + 1) * 8;
        GPUK_CU(driver().cuMemsetD8Async(scratch + done, 0, static_cast<std::uint64_t>(segments) * 4, target.stream));
        last_segments_ = segments;
      }
      std::int64_t capacity =
          static_cast<std::int64_t>((call.scratch_bytes - std::min(call.scratch_bytes, partials_at(segments))) / 16);
      void* args[] = {&in, &begin, &end, &segments, &out, &scratch, &capacity};
      launch_plan(target, args);
    } else {
      if (call.n % static_cast<std::uint64_t>(layout_.count) != 0)
        throw ConfigError("n = " + std::to_string(call.n) + " is not a multiple of channels: " +
                          std::to_string(layout_.count) + " (interleaved data holds channels elements per pixel)");
      CUdeviceptr out = call.arrays[1];
      std::int64_t n = static_cast<std::int64_t>(call.n), channels = layout_.count;
      void* args[] = {&in, &n, &channels, &out, &scratch};
      launch_plan(target, args);
    }
  }

 private:
  DType dtype_;
  Op op_;
  bool abs_;
  std::uint64_t n_;
  Layout layout_;
  // The segment count of the last launch: its done-counters are the ones left at zero. A
  // Launcher serves one Operation, which serves one stream at a time.
  mutable std::int64_t last_segments_ = 0;
};

}  // namespace

std::unique_ptr<Launcher> make_layout_launcher(const Problem& problem, const Layout& layout) {
  return std::make_unique<LayoutLauncher>(problem, layout);
}

}  // namespace gpuk::reduce
