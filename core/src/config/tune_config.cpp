// A tune config (docs/tuning.md): the workload of a run config (run_config.cpp), then the
// kernel files, the space (each parameter's value list, in the grammar of a kernel file's
// parameters: a value, a list, or values / range / pow2; the constraints), and the sweep's settings.
#include <algorithm>

#include "kernel/default_kernel.hpp"
#include "config/config_parse.hpp"
#include "config/tune_root.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

// The metadata's value-list grammar (kernel_file.cpp, parse_param): values / range / pow2.
std::vector<std::int64_t> value_list(const yaml::Source& src, const YAML::Node& node, const std::string& name) {
  std::vector<std::int64_t> out;
  if (node.IsScalar()) {
    out.push_back(src.integer(node, name));
  } else if (node.IsSequence()) {
    if (node.size() == 0) src.fail(node, name + ": the list of values is empty");
    for (const auto& v : node) out.push_back(src.integer(v, "a value of " + name));
  } else if (node.IsMap()) {
    src.check_keys(node, {"values", "range", "pow2"}, name);
    if (node["values"]) {
      if (!node["values"].IsSequence() || node["values"].size() == 0)
        src.fail(node["values"], name + ": values must be a non-empty list of integers");
      for (const auto& v : node["values"]) out.push_back(src.integer(v, "a value of " + name));
    }
    if (node["range"]) {
      const auto r = node["range"];
      if (!r.IsSequence() || r.size() < 2 || r.size() > 3)
        src.fail(r, name + ": range must be [low, high] or [low, high, step]");
      const std::int64_t lo = src.integer(r[0], "range"), hi = src.integer(r[1], "range");
      const std::int64_t step = r.size() == 3 ? src.integer(r[2], "range step") : 1;
      if (step <= 0 || lo > hi || (hi - lo) / step > 100000)
        src.fail(r, name + ": range needs low <= high, step > 0, at most 100000 values");
      for (std::int64_t v = lo; v <= hi; v += step) out.push_back(v);
    }
    if (node["pow2"]) {
      const auto r = node["pow2"];
      if (!r.IsSequence() || r.size() != 2) src.fail(r, name + ": pow2 must be [low, high]");
      const std::int64_t lo = src.integer(r[0], "pow2"), hi = src.integer(r[1], "pow2");
      if (lo < 1 || hi < lo || hi > (std::int64_t{1} << 40))
        src.fail(r, name + ": pow2 needs 1 <= low <= high <= 2^40");
      const std::size_t before = out.size();
      for (std::int64_t v = 1; v <= hi; v *= 2)
        if (v >= lo) out.push_back(v);
      if (out.size() == before) src.fail(r, name + ": pow2 range holds no power of two");
    }
    if (out.empty()) src.fail(node, name + ": give values: [...], range: [lo, hi] or pow2: [lo, hi]");
  } else {
    src.fail(node, name + ": give a value, a list, or values/range/pow2");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::vector<std::int64_t> parse_value_list(const std::string& yaml_text, const std::string& what) {
  const yaml::Source src{what, 0};
  return value_list(src, src.parse(yaml_text), what);
}

namespace {

// The kernel files: `kernel: X`, `kernels: [X, Y]` or `kernels: all`.
std::vector<std::shared_ptr<const KernelFile>> tuned_files(const yaml::Source& src, const YAML::Node& root,
                                                           const FamilyPlugin& plugin, const KernelLibrary& kernels,
                                                           TuneSpec& t) {
  const std::filesystem::path& path = src.path;
  RunSpec& spec = t.run;
  // A declared kernel is its own operation: `kernel:` names it, and `kernels:` may add more swept
  // beside it, on its arrays. The other families name their kernel files one way or the other.
  const bool declared = static_cast<bool>(spec.declared);
  if (root["kernel"] && root["kernels"] && !declared) src.fail(root["kernels"], "give kernel or kernels, not both");
  const auto fits = [&](const KernelFile& f) { return f.supports(spec.operation) && f.supports(spec.dtype); };
  std::vector<std::shared_ptr<const KernelFile>> files;
  if (const YAML::Node k = root["kernels"]; k && k.IsScalar() && k.Scalar() == "all") {
    t.all_kernels = true;
    for (const auto& f : kernels.family(spec.family))
      if (fits(*f)) files.push_back(f);
    if (files.empty())
      src.fail(k, "no " + spec.family + " kernel file implements " + spec.operation + " for " +
                      std::string(dtype_name(spec.dtype)));
  } else {
    const YAML::Node node = root["kernels"] ? root["kernels"] : root["kernel"];
    std::vector<YAML::Node> items;
    if (declared && root["kernel"] && root["kernels"]) items.push_back(root["kernel"]);
    if (!node) {
      spec.kernel = default_kernel_for(kernels, spec.family, spec.operation, plugin.default_kernel());
    } else if (node.IsScalar()) {
      items.push_back(node);
    } else if (node.IsSequence() && node.size() > 0) {
      for (const auto& item : node) items.push_back(item);
    } else {
      src.fail(node, "kernels must be 'all', a kernel file name, or a non-empty list of them");
    }
    std::vector<std::string> names;
    for (const auto& item : items) names.push_back(src.string(item, "a kernel name"));
    if (items.empty()) names.push_back(spec.kernel);
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::shared_ptr<const KernelFile> f;
      try {
        f = kernels.find(spec.family, names[i]);
      } catch (const ConfigError& e) {
        if (i < items.size()) src.fail(items[i], e.what());
        throw ConfigError(path.string() + ": " + e.what());
      }
      check_operations(*f, plugin.operations());
      const YAML::Node where = i < items.size() ? items[i] : root["operation"];
      if (!f->supports(spec.operation))
        src.fail(where, "kernel " + f->name + " does not implement '" + spec.operation + "' (it implements " +
                            join(f->operations) + ")");
      if (!f->supports(spec.dtype))
        src.fail(where, "kernel " + f->name + " does not support dtype " + std::string(dtype_name(spec.dtype)));
      if (std::none_of(files.begin(), files.end(), [&](const auto& g) { return g->name == f->name; }))
        files.push_back(f);
    }
  }
  return files;
}

// The space: per parameter, a value list in the metadata's grammar; the constraints on it.
void space_of(const yaml::Source& src, const YAML::Node& root, const std::vector<std::shared_ptr<const KernelFile>>& files,
              TuneSpec& t) {
  if (const auto params = root["params"]; params && !params.IsNull()) {
    if (!params.IsMap()) src.fail(params, "params must be a mapping NAME: values");
    for (const auto& item : params) {
      const std::string name = src.string(item.first, "a parameter name");
      std::vector<std::string> known;
      bool found = false;
      for (const auto& f : files)
        for (const auto& p : f->params) {
          found = found || p.name == name;
          if (std::find(known.begin(), known.end(), p.name) == known.end()) known.push_back(p.name);
        }
      if (!found)
        src.fail(item.first, "no kernel being tuned has a parameter '" + name + "'" + did_you_mean(name, known) +
                                 (known.empty() ? "; they have none" : "; their parameters: " + join(known)));
      t.params[name] = value_list(src, item.second, "parameter " + name);
    }
  }
  if (const auto points = root["points"]; points && !points.IsNull()) {
    if (!points.IsSequence()) src.fail(points, "points must be a list of mappings NAME: value (the points allowed)");
    for (const auto& item : points) {
      if (!item.IsMap()) src.fail(item, "a point is a mapping of each parameter to its value");
      std::map<std::string, std::int64_t> point;
      for (const auto& kv : item) {
        const std::string name = src.string(kv.first, "a parameter name");
        bool found = false;
        for (const auto& f : files) found = found || f->param(name);
        if (!found) src.fail(kv.first, "a point names '" + name + "', which no kernel being tuned has as a parameter");
        point[name] = src.integer(kv.second, "parameter " + name);
      }
      t.points.push_back(std::move(point));
    }
    if (t.points.empty()) src.fail(points, "points: lists no point (leave it out to sweep every point)");
  }
  if (const auto constraints = root["constraints"]) {
    if (!constraints.IsSequence()) src.fail(constraints, "constraints must be a list of expressions");
    for (const auto& item : constraints) {
      const std::string text = src.string(item, "a constraint");
      try {
        t.constraints.push_back({Expr::parse(text), src.line(item)});
      } catch (const ConfigError& e) {
        src.fail(item, "constraint '" + text + "': " + e.what());
      }
      for (const auto& id : t.constraints.back().expr.identifiers()) {
        bool known = id == "n" || id == "sm_count" || id == "elem_bytes" || id == "vec" || t.run.sizes.count(id);
        for (const auto& f : files) known = known || f->param(id);
        if (!known)
          src.fail(item, "constraint '" + text + "' names '" + id + "', which no kernel being tuned has" +
                             (t.run.sizes.empty() ? "" : " and which is not one of its sizes"));
      }
    }
  }
}

// How the space is searched: the strategy, its budget and seed, and the recheck of the leaders.
void search_settings(const yaml::Source& src, const YAML::Node& root, TuneSpec& t) {
  if (const YAML::Node s = root["strategy"]) {
    const std::string name = src.string(s, "strategy");
    const auto strategy = parse_strategy(name);
    if (!strategy)
      src.fail(s, "unknown strategy '" + name + "'" + did_you_mean(name, strategy_names()) +
                      "; strategies: " + join(strategy_names()));
    t.strategy = *strategy;
  }
  if (const YAML::Node b = root["budget"]) {
    const auto evaluations = [&](const YAML::Node& n) {
      const auto v = src.integer(n, "budget.evaluations");
      if (v < 1 || v > 10000000) src.fail(n, "the evaluation budget must be between 1 and 10000000");
      t.budget_evaluations = static_cast<int>(v);
    };
    if (b.IsScalar()) {
      evaluations(b);
    } else {
      src.check_keys(b, {"evaluations", "seconds"}, "budget");
      if (b["evaluations"]) evaluations(b["evaluations"]);
      if (b["seconds"]) {
        const double v = src.number(b["seconds"], "budget.seconds");
        if (!(v > 0)) src.fail(b["seconds"], "budget.seconds must be above 0");
        t.budget_seconds = v;
      }
    }
  }
  if (root["seed"]) {
    const auto v = src.integer(root["seed"], "seed");
    if (v < 0) src.fail(root["seed"], "seed must not be negative");
    t.seed = static_cast<std::uint64_t>(v);
  }
  if (const YAML::Node r = root["recheck"]) {
    src.check_keys(r, {"top", "repeats"}, "recheck");
    if (r["top"]) {
      const auto v = src.integer(r["top"], "recheck.top");
      if (v < 0 || v > 1000) src.fail(r["top"], "recheck.top must be between 0 and 1000");
      t.recheck_top = static_cast<int>(v);
    }
    if (r["repeats"] && r["repeats"].IsScalar() && r["repeats"].Scalar() == "auto") {
      t.recheck_auto = true;
    } else if (r["repeats"]) {
      t.recheck_auto = false;
      const auto v = src.integer(r["repeats"], "recheck.repeats");
      if (v < 1 || v > 1000000) src.fail(r["repeats"], "recheck.repeats must be between 1 and 1000000");
      t.recheck_repeats = static_cast<int>(v);
    }
  }
}

// objective: {metric: NAME, higher_is_better: BOOL}: a declared metric of the (first) kernel.
void read_metric_objective(const yaml::Source& src, const YAML::Node& o, const YAML::Node& save, TuneSpec& t) {
  src.check_keys(o, {"metric", "higher_is_better"}, "objective");
  if (!o["metric"]) src.fail(o, "objective as a mapping is {metric: NAME, higher_is_better: true|false}");
  const std::string name = src.string(o["metric"], "metric");
  std::vector<std::string> names;
  const Declaration* d = t.run.declared ? t.run.declared->declaration.get() : nullptr;
  if (d)
    for (const auto& m : d->metrics) names.push_back(m.name);
  const auto m = d ? std::find_if(d->metrics.begin(), d->metrics.end(), [&](const auto& x) { return x.name == name; })
                   : std::vector<DeclaredMetric>::const_iterator{};
  if (!d || m == d->metrics.end())
    src.fail(o["metric"], "'" + name + "' is not a metric of the kernel" + did_you_mean(name, names) + "; its metrics: " +
                              (names.empty() ? std::string("(none: a declaration names them under metrics:)") : join(names)));
  TuneSpec::MetricObjective objective{name, m->expression.text(), true};
  if (!o["higher_is_better"]) src.fail(o, "objective " + name + " needs higher_is_better: true or false");
  objective.higher_is_better = src.boolean(o["higher_is_better"], "higher_is_better");
  if (save && src.boolean(save, "save"))
    src.fail(save, "a sweep ranked by a metric saves no winner: the tuning database keeps winners by time, energy or edp");
  t.metric_objective = objective;
  t.save = false;
}

// How each point is measured and what is kept: the L2 flush, the table, the database, the
// objective, energy and auto repeats.
void measure_settings(const yaml::Source& src, const YAML::Node& root, TuneSpec& t) {
  if (const YAML::Node f = root["flush_l2"]) {
    const std::string v = src.string(f, "flush_l2");
    if (v == "auto") t.flush_l2 = FlushL2::automatic;
    else if (src.boolean(f, "flush_l2 (true, false or auto)")) t.flush_l2 = FlushL2::on;
    else t.flush_l2 = FlushL2::off;
  }
  if (root["show"]) {
    const auto v = src.integer(root["show"], "show");
    if (v < 1 || v > 100000) src.fail(root["show"], "show must be between 1 and 100000");
    t.show = static_cast<int>(v);
  }
  if (root["save"]) t.save = src.boolean(root["save"], "save");
  if (const YAML::Node o = root["objective"]; o && o.IsMap()) {
    read_metric_objective(src, o, root["save"], t);
  } else if (o) {
    const std::string name = src.string(o, "objective");
    const auto objective = parse_objective(name);
    if (!objective)
      src.fail(o, "unknown objective '" + name + "'" + did_you_mean(name, objective_names()) +
                      "; objectives: " + join(objective_names()));
    t.objective = *objective;
  }
  if (root["energy"]) t.energy = src.boolean(root["energy"], "energy");
  if (const YAML::Node a = root["auto_repeats"]) {
    src.check_keys(a, {"bound", "seconds"}, "auto_repeats");
    if (a["bound"]) {
      const double v = src.number(a["bound"], "auto_repeats.bound");
      if (!(v > 0 && v < 1)) src.fail(a["bound"], "auto_repeats.bound must be above 0 and below 1 (0.01: 1%)");
      t.auto_bound = v;
    }
    if (a["seconds"]) {
      const double v = src.number(a["seconds"], "auto_repeats.seconds");
      if (!(v > 0)) src.fail(a["seconds"], "auto_repeats.seconds must be above 0");
      t.auto_seconds = v;
    }
  }
}

}  // namespace

TuneSpec load_tune_spec(const std::filesystem::path& path, const PluginRegistry& plugins, const KernelLibrary& kernels) {
  return parse_tune_spec(read_regular_file_or_throw(path, kMaxConfigBytes, "the tune config"), path, plugins, kernels);
}

TuneSpec parse_tune_spec(const std::string& yaml_text, const std::filesystem::path& path,
                         const PluginRegistry& plugins, const KernelLibrary& kernels) try {
  const yaml::Source src{path, 0};
  return parse_tune_root(src, src.parse(yaml_text), plugins, kernels);
} catch (const YAML::Exception& e) {
  yaml::throw_config_error(path, 0, e);
}

TuneSpec parse_tune_root(const yaml::Source& src, const YAML::Node& root_in, const PluginRegistry& plugins,
                         const KernelLibrary& kernels) {
  const std::filesystem::path& path = src.path;
  YAML::Node root = root_in;  // a handle to the caller's tree, which a matrix reads again per cell
  if (!root.IsMap())
    throw ConfigError(path.string() + ":1:1: a tune config must be a YAML mapping (family:, operation:, kernels:, ...)");
  TuneSpec t;
  // `repeats: auto` (docs/tuning.md, "Noise-aware timing") is the sweep's; the run's parser
  // takes a number.
  const YAML::Node auto_repeats_node = root["repeats"];
  if (auto_repeats_node && auto_repeats_node.IsScalar() && auto_repeats_node.Scalar() == "auto") {
    t.auto_repeats = true;
    root = YAML::Clone(root_in);  // the caller's tree keeps its `repeats: auto`
    root.remove("repeats");
  }
  t.run = parse_run_root(src, root, path, plugins, kernels, RootMode::tune);
  RunSpec& spec = t.run;
  if (!root["warmup"]) spec.warmup = 5;
  if (!root["repeats"]) spec.repeats = 30;
  spec.cpu_repeats = 1;
  spec.baseline = false;
  const FamilyPlugin& plugin = plugins.get(spec.family);
  const std::vector<std::shared_ptr<const KernelFile>> files = tuned_files(src, root, plugin, kernels, t);
  for (const auto& f : files) t.kernels.push_back(f->name);
  spec.kernel = t.kernels.front();
  space_of(src, root, files, t);
  search_settings(src, root, t);
  measure_settings(src, root, t);
  return t;
}

}  // namespace gpuk
