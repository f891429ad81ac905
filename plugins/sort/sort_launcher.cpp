// The sort family's Launcher (docs/kernels/sort.md, "How the host runs a file").
#include "sort_launcher.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "gpuk/error.hpp"

namespace gpuk::sort {

KeyOrder key_order_of(const std::map<std::string, std::string>& options, DType keys) {
  const auto get = [&](const char* name, const char* fallback) {
    const auto it = options.find(name);
    return it == options.end() ? std::string(fallback) : it->second;
  };
  KeyOrder o;
  o.descending = get("order", "ascending") == "descending";
  o.cub = get("float_order", "total") == "cub";
  const int key_bits = static_cast<int>(8 * dtype_size(keys));
  const std::string begin = get("begin_bit", "0"), end = get("end_bit", "none");
  o.begin_bit = std::stoi(begin);
  o.end_bit = end == "none" ? key_bits : std::stoi(end);
  return o;
}

namespace {

// The host mirror of gpuk::SortArgs<S> (sort.cuh): the same fields, the same layout (104 bytes).
struct SortArgs {
  CUdeviceptr keys_in, keys_out, values_in, values_out, scratch;
  std::int64_t n;
  std::int32_t pass, passes;
  CUdeviceptr keys_first, keys_last, keys_spare, values_first, values_last, values_spare;
};
static_assert(sizeof(SortArgs) == 104);

// The sort kernels' launches on device pointers (docs/kernels/sort.md, "How the host runs a
// file"): every planned launch `repeat` times, pass p = 0, 1, ... of `repeat`, each with its
// SortArgs. A launch that repeats ping-pongs between the outputs and two spare buffers, so that
// its last pass lands in the outputs; a launch that runs once sorts input to output.
//
// Scratch: the metadata's `scratch` words first (zeroed once: a kernel leaves them as the next
// run needs them), then the spare keys and values, sized for the largest n the launcher serves:
// the ping-pong buffers of a launch that repeats, and the copy of the input an in-place sort
// reads where the launches would otherwise read what they have already overwritten.
//
// A launch that repeats is a digit pass: with a begin_bit / end_bit window it runs
// ceil((end_bit - begin_bit) / R) times, R = ceil(key bits / repeat) being its digit width (the
// kernel's S::passes<R>()), instead of `repeat` times.
//
// In place (keys_in == keys_out, or values_in == values_out): an even number of digit passes
// reads the input only in its histogram and first pass, which writes the spare buffers, so it
// runs as it is; any other plan (one launch, an odd number of passes) first copies the aliased
// input into the spare buffer and sorts from there. Outputs that overlap an input (other than
// exactly) or each other are a ConfigError.
class SortLauncher final : public Launcher {
 public:
  explicit SortLauncher(const Problem& p)
      : op_(parse_op(p.operation)),
        keys_(p.dtype),
        values_(op_ == Op::sort ? p.dtype : value_dtype_of(p, op_)),
        n_(p.n),
        max_n_(p.max_n),
        order_(key_order_of(p.options, p.dtype)) {}

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
    return words + spare_bytes();
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
    b.keys_spare = call.scratch + call.scratch_bytes - spare_bytes();
    b.values_spare = b.keys_spare + aligned(max_n_ * dtype_size(keys_));
    const auto n = static_cast<std::int64_t>(call.n);
    check_overlaps(b, call.n, target.where);
    // In place: copy the aliased input aside unless an even number of digit passes is run.
    std::uint32_t digit_passes = 0;  // of the launch that repeats; 0: none does
    for (const ResolvedLaunch& l : target.plan.launches)
      if (l.repeat > 1) digit_passes = passes_of(l, target.where);
    if (digit_passes % 2 == 0 && digit_passes > 0) {
      // the first pass writes the spare buffers: the input is read before anything is written
    } else {
      if (b.keys_in == b.keys_out) {
        GPUK_CU(driver().cuMemcpyDtoDAsync(b.keys_spare, b.keys_in, call.n * dtype_size(keys_), target.stream),
                target.where);
        b.keys_in = b.keys_spare;
      }
      if (b.values_in && b.values_in == b.values_out) {
        GPUK_CU(driver().cuMemcpyDtoDAsync(b.values_spare, b.values_in, call.n * dtype_size(values_), target.stream),
                target.where);
        b.values_in = b.values_spare;
      }
    }
    for (std::size_t i = 0; i < target.plan.launches.size(); ++i) {
      const ResolvedLaunch& l = target.plan.launches[i];
      const std::uint32_t passes = passes_of(l, target.where);
      for (std::uint32_t pass = 0; pass < passes; ++pass) {
        SortArgs a = pass_args(b, n, static_cast<int>(pass), static_cast<int>(passes));
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

  // How many times a launch runs: `repeat`, or for a digit pass under a bit window, the passes
  // its digit width needs for the window (the kernel's S::passes<R>()).
  std::uint32_t passes_of(const ResolvedLaunch& l, const std::string& where) const {
    const int key_bits = static_cast<int>(8 * dtype_size(keys_));
    if (l.repeat <= 1 || order_.sort_bits() == key_bits) return l.repeat;
    const int r = (key_bits + static_cast<int>(l.repeat) - 1) / static_cast<int>(l.repeat);
    if ((key_bits + r - 1) / r != static_cast<int>(l.repeat))
      throw Error(where + ": a launch with repeat: " + std::to_string(l.repeat) + " for " + std::to_string(key_bits) +
                  "-bit keys is not a digit pass (ceil(key bits / R) for a digit width R)");
    return static_cast<std::uint32_t>((order_.sort_bits() + r - 1) / r);
  }

  // Outputs may equal their own input (in place) but overlap nothing else they do not equal.
  void check_overlaps(const Buffers& b, std::uint64_t n, const std::string& where) const {
    struct Range {
      const char* name;
      CUdeviceptr at;
      std::uint64_t bytes;
      bool output;
    };
    const std::uint64_t kb = n * dtype_size(keys_), vb = n * dtype_size(values_);
    // On the stack: a prepared handle's call allocates nothing (tests/api/test_host_path.cpp).
    Range r[4] = {{"keys_in", b.keys_in, kb, false}, {"keys_out", b.keys_out, kb, true}, {}, {}};
    std::size_t count = 2;
    if (b.values_in) r[count++] = {"values_in", b.values_in, vb, false};
    if (b.values_out) r[count++] = {op_ == Op::argsort ? "indices_out" : "values_out", b.values_out, vb, true};
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t j = i + 1; j < count; ++j) {
        if (!r[i].output && !r[j].output) continue;  // inputs may share memory: they are only read
        const bool overlap = r[i].at < r[j].at + r[j].bytes && r[j].at < r[i].at + r[i].bytes;
        if (!overlap) continue;
        const bool in_place = r[i].at == r[j].at && r[i].bytes == r[j].bytes && !r[i].output && r[j].output &&
                              std::string(r[i].name).substr(0, 4) == std::string(r[j].name).substr(0, 4);
        if (in_place) continue;
        throw ConfigError(where + ": " + r[i].name + " and " + r[j].name +
                          " overlap; a sort may be in place (an output equal to its own input: keys_out == keys_in, "
                          "values_out == values_in) but no other output may overlap an input or another output");
      }
  }
  std::uint64_t spare_bytes() const {
    return aligned(max_n_ * dtype_size(keys_)) + (info(op_).values_out ? aligned(max_n_ * dtype_size(values_)) : 0);
  }

  // Pass p of `passes` writes the outputs when passes - 1 - p is even, the spare buffers
  // otherwise, so that the last pass lands in the outputs; pass 0 reads the input, every later
  // pass the one before. One pass of one (a launch that does not repeat) reads the input and
  // writes the outputs. Every launch also gets the run's input, outputs and (digit passes) spare
  // buffers, for a pass that picks its own (onesweep.cu's SKIP 1).
  SortArgs pass_args(const Buffers& b, std::int64_t n, int p, int passes) const {
    const bool values = info(op_).values_out;
    const auto keys_of = [&](int q) { return (passes - 1 - q) % 2 == 0 ? b.keys_out : b.keys_spare; };
    const auto values_of = [&](int q) -> CUdeviceptr {
      return values ? ((passes - 1 - q) % 2 == 0 ? b.values_out : b.values_spare) : 0;
    };
    SortArgs a{b.keys_in, keys_of(p), b.values_in, values_of(p), b.scratch, n, p, passes,
               b.keys_in, b.keys_out, passes > 1 ? b.keys_spare : 0,
               b.values_in, values ? b.values_out : 0, values && passes > 1 ? b.values_spare : 0};
    if (p > 0) {
      a.keys_in = keys_of(p - 1);
      a.values_in = values_of(p - 1);
    }
    return a;
  }

  Op op_;
  DType keys_, values_;
  std::uint64_t n_, max_n_;
  KeyOrder order_;
};

}  // namespace

std::unique_ptr<Launcher> make_sort_launcher(const Problem& problem) { return std::make_unique<SortLauncher>(problem); }

}  // namespace gpuk::sort
