// A variant's launches for one problem on one device (when, repeat, grid, block, shared memory,
// scratch; constraints and device limits), and the check at load time that a kernel file can
// launch at all.
#include <algorithm>
#include <set>

#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {
// A bound on `repeat:`, so that a wrong expression fails at once instead of queueing forever.
constexpr std::int64_t kMostRepeats = 65536;

// A launch that no parameter values and no problem can run (a division by zero, pow2 or log2
// out of range, repeat past its bound, every `when` 0) fails loading, so that `gpuk check` says
// so instead of a GPU at launch time. The file is planned for samples: each parameter's default,
// smallest, middle and largest value (all combinations while they are few, else one parameter
// at a time), every n from 1 to 2^31-1 in a few steps, each dtype's element size, and the
// limits of any GPU (1024 threads, 256 KiB of shared memory). One sample that plans is enough;
// when samples meet the constraints and none plans, the first one's error is the file's.
std::vector<std::map<std::string, std::int64_t>> parameter_samples(const KernelFile& k) {
  std::vector<std::vector<std::int64_t>> choices;
  for (const auto& p : k.params) {
    std::vector<std::int64_t> v = {p.default_value};
    if (p.values.size() <= 4) {
      v.insert(v.end(), p.values.begin(), p.values.end());
    } else {
      v.insert(v.end(), {p.values.front(), p.values[p.values.size() / 2], p.values.back()});
    }
    std::sort(v.begin() + 1, v.end());
    v.erase(std::unique(v.begin() + 1, v.end()), v.end());
    v.erase(std::remove(v.begin() + 1, v.end(), p.default_value), v.end());
    choices.push_back(std::move(v));
  }
  std::uint64_t product = 1;
  for (const auto& c : choices) product = std::min<std::uint64_t>(product * c.size(), 1u << 20);
  std::vector<std::map<std::string, std::int64_t>> out;
  std::map<std::string, std::int64_t> defaults;
  for (std::size_t i = 0; i < k.params.size(); ++i) defaults[k.params[i].name] = choices[i][0];
  out.push_back(defaults);
  if (product <= 64) {
    out.clear();
    std::vector<std::size_t> at(choices.size(), 0);
    for (;;) {
      std::map<std::string, std::int64_t> m;
      for (std::size_t i = 0; i < choices.size(); ++i) m[k.params[i].name] = choices[i][at[i]];
      out.push_back(std::move(m));
      std::size_t i = 0;
      for (; i < choices.size() && ++at[i] == choices[i].size(); ++i) at[i] = 0;
      if (i == choices.size()) break;
    }
    return out;
  }
  for (std::size_t i = 0; i < choices.size(); ++i)
    for (std::size_t j = 1; j < choices[i].size(); ++j) {
      auto m = defaults;
      m[k.params[i].name] = choices[i][j];
      out.push_back(std::move(m));
    }
  return out;
}

}  // namespace

void check_can_launch(const std::shared_ptr<const KernelFile>& file) {
  const KernelFile& k = *file;
  std::set<int> elem_sizes;
  for (const DType d : k.dtypes) elem_sizes.insert(static_cast<int>(dtype_size(d)));
  const std::int64_t sizes[] = {1, 1000, 4096, std::int64_t{1} << 20, std::int64_t{1} << 26, (std::int64_t{1} << 31) - 1};
  std::string first_error;
  std::size_t tried = 0;
  for (const auto& params : parameter_samples(k)) {
    for (const int elem_bytes : elem_sizes) {
      for (const std::int64_t n : sizes) {
        const LaunchLimits limits{n, 132, elem_bytes, 1024, 256 << 10};
        const std::map<std::string, std::int64_t, std::less<>> builtins = {
            {"n", n}, {"sm_count", limits.sm_count}, {"elem_bytes", elem_bytes}, {"vec", 16 / elem_bytes}};
        const auto lookup = [&](std::string_view name) -> std::optional<std::int64_t> {
          if (const auto it = params.find(std::string(name)); it != params.end()) return it->second;
          if (const auto it = builtins.find(name); it != builtins.end()) return it->second;
          return std::nullopt;
        };
        // A sample the constraints leave out says nothing; one whose constraint cannot be
        // evaluated (a division by zero) counts as a failure.
        try {
          bool meets = true;
          for (const auto& c : k.constraints) meets = meets && c.expr.eval(lookup) != 0;
          if (!meets) continue;
          plan_launches(Variant(file, {}, params), limits);
          return;
        } catch (const ConfigError& e) {
          ++tried;
          if (first_error.empty()) first_error = e.what();
        }
      }
    }
  }
  if (!first_error.empty())
    throw ConfigError(first_error + "; no launch of " + k.path.string() + " can run: the same holds for every one of " +
                      std::to_string(tried) + " samples of its parameters and of n from 1 to 2^31-1");
}

LaunchPlan plan_launches(const Variant& variant, const LaunchLimits& limits) {
  const KernelFile& k = variant.file();
  const std::map<std::string, std::int64_t, std::less<>> extra = {
      {"n", limits.n},
      {"sm_count", limits.sm_count},
      {"elem_bytes", limits.elem_bytes},
      {"vec", limits.elem_bytes ? 16 / limits.elem_bytes : 1}};
  const auto lookup = [&](std::string_view name) { return variant.lookup(name, extra); };
  const auto where = [&](int line) { return k.path.string() + ":" + std::to_string(line); };
  const auto eval = [&](const Expr& e, int line, const std::string& what) {
    try {
      return e.eval(lookup);
    } catch (const ConfigError& error) {
      throw ConfigError(where(line) + ": " + what + " of " + variant.label() + ": " + error.what());
    }
  };
  for (const auto& c : k.constraints)
    if (eval(c.expr, c.line, "constraint") == 0)
      throw ConfigError(where(c.line) + ": " + variant.label() + " breaks the constraint '" + c.expr.text() +
                        "' for n = " + std::to_string(limits.n));
  LaunchPlan plan;
  for (const auto& l : k.launches) {
    if (l.when && eval(*l.when, l.line, "when") == 0) continue;
    const std::int64_t repeat = l.repeat ? eval(*l.repeat, l.line, "repeat") : 1;
    if (repeat < 1 || repeat > kMostRepeats)
      throw ConfigError(where(l.line) + ": repeat '" + l.repeat->text() + "' of " + variant.label() + " is " +
                        std::to_string(repeat) + " for n = " + std::to_string(limits.n) + "; it must be between 1 and " +
                        std::to_string(kMostRepeats) + " (use when: to leave a launch out)");
    const std::int64_t grid = eval(l.grid, l.line, "grid");
    const std::int64_t block = eval(l.block, l.line, "block");
    const std::int64_t shared = eval(l.shared_bytes, l.line, "shared");
    if (grid < 1 || grid > 0x7fffffff)
      throw ConfigError(where(l.line) + ": grid '" + l.grid.text() + "' of " + variant.label() + " is " +
                        std::to_string(grid) + " for n = " + std::to_string(limits.n) +
                        "; it must be between 1 and 2^31-1");
    if (block < 1 || block > limits.max_threads_per_block)
      throw ConfigError(where(l.line) + ": block '" + l.block.text() + "' of " + variant.label() + " is " +
                        std::to_string(block) + "; this GPU allows 1 to " +
                        std::to_string(limits.max_threads_per_block) + " threads per block");
    if (shared < 0 || shared > limits.max_shared_bytes)
      throw ConfigError(where(l.line) + ": shared '" + l.shared_bytes.text() + "' of " + variant.label() +
                        " is " + std::to_string(shared) + " bytes; this GPU allows at most " +
                        std::to_string(limits.max_shared_bytes));
    plan.launches.push_back({variant.name_expression(l), static_cast<std::uint32_t>(grid),
                             static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(shared),
                             static_cast<std::uint32_t>(repeat)});
  }
  if (plan.launches.empty())
    throw ConfigError(k.path.string() + ": no launch of " + variant.label() + " runs for n = " +
                      std::to_string(limits.n) + " (every launch's 'when' is 0)");
  plan.scratch_slots = eval(k.scratch, 1, "scratch");
  if (plan.scratch_slots < 0 || plan.scratch_slots > (std::int64_t{1} << 32))
    throw ConfigError(k.path.string() + ": scratch '" + k.scratch.text() + "' of " + variant.label() + " is " +
                      std::to_string(plan.scratch_slots) + " slots");
  return plan;
}

const Constraint* broken_constraint(const Variant& variant, const LaunchLimits& limits) {
  std::map<std::string, std::int64_t, std::less<>> builtins = {
      {"n", limits.n}, {"elem_bytes", limits.elem_bytes}, {"vec", limits.elem_bytes ? 16 / limits.elem_bytes : 1}};
  if (limits.sm_count > 0) builtins["sm_count"] = limits.sm_count;
  for (const auto& c : variant.file().constraints) {
    try {
      if (c.expr.eval([&](std::string_view name) { return variant.lookup(name, builtins); }) == 0) return &c;
    } catch (const ConfigError&) {
    }
  }
  return nullptr;
}

}  // namespace gpuk
