// The Searcher family: find (the lowest index of a value), any (some index of it), count, and
// find_if (the lowest index whose element meets a comparison with a value), in an unsorted array;
// lower_bound and upper_bound of many needles in a sorted array (bounds.cpp).
// Kernel contract: docs/kernels/search.md and kernels_src/include/gpuk/search.cuh.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>
#include <type_traits>


#include "bounds.hpp"
#include "bounds_reference.hpp"
#include "gpuk/error.hpp"
#include "run/prepare.hpp"
#include "search_value.hpp"
#include "search_workload.hpp"
#include "searcher.hpp"
#include "thrust_baseline.hpp"
#include "util/host.hpp"

namespace gpuk::search {
namespace {

// At most this many needles prepared for: bounds_gather, one launch (its blocks gather the table
// that bounds.cu's first launch writes), whatever their order. docs/kernels/search.md, "Bounds".
constexpr std::uint64_t kFewNeedles = 65536;
// Needles in any order that bounds_gather still takes, with 256-thread blocks.
constexpr std::uint64_t kGatherNeedles = std::uint64_t{1} << 18;
// Sorted needles from which bounds_window takes its windows from a first launch (SPLITS 1).
constexpr std::uint64_t kSplitNeedles = std::uint64_t{1} << 23;
// Sorted needles at least this fraction of the keys: bounds_merge, which reads every key once
// (1/8: where bounds_window's windows are 8 keys a needle or fewer, their searches and staging
// cost more than reading the keys between them).
constexpr std::uint64_t kMergeKeysPerNeedle = 8;

const std::vector<DType> kDtypes = {DType::int32, DType::uint32, DType::int64, DType::float32, DType::float64};
const std::vector<std::string> kValueAt = {"random", "first", "last", "middle", "absent"};
const std::string kNone = "none";  // the default of `value` and `value_index`: not given

Mode parse_mode(const std::string& name) { return table_parse(kModes, name, "search").op; }

// The `compare` option (find_if's comparison; "eq" for the other operations).
Compare parse_compare(const std::string& name) {
  if (const CompareInfo* c = table_find(kCompares, name)) return c->op;
  throw ConfigError("compare: " + name + " is not a comparison (eq, ne, lt, le, gt, ge, range, closed_range)");
}
// Absent from a problem while at its default (eq: OptionSpec::omitted_at_default), so that
// find, any and count keep their tuning keys.
const std::string& compare_name(const Problem& p) {
  static const std::string kEq = "eq";
  const auto it = p.options.find("compare");
  return it == p.options.end() ? kEq : it->second;
}
Compare compare_of(const Problem& p) { return parse_compare(compare_name(p)); }
bool is_range(const Problem& p) { return info(compare_of(p)).two_values; }
std::string value_hi_of(const Problem& p) { return option_or(p, "value_hi", kNone.c_str()); }

// find_if names its comparison as the policy's third argument; find, any and count take the
// policy's default (Eq), so their names and compiled code are what they were.
std::string leading_arg(DType dtype, Mode mode, Compare compare) {
  if (info(mode).bounds) return "gpuk::Bounds<" + std::string(dtype_cuda_name(dtype)) + ", " + info(mode).device + ">";
  std::string args = std::string(dtype_cuda_name(dtype)) + ", " + info(mode).device;
  if (mode == Mode::find_if) args += std::string(", ") + info(compare).device;
  return "gpuk::Search<" + args + ">";
}

std::vector<std::string> compare_names() {
  std::vector<std::string> out;
  for (const CompareInfo& c : kCompares) out.emplace_back(c.name);
  return out;
}

// A config the data cannot serve; the runner adds the config's name.
[[noreturn]] void fail(const std::string& what) { throw ConfigError(what); }

// Checks the options against each other and against the problem's dtype and size (ConfigError,
// without a file name: the config reader adds it).
void check_options(const Problem& p) {
  const auto fail = [](const std::string& what) { throw ConfigError(what); };
  const std::string& value = p.option("value");
  const std::string& value_at = p.option("value_at");
  const std::string& value_index = p.option("value_index");
  const Compare compare = compare_of(p);
  const bool bounds = info(parse_mode(p.operation)).bounds;
  check_bounds_options(p, bounds);
  if (bounds && value_at != "random") fail("value_at is not an option of " + p.operation);
  if (compare != Compare::eq && parse_mode(p.operation) != Mode::find_if)
    fail("compare: " + compare_name(p) + " is find_if's option; " + p.operation + " matches with == (eq)");
  if (value != kNone && value_index != kNone)
    fail("give either value (" + value + ") or value_index (" + value_index + "), not both");
  if ((value != kNone || value_index != kNone) && value_at != "random")
    fail("value_at: " + value_at + " picks the value itself; it cannot be combined with " +
         (value != kNone ? "value" : "value_index"));
  if (value != kNone) {
    const bool ok = visit_dtype(p.dtype, [&](auto zero) { return parse_literal<decltype(zero)>(value).has_value(); });
    if (!ok) fail("value " + value + " is not a " + std::string(dtype_name(p.dtype)) + " value");
  }
  const std::string value_hi = value_hi_of(p);
  if (!info(compare).two_values && value_hi != kNone)
    fail("value_hi is the upper bound of compare: range or closed_range, not an option of compare: " + compare_name(p));
  if (value_hi != kNone && value_at == "absent")
    fail("value_at: absent picks the whole range (around a value no element equals); it cannot be combined with "
         "value_hi");
  if (value_hi != kNone) {
    const bool ok =
        visit_dtype(p.dtype, [&](auto zero) { return parse_literal<decltype(zero)>(value_hi).has_value(); });
    if (!ok) fail("value_hi " + value_hi + " is not a " + std::string(dtype_name(p.dtype)) + " value");
  }
  if (value_index != kNone) {
    const std::int64_t i = std::stoll(value_index);
    if (i < 0 || static_cast<std::uint64_t>(i) >= p.n)
      fail("value_index " + value_index + " is outside the data (size " + std::to_string(p.n) + ")");
  }
}

// Mirrors gpuk::SearchState in search.cuh: best = kNoIndex, count = 0, ticket = 0.
struct State {
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  std::uint64_t count = 0;
  std::uint32_t ticket = 0, unused = 0;
};
static_assert(sizeof(State) == 24);

// The search kernels' launches on device pointers: (in, n, value, out, state) for every launch;
// the state (scratch) is set once and every kernel leaves it as it found it. A range's value is
// gpuk::Range<T> {lo, hi}: two values packed as T[2], from the scalar's two 8-byte words.
class SearchLauncher final : public Launcher {
 public:
  explicit SearchLauncher(const Problem& p) : dtype_(p.dtype), n_(p.n), range_(is_range(p)) {}

  std::vector<ArraySlot> arrays() const override {
    return {{"input", false, std::string(dtype_name(dtype_)), n_ * dtype_size(dtype_), false},
            {"result", true, "int64", sizeof(std::int64_t), true}};
  }
  std::optional<ScalarSlot> scalar() const override {
    return range_ ? ScalarSlot{"range", dtype_, 2} : ScalarSlot{"value", dtype_, 1};
  }

  std::uint64_t scratch_bytes(const LaunchPlan&) const override { return sizeof(State); }

  void init_scratch(CUdeviceptr scratch, std::uint64_t, CUstream stream) const override {
    // The words of a fresh State, written by memsets (asynchronous, with no host memory to keep).
    GPUK_CU(driver().cuMemsetD8Async(scratch, 0, sizeof(State), stream));
    GPUK_CU(driver().cuMemsetD8Async(scratch, 0xFF, sizeof(std::int64_t) - 1, stream));
    GPUK_CU(driver().cuMemsetD8Async(scratch + sizeof(std::int64_t) - 1, 0x7F, 1, stream));
  }

  void launch(const LaunchTarget& target, const DeviceCall& call) const override {
    CUdeviceptr in = call.arrays[0], out = call.arrays[1], state = call.scratch;
    std::int64_t n = static_cast<std::int64_t>(call.n);
    alignas(8) unsigned char value[16] = {};
    const std::size_t size = dtype_size(dtype_);
    std::memcpy(value, call.scalar, size);
    if (range_) std::memcpy(value + size, static_cast<const unsigned char*>(call.scalar) + 8, size);
    void* args[] = {&in, &n, value, &out, &state};
    launch_plan(target, args);
  }

 private:
  DType dtype_;
  std::uint64_t n_;
  bool range_;
};

class SearchPlugin final : public Searcher {
 public:
  std::string name() const override { return "search"; }
  std::string description() const override {
    return "find (lowest index), any (some index) or count of a value in an unsorted array, or find_if: the lowest "
           "index whose element meets a comparison with a value; lower_bound and upper_bound of many needles in a "
           "sorted array";
  }
  std::vector<std::string> operations() const override { return table_names(kModes); }
  std::vector<DType> dtypes() const override { return kDtypes; }
  std::vector<OptionSpec> options() const override {
    return {
        {"value", OptionSpec::Kind::number, kNone, {},
         "the value to search for, exact in the dtype (nan and -0.0 allowed for floats)"},
        {"value_at", OptionSpec::Kind::choice, "random", kValueAt,
         "without value / value_index: search for the element at a random position (from data.seed), the first, "
         "the last, the middle one, or a value that is absent"},
        {"value_index", OptionSpec::Kind::integer, kNone, {}, "search for the element at this index"},
        {"compare", OptionSpec::Kind::choice, "eq", compare_names(),
         "find_if's comparison x OP value: eq (==), ne (!=), lt (<), le (<=), gt (>), ge (>=); a comparison with NaN "
         "is false, but != is true; range (value <= x < value_hi), closed_range (value <= x <= value_hi): a NaN is in "
         "no range, an empty range finds nothing. value_at: absent picks a value that no element meets it with",
         /*omitted_at_default=*/true},
        {"value_hi", OptionSpec::Kind::number, kNone, {},
         "compare: range or closed_range: the range's upper bound, exact in the dtype (value, value_index or value_at "
         "give its lower bound)",
         /*omitted_at_default=*/true},
        {"needles", OptionSpec::Kind::choice, "unsorted", {"unsorted", "sorted"},
         "lower_bound / upper_bound: the needles' order; sorted picks the kernel that reads each window of the "
         "haystack once per tile of needles (a run sorts the needles it draws)",
         /*omitted_at_default=*/true},
        {"needle_count", OptionSpec::Kind::integer, "65536", {},
         "lower_bound / upper_bound: how many needles (the most a prepared call takes; 0 allowed)",
         /*omitted_at_default=*/true},
    };
  }
  std::string default_kernel() const override { return "fast"; }
  // The bounds' kernels by the needles prepared for (docs/kernels/search.md, "Bounds"; `gpuk
  // tune` sweeps of float32 on an H200): few in one launch (bounds_gather), up to 2^18 in any
  // order the same with 256-thread blocks (2^18 in 2^20 keys: 0.0194 ms against bounds' ITEMS 2
  // pick's 0.0257); more sorted ones by windows (bounds_window), each tile's window from the
  // splits of a first launch from 2^23 (2^24 in 2^24 keys: 0.2297 against 0.2438 ms; at 2^22 the
  // first launch cost more than it saved: 0.0541 against 0.0531); sorted ones at least an eighth
  // of the keys by merge path (bounds_merge: bounds_window's tiles wait on chains of dependent
  // loads there; 2^24 in 2^24 keys 0.177 ms against 0.229, 2^24 in 2^20 0.104 against 0.164, but
  // 2^24 in 2^28, a sixteenth, 1.018 against 0.492; H200); more in any order from a table gathered
  // once (bounds).
  std::optional<KernelChoice> choose_kernel(const Problem& problem) const override {
    if (!info(parse_mode(problem.operation)).bounds) return std::nullopt;
    const std::uint64_t m = needle_count(problem);
    if (m <= kFewNeedles)
      return KernelChoice{"bounds_gather", {}, "for at most " + std::to_string(kFewNeedles) + " needles"};
    if (sorted_needles(problem)) {
      const std::uint64_t keys = std::max(problem.n, problem.max_n);
      if (m * kMergeKeysPerNeedle >= keys)
        return KernelChoice{"bounds_merge", {}, "for needles: sorted, at least 1/" + std::to_string(kMergeKeysPerNeedle) + " of the keys"};
      if (m > kSplitNeedles)
        return KernelChoice{"bounds_window", {{"BLOCKS_PER_SM", 8}, {"SPLITS", 1}},
                            "for needles: sorted, more than " + std::to_string(kSplitNeedles)};
      return KernelChoice{"bounds_window", {{"BLOCKS_PER_SM", 8}}, "for needles: sorted, more than " + std::to_string(kFewNeedles)};
    }
    if (m <= kGatherNeedles)
      return KernelChoice{"bounds_gather", {{"BLOCK", 256}}, "for at most " + std::to_string(kGatherNeedles) + " needles"};
    return KernelChoice{"bounds", {{"ITEMS", 2}, {"BLOCKS_PER_SM", 8}}, "for more than " + std::to_string(kGatherNeedles) + " needles"};
  }

  void check(const Problem& problem) const override { check_options(problem); }

  std::vector<std::string> template_args(const Problem& problem) const override {
    return {leading_arg(problem.dtype, parse_mode(problem.operation), compare_of(problem))};
  }

  std::vector<std::vector<std::string>> all_template_args(const KernelFile& file) const override {
    std::vector<std::vector<std::string>> out;
    for (const ModeInfo& m : kModes) {
      if (!file.supports(m.name)) continue;
      for (DType dtype : file.dtypes) {
        if (std::find(kDtypes.begin(), kDtypes.end(), dtype) == kDtypes.end()) continue;
        if (m.bounds) out.push_back({leading_arg(dtype, m.op, Compare::eq)});
        else if (m.op != Mode::find_if) out.push_back({leading_arg(dtype, m.op, Compare::eq)});
        else
          for (const CompareInfo& c : kCompares) out.push_back({leading_arg(dtype, m.op, c.op)});
      }
    }
    return out;
  }

  std::unique_ptr<Launcher> make_launcher(const Problem& problem) const override {
    if (info(parse_mode(problem.operation)).bounds) return make_bounds_launcher(problem);
    return std::make_unique<SearchLauncher>(problem);
  }

  std::unique_ptr<Workload> make_workload(const Problem& problem, InputView input) const override {
    const Mode mode = parse_mode(problem.operation);
    if (info(mode).bounds) {
      check_options(problem);
      return make_bounds_workload(problem, input);
    }
    const Value value = target(problem, input);
    const Value hi = is_range(problem) ? range_hi(problem, input) : value;
    return visit_dtype(input.dtype(), [&](auto zero) -> std::unique_ptr<Workload> {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, std::uint64_t>) {
        throw ConfigError("the search family does not support uint64");
      } else {
        return std::make_unique<SearchWorkload<T>>(input, mode, value.as<T>(), compare_of(problem), hi.as<T>());
      }
    });
  }

  std::int64_t search_on_cpu(const HostArray& input, const Value& value, Mode mode) const override {
    if (value.dtype != input.dtype())
      throw Error("search_on_cpu: a " + std::string(dtype_name(value.dtype)) + " value for " +
                  std::string(dtype_name(input.dtype())) + " data");
    return visit_dtype(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      return search_range(input.as<T>().data(), static_cast<std::int64_t>(input.size()), value.as<T>(), mode, cpu_threads());
    });
  }

  std::int64_t find_if_on_cpu(const HostArray& input, const Value& value, Compare compare,
                              const Value& hi) const override {
    for (const Value* v : {&value, &hi})
      if (v->dtype != input.dtype() && (v == &value || info(compare).two_values))
        throw Error("find_if_on_cpu: a " + std::string(dtype_name(v->dtype)) + " value for " +
                    std::string(dtype_name(input.dtype())) + " data");
    return visit_dtype(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      return search_range(input.as<T>().data(), static_cast<std::int64_t>(input.size()), value.as<T>(), Mode::find_if,
                          cpu_threads(), compare, hi.as<T>());
    });
  }

  void bounds_on_cpu(const HostArray& haystack, const HostArray& needles, bool upper, std::int64_t* out) const override {
    if (needles.dtype() != haystack.dtype())
      throw Error("bounds_on_cpu: " + std::string(dtype_name(needles.dtype())) + " needles in " +
                  std::string(dtype_name(haystack.dtype())) + " keys");
    visit_dtype(haystack.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (!is_ordered<T>(haystack.as<T>())) throw Error("bounds_on_cpu: the keys are not sorted (NaN last, -0.0 before 0.0)");
      bounds_range<T>(haystack.as<T>(), needles.as<T>(), upper, out, cpu_threads());
    });
  }

  Value target(const Problem& problem, const InputView& input) const override {
    check_options(problem);
    if (info(parse_mode(problem.operation)).bounds) fail(problem.operation + " has needles, not one value");
    if (input.dtype() != problem.dtype || input.size() != problem.n)
      fail("the data does not match the config's dtype and size");
    return visit_dtype(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const std::span<const T> data = input.as<T>();
      const std::string& value = problem.option("value");
      const std::string& value_index = problem.option("value_index");
      const std::string& at = problem.option("value_at");
      const std::uint64_t n = input.size();
      if (value != kNone) return Value::of(*parse_literal<T>(value));
      if (value_index != kNone) return Value::of(data[static_cast<std::size_t>(std::stoll(value_index))]);
      if (at == "absent" && is_range(problem)) {
        const auto r = absent_range<T>(data, compare_of(problem) == Compare::closed_range);
        if (!r) fail("value_at: absent, but every " + std::string(dtype_name(problem.dtype)) + " value occurs");
        return Value::of(r->first);
      }
      if (at == "absent") {
        const Compare compare = compare_of(problem);
        const auto v = absent_value<T>(data, compare);
        if (!v && compare == Compare::eq)
          fail("value_at: absent, but every " + std::string(dtype_name(problem.dtype)) + " value occurs");
        if (!v)
          fail("value_at: absent, but every value meets compare: " + compare_name(problem) + " with some element");
        return Value::of(*v);
      }
      const std::uint64_t i = at == "first" ? 0 : at == "last" ? n - 1 : at == "middle" ? n / 2 : random_position(input.seed(), n);
      return Value::of(data[static_cast<std::size_t>(i)]);
    });
  }

  Value range_hi(const Problem& problem, const InputView& input) const override {
    check_options(problem);
    if (!is_range(problem)) fail("compare: " + compare_name(problem) + " has one value, not a range");
    return visit_dtype(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (problem.option("value_at") == "absent") {
        const auto r = absent_range<T>(input.as<T>(), compare_of(problem) == Compare::closed_range);
        if (!r) fail("value_at: absent, but every " + std::string(dtype_name(problem.dtype)) + " value occurs");
        return Value::of(r->second);
      }
      // Only a run needs it: an operation prepared through the API takes lo and hi at each call.
      if (value_hi_of(problem) == kNone)
        fail("compare: " + compare_name(problem) + " needs value_hi, the range's upper bound (its lower bound: "
             "value, value_index or value_at)");
      return Value::of(*parse_literal<T>(value_hi_of(problem)));
    });
  }
};

}  // namespace
}  // namespace gpuk::search

GPUK_PLUGIN("search", gpuk::search::SearchPlugin)
