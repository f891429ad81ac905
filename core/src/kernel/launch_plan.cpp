// A variant's launches for one problem on one device (when, repeat, grid, block, shared memory,
// scratch; constraints and device limits), and the check at load time that a kernel file can
// launch at all.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <set>

#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"
#include "kernel/expr_bounds.hpp"
#include "kernel/kernel_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {
// A bound on `repeat:`, so that a wrong expression fails at once instead of queueing forever.
constexpr std::int64_t kMostRepeats = 65536;
}  // namespace

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

namespace {

// A declared kernel's samples: every parameter sample with each size at 1, 64, 1000 and 4096.
void check_declared_can_launch(const std::shared_ptr<const KernelFile>& file) {
  const KernelFile& k = *file;
  std::string first_error;
  std::size_t tried = 0;
  bool only_when = true;  // every failure was a sample that its launches' `when` leave out
  for (const auto& params : parameter_samples(k)) {
    for (const std::int64_t size : {1, 64, 1000, 4096}) {
      LaunchLimits limits{size, 132, 4, 1024, 256 << 10, {}};
      for (const auto& name : k.declaration->sizes) limits.sizes[name] = size;
      try {
        const Variant variant(file, {}, params);
        if (broken_constraint(variant, limits)) continue;
        plan_launches(variant, limits);
        return;
      } catch (const ConfigError& e) {
        ++tried;
        if (first_error.empty()) first_error = e.what();
        only_when = only_when && std::string_view(e.what()).ends_with("(every launch's 'when' is 0)");
      }
    }
  }
  // A `when` of the sizes (n > 4096, n % 3 == 0) may hold at the sizes a config gives, which
  // `gpuk check` and every run plan: such a kernel loads.
  if (!first_error.empty() && !only_when)
    throw ConfigError(first_error + "; no launch of " + k.path.string() + " can run: the same holds for every one of " +
                      std::to_string(tried) + " samples of its parameters and of its sizes from 1 to 4096");
}

// A declared launch's arguments, resolved for the variant: arrays by their index among the
// declared arrays, scratch by its byte offset, values by their bytes.
std::vector<LaunchArg> resolve_args(const LaunchSpec& l, const Declaration& d, const Variant& variant,
                                    const std::map<std::string, std::int64_t>& sizes,
                                    const std::map<std::string, std::uint64_t>& scratch_offsets) {
  std::vector<std::string> names = l.args;
  if (names.empty())
    for (const auto& a : d.args) names.push_back(a.name);
  std::vector<LaunchArg> out;
  for (const auto& name : names) {
    LaunchArg arg;
    if (const auto it = scratch_offsets.find(name); it != scratch_offsets.end()) {
      arg.kind = LaunchArg::Kind::scratch;
      arg.bits = it->second;
    } else if (const DeclaredArg* a = d.arg(name); a && a->array) {
      arg.kind = LaunchArg::Kind::array;
      for (const auto& b : d.args) {
        if (&b == a) break;
        arg.index += b.array ? 1 : 0;
      }
    } else if (a) {
      arg.kind = LaunchArg::Kind::value;
      arg.size = static_cast<std::uint8_t>(dtype_size(a->dtype));
      const bool integral = !dtype_is_float(a->dtype);
      const std::int64_t i = a->value ? eval_declared(*a->value, variant, sizes, a->where, "value of " + a->name) : 0;
      const double f = a->value ? static_cast<double>(i) : a->literal;
      visit_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        // Checked where it narrows: the reference kernel would receive the same wrong value.
        if constexpr (std::is_integral_v<T>)
          if (a->value && !std::in_range<T>(i))
            throw ConfigError(a->where + ": value of " + a->name + " " + quote_expr(a->value->text()) + " of " +
                              variant.label() + " is " + std::to_string(i) + ", outside " + std::string(dtype_name(a->dtype)) +
                              "'s range [" + std::to_string(std::numeric_limits<T>::min()) + ", " +
                              std::to_string(std::numeric_limits<T>::max()) + "]");
        const T v = integral ? static_cast<T>(i) : static_cast<T>(f);
        std::memcpy(&arg.bits, &v, sizeof v);
      });
    } else {
      throw Error("internal: launch argument " + name + " of " + variant.label() + " is not declared");
    }
    out.push_back(arg);
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
  if (k.declaration) return check_declared_can_launch(file);
  for (const auto& params : parameter_samples(k)) {
    for (const int elem_bytes : elem_sizes) {
      for (const std::int64_t n : sizes) {
        const LaunchLimits limits{n, 132, elem_bytes, 1024, 256 << 10, {}};
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
  std::map<std::string, std::int64_t, std::less<>> extra = {
      {"n", limits.n},
      {"sm_count", limits.sm_count},
      {"elem_bytes", limits.elem_bytes},
      {"vec", limits.elem_bytes ? 16 / limits.elem_bytes : 1}};
  for (const auto& [name, value] : limits.sizes) extra[name] = value;
  const auto lookup = [&](std::string_view name) { return variant.lookup(name, extra); };
  // A declaration's launches and constraints may come from the YAML beside the kernel or a
  // config's declare:, whose lines they carry.
  const auto where = [&](int line, bool constraint = false) {
    const std::filesystem::path* from = &k.path;
    if (k.declaration && !(constraint ? k.declaration->constraints_from : k.declaration->launches_from).empty())
      from = constraint ? &k.declaration->constraints_from : &k.declaration->launches_from;
    return from->string() + ":" + std::to_string(line);
  };
  const auto eval = [&](const Expr& e, int line, const std::string& what) {
    try {
      return e.eval(lookup);
    } catch (const ConfigError& error) {
      throw ConfigError(where(line, what == "constraint") + ": " + what + " of " + variant.label() + ": " + error.what());
    }
  };
  for (const auto& c : k.constraints)
    if (eval(c.expr, c.line, "constraint") == 0)
      throw ConfigError(where(c.line, true) + ": " + variant.label() + " breaks the constraint '" + c.expr.text() +
                        "' for n = " + std::to_string(limits.n));
  LaunchPlan plan;
  plan.params = variant.params();
  for (const auto& l : k.launches) {
    // A launch with its own parameter values sees them in every expression (LaunchSpec::params).
    std::optional<Variant> overridden;
    const Variant& own = l.params.empty() ? variant : overridden.emplace(variant.for_launch(l));
    const auto eval_launch = [&](const Expr& e, int line, const std::string& what) {
      try {
        return e.eval([&](std::string_view name) { return own.lookup(name, extra); });
      } catch (const ConfigError& error) {
        throw ConfigError(where(line) + ": " + what + " of " + own.label() + ": " + error.what());
      }
    };
    if (l.when && eval_launch(*l.when, l.line, "when") == 0) continue;
    const std::int64_t repeat = l.repeat ? eval_launch(*l.repeat, l.line, "repeat") : 1;
    if (repeat < 1 || repeat > kMostRepeats)
      throw ConfigError(where(l.line) + ": repeat '" + l.repeat->text() + "' of " + own.label() + " is " +
                        std::to_string(repeat) + " for n = " + std::to_string(limits.n) + "; it must be between 1 and " +
                        std::to_string(kMostRepeats) + " (use when: to leave a launch out)");
    const std::int64_t grid = eval_launch(l.grid, l.line, "grid");
    const std::int64_t block = eval_launch(l.block, l.line, "block");
    std::int64_t grid_yz[2] = {1, 1}, block_yz[2] = {1, 1};
    for (std::size_t i = 0; i < l.grid_yz.size(); ++i) {
      grid_yz[i] = eval_launch(l.grid_yz[i], l.line, i ? "grid z" : "grid y");
      if (grid_yz[i] < 1 || grid_yz[i] > 65535)
        throw ConfigError(where(l.line) + ": grid " + (i ? "z" : "y") + " '" + l.grid_yz[i].text() + "' of " +
                          own.label() + " is " + std::to_string(grid_yz[i]) + "; it must be between 1 and 65535");
    }
    for (std::size_t i = 0; i < l.block_yz.size(); ++i) {
      block_yz[i] = eval_launch(l.block_yz[i], l.line, i ? "block z" : "block y");
      if (block_yz[i] < 1 || block_yz[i] > (i ? 64 : 1024))
        throw ConfigError(where(l.line) + ": block " + (i ? "z" : "y") + " '" + l.block_yz[i].text() + "' of " +
                          own.label() + " is " + std::to_string(block_yz[i]) + "; it must be between 1 and " +
                          (i ? "64" : "1024"));
    }
    const std::int64_t threads = block * block_yz[0] * block_yz[1];
    if (!l.block_yz.empty() && (block < 1 || threads > limits.max_threads_per_block))
      throw ConfigError(where(l.line) + ": block of " + own.label() + " is " + std::to_string(block) + " x " +
                        std::to_string(block_yz[0]) + " x " + std::to_string(block_yz[1]) + " = " +
                        std::to_string(threads) + " threads; this GPU allows 1 to " +
                        std::to_string(limits.max_threads_per_block) + " threads per block");
    const std::int64_t shared = eval_launch(l.shared_bytes, l.line, "shared");
    if (grid < 1 || grid > 0x7fffffff)
      throw ConfigError(where(l.line) + ": grid '" + l.grid.text() + "' of " + own.label() + " is " +
                        std::to_string(grid) + " for n = " + std::to_string(limits.n) +
                        "; it must be between 1 and 2^31-1");
    if (block < 1 || block > limits.max_threads_per_block)
      throw ConfigError(where(l.line) + ": block '" + l.block.text() + "' of " + own.label() + " is " +
                        std::to_string(block) + "; this GPU allows 1 to " +
                        std::to_string(limits.max_threads_per_block) + " threads per block");
    if (shared < 0 || shared > limits.max_shared_bytes)
      throw ConfigError(where(l.line) + ": shared '" + l.shared_bytes.text() + "' of " + own.label() +
                        " is " + std::to_string(shared) + " bytes; this GPU allows at most " +
                        std::to_string(limits.max_shared_bytes));
    ResolvedLaunch resolved;
    resolved.name_expression = own.name_expression(l);
    resolved.grid = static_cast<std::uint32_t>(grid);
    resolved.block = static_cast<std::uint32_t>(block);
    resolved.shared_bytes = static_cast<std::uint32_t>(shared);
    resolved.repeat = static_cast<std::uint32_t>(repeat);
    resolved.grid_y = static_cast<std::uint32_t>(grid_yz[0]);
    resolved.grid_z = static_cast<std::uint32_t>(grid_yz[1]);
    resolved.block_y = static_cast<std::uint32_t>(block_yz[0]);
    resolved.block_z = static_cast<std::uint32_t>(block_yz[1]);
    plan.launches.push_back(std::move(resolved));
  }
  if (k.declaration) {
    // The scratch arrays, each at a 256-byte boundary, and every launch's arguments.
    std::map<std::string, std::uint64_t> offsets;
    for (const auto& sc : k.declaration->scratch) {
      const std::int64_t length = eval_declared(sc.length, variant, limits.sizes, sc.where, "length of " + sc.name);
      if (length < 0 || length > (std::int64_t{1} << 40))
        throw ConfigError(sc.where + ": scratch " + sc.name + " of " + variant.label() + " has " +
                          std::to_string(length) + " elements");
      offsets[sc.name] = plan.scratch_bytes;
      plan.scratch_bytes += (static_cast<std::uint64_t>(length) * dtype_size(sc.dtype) + 255) / 256 * 256;
    }
    std::size_t i = 0;
    for (const auto& l : k.launches) {
      std::optional<Variant> overridden;
      const Variant& own = l.params.empty() ? variant : overridden.emplace(variant.for_launch(l));
      if (l.when && l.when->eval([&](std::string_view name) { return own.lookup(name, extra); }) == 0) continue;
      plan.launches[i++].args = resolve_args(l, *k.declaration, own, limits.sizes, offsets);
    }
  }
  if (plan.launches.empty())
    throw ConfigError((k.launches.empty() ? k.path.string() : where(k.launches.front().line)) + ": no launch of " + variant.label() + " runs for n = " +
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
  for (const auto& [name, value] : limits.sizes) builtins[name] = value;
  for (const auto& c : variant.file().constraints) {
    try {
      if (c.expr.eval([&](std::string_view name) { return variant.lookup(name, builtins); }) == 0) return &c;
    } catch (const ConfigError&) {
    }
  }
  return nullptr;
}

}  // namespace gpuk
