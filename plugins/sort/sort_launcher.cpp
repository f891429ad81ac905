// The sort family's Launcher (docs/kernels/sort.md, "How the host runs a file").
#include "sort_launcher.hpp"

#include <algorithm>

#include "gpuk/error.hpp"

namespace gpuk::sort {
namespace {

// The host mirror of gpuk::SortArgs<S> (sort.cuh): the same fields, the same layout (56 bytes).
struct SortArgs {
  CUdeviceptr keys_in, keys_out, values_in, values_out, scratch;
  std::int64_t n;
  std::int32_t pass, passes;
};
static_assert(sizeof(SortArgs) == 56);

constexpr std::uint64_t aligned(std::uint64_t bytes) { return (bytes + 255) / 256 * 256; }

// The sort kernels' launches on device pointers (docs/kernels/sort.md, "How the host runs a
// file"): every planned launch `repeat` times, pass p = 0, 1, ... of `repeat`, each with its
// SortArgs. A launch that repeats ping-pongs between the outputs and two spare buffers, so that
// its last pass lands in the outputs; a launch that runs once sorts input to output.
//
// Scratch: the metadata's `scratch` words first (zeroed once: a kernel leaves them as the next
// run needs them), and, when a launch repeats, the spare keys and values at the end, sized for
// the largest n the launcher serves.
class SortLauncher final : public Launcher {
 public:
  explicit SortLauncher(const Problem& p)
      : op_(parse_op(p.operation)),
        keys_(p.dtype),
        values_(op_ == Op::sort ? p.dtype : value_dtype_of(p, op_)),
        n_(p.n),
        max_n_(p.max_n) {}

  std::vector<ArraySlot> arrays() const override {
    const std::string k(dtype_name(keys_)), v(dtype_name(values_));
    const std::uint64_t kb = n_ * dtype_size(keys_), vb = n_ * dtype_size(values_);
    std::vector<ArraySlot> out = {{"keys_in", false, k, kb, false}, {"keys_out", true, k, kb, false}};
    if (info(op_).values_in) out.push_back({"values_in", false, v, vb, false});
    if (info(op_).values_out) out.push_back({op_ == Op::argsort ? "indices_out" : "values_out", true, v, vb, false});
    return out;
  }

  std::uint64_t scratch_bytes(const LaunchPlan& plan) const override {
    const std::uint64_t words = aligned(static_cast<std::uint64_t>(std::max<std::int64_t>(1, plan.scratch_slots)) * 4);
    return words + (repeats(plan) ? spare_bytes() : 0);
  }

  void init_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) const override {
    GPUK_CU(driver().cuMemsetD8Async(scratch, 0, bytes, stream));
  }

  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    Buffers b;
    b.keys_in = call.arrays[0];
    b.keys_out = call.arrays[1];
    std::size_t next = 2;
    if (info(op_).values_in) b.values_in = call.arrays[next++];
    if (info(op_).values_out) b.values_out = call.arrays[next++];
    b.scratch = call.scratch;
    if (repeats(target.plan)) {
      b.keys_spare = call.scratch + call.scratch_bytes - spare_bytes();
      b.values_spare = b.keys_spare + aligned(max_n_ * dtype_size(keys_));
    }
    const auto n = static_cast<std::int64_t>(call.n);
    for (std::size_t i = 0; i < target.plan.launches.size(); ++i) {
      const ResolvedLaunch& l = target.plan.launches[i];
      for (std::uint32_t pass = 0; pass < l.repeat; ++pass) {
        SortArgs a = pass_args(b, n, static_cast<int>(pass), static_cast<int>(l.repeat));
        void* args[] = {&a};
        launch_kernel(target.functions[i], l, args, target.stream, target.where);
      }
    }
  }

 private:
  struct Buffers {
    CUdeviceptr keys_in = 0, keys_out = 0, values_in = 0, values_out = 0, scratch = 0, keys_spare = 0,
                values_spare = 0;
  };

  static bool repeats(const LaunchPlan& plan) {
    return std::any_of(plan.launches.begin(), plan.launches.end(), [](const ResolvedLaunch& l) { return l.repeat > 1; });
  }
  std::uint64_t spare_bytes() const {
    return aligned(max_n_ * dtype_size(keys_)) + (info(op_).values_out ? aligned(max_n_ * dtype_size(values_)) : 0);
  }

  // Pass p of `passes` writes the outputs when passes - 1 - p is even, the spare buffers
  // otherwise, so that the last pass lands in the outputs; pass 0 reads the input, every later
  // pass the one before. One pass of one (a launch that does not repeat) reads the input and
  // writes the outputs.
  SortArgs pass_args(const Buffers& b, std::int64_t n, int p, int passes) const {
    const bool values = info(op_).values_out;
    const auto keys_of = [&](int q) { return (passes - 1 - q) % 2 == 0 ? b.keys_out : b.keys_spare; };
    const auto values_of = [&](int q) -> CUdeviceptr {
      return values ? ((passes - 1 - q) % 2 == 0 ? b.values_out : b.values_spare) : 0;
    };
    SortArgs a{b.keys_in, keys_of(p), b.values_in, values_of(p), b.scratch, n, p, passes};
    if (p > 0) {
      a.keys_in = keys_of(p - 1);
      a.values_in = values_of(p - 1);
    }
    return a;
  }

  Op op_;
  DType keys_, values_;
  std::uint64_t n_, max_n_;
};

}  // namespace

std::unique_ptr<Launcher> make_sort_launcher(const Problem& problem) { return std::make_unique<SortLauncher>(problem); }

}  // namespace gpuk::sort
