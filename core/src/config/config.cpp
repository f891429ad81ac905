#include "config/config.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "config/tune_root.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "plugin/problem.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"
#include "util/yaml_util.hpp"

namespace gpuk {

Problem problem_of(const RunSpec& spec) {
  Problem p;
  p.family = spec.family;
  p.operation = spec.operation;
  p.dtype = spec.dtype;
  p.options = spec.options;
  p.n = p.max_n = spec.size;
  return p;
}

namespace {

const std::vector<std::string> kCoreKeys = {"family",  "operation",   "kernel", "params",   "dtype",
                                            "size",    "data",        "warmup", "repeats",  "cpu_repeats",
                                            "verify",  "baseline",    "output", "variant",  "tuning"};
// A tune config: the workload keys of a run config, then the sweep's own.
const std::vector<std::string> kTuneKeys = {"family", "operation", "dtype",    "size",        "data",
                                            "warmup", "repeats",   "kernel",   "kernels",     "params",
                                            "constraints", "strategy", "budget", "seed", "recheck",
                                            "flush_l2", "show",    "save", "objective", "energy",
                                            "auto_repeats"};

enum class Mode { run, tune };
const std::vector<std::string> kDataKeys = {"generator", "low",  "high", "mean", "stddev", "distinct",
                                            "nan",       "seed", "file", "dtype"};

std::string checked_option(const yaml::Source& src, const YAML::Node& node, const OptionSpec& o) {
  switch (o.kind) {
    case OptionSpec::Kind::boolean:
      return src.boolean(node, o.name) ? "true" : "false";
    case OptionSpec::Kind::integer:
      return std::to_string(src.integer(node, o.name));
    case OptionSpec::Kind::number:
      src.number(node, o.name);
      return node.Scalar();
    case OptionSpec::Kind::choice: {
      const std::string value = src.string(node, o.name);
      for (const auto& c : o.choices)
        if (c == value) return value;
      src.fail(node, o.name + " must be one of " + join(o.choices) + ", not '" + value + "'" +
                         did_you_mean(value, o.choices));
    }
  }
  return {};
}

// A file gives the data: a generator's settings beside it would be ignored without a word.
void refuse_generator_with_file(const yaml::Source& src, const YAML::Node& data) {
  if (!data.IsMap() || !data["file"]) return;
  for (const char* key : {"generator", "low", "high", "mean", "stddev", "distinct", "seed"})
    if (data[key])
      src.fail(data[key], std::string("'") + key + "' sets up generated data, but data.file gives the data; "
                                                   "remove one of them");
}

DataSpec parse_data(const yaml::Source& src, const YAML::Node& node, DType dtype, std::uint64_t size) {
  DataSpec d;
  src.check_keys(node, kDataKeys, "data");
  if (node["generator"]) {
    const std::string g = src.string(node["generator"], "generator");
    const auto gen = parse_generator(g);
    if (!gen)
      src.fail(node["generator"], "unknown generator '" + g + "'" +
                                      did_you_mean(g, {"uniform", "normal", "permutation", "sorted", "reversed",
                                                       "few_distinct"}) +
                                      "; generators: uniform, normal, permutation, sorted, reversed, few_distinct");
    d.generator = *gen;
  }
  refuse_generator_with_file(src, node);
  // NaN or infinity would make every element NaN (or the range empty): generated data that
  // verifies nothing.
  const auto finite = [&](const char* key) {
    const double v = src.number(node[key], key);
    if (!std::isfinite(v)) src.fail(node[key], std::string(key) + " must be a finite number, not '" + node[key].Scalar() + "'");
    return v;
  };
  if (node["low"]) d.low = finite("low");
  if (node["high"]) d.high = finite("high");
  if (d.low > d.high) src.fail(node["low"] ? node["low"] : node, "low must not be above high");
  if (node["mean"]) d.mean = finite("mean");
  if (node["stddev"]) {
    d.stddev = finite("stddev");
    if (d.stddev < 0) src.fail(node["stddev"], "stddev must not be negative");
  }
  if (node["distinct"]) {
    const auto v = src.integer(node["distinct"], "distinct");
    if (v < 1) src.fail(node["distinct"], "distinct must be at least 1");
    d.distinct = static_cast<std::uint64_t>(v);
  }
  if (node["seed"]) {
    const auto v = src.integer(node["seed"], "seed");
    if (v < 0) src.fail(node["seed"], "seed must not be negative");
    d.seed = static_cast<std::uint64_t>(v);
  }
  if (const auto nan = node["nan"]) {
    src.check_keys(nan, {"at", "count"}, "nan");
    if (!dtype_is_float(dtype))
      src.fail(nan, "NaN injection needs a floating-point dtype, not " + std::string(dtype_name(dtype)));
    if (nan["at"]) {
      if (!nan["at"].IsSequence()) src.fail(nan["at"], "nan.at must be a list of indices");
      for (const auto& item : nan["at"]) {
        const auto i = src.integer(item, "a NaN index");
        if (i < 0 || static_cast<std::uint64_t>(i) >= size)
          src.fail(item, "NaN index " + std::to_string(i) + " is outside the data (size " + std::to_string(size) + ")");
        d.nan.at.push_back(static_cast<std::uint64_t>(i));
      }
    }
    if (nan["count"]) {
      const auto c = src.integer(nan["count"], "nan.count");
      if (c < 0 || static_cast<std::uint64_t>(c) > size)
        src.fail(nan["count"], "nan.count must be between 0 and the size (" + std::to_string(size) + ")");
      d.nan.count = static_cast<std::uint64_t>(c);
    }
  }
  if (node["file"]) {
    std::filesystem::path file = src.string(node["file"], "file");
    if (file.is_relative()) file = src.path.parent_path() / file;
    d.file = file;
    if (node["dtype"]) {
      const std::string name = src.string(node["dtype"], "data.dtype");
      const auto t = parse_dtype(name);
      if (!t) src.fail(node["dtype"], "unknown dtype '" + name + "'");
      d.raw_dtype = *t;
    }
  } else if (node["dtype"]) {
    src.fail(node["dtype"], "data.dtype is for raw input files (data.file); the run's element type is the top-level dtype");
  }
  return d;
}

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

RunSpec parse_run_root(const yaml::Source& src, const YAML::Node& root, const std::filesystem::path& path,
                       const PluginRegistry& plugins, const KernelLibrary& kernels, Mode mode);

// Keys a tune config reads and a run config does not.
constexpr const char* kTuneOnlyKeys[] = {"kernels", "strategy", "budget", "constraints", "recheck"};

}  // namespace

std::vector<std::int64_t> parse_value_list(const std::string& yaml_text, const std::string& what) {
  const yaml::Source src{what, 0};
  return value_list(src, src.parse(yaml_text), what);
}

ConfigKind config_kind(const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception&) {
    return ConfigKind::run;
  }
  if (!root.IsMap()) return ConfigKind::run;
  if (root["operations"]) return ConfigKind::matrix;
  for (const char* key : kTuneOnlyKeys)
    if (root[key]) return ConfigKind::tune;
  return ConfigKind::run;
}

ConfigKind config_kind_of_file(const std::filesystem::path& path) {
  return config_kind(read_regular_file_or_throw(path, kMaxConfigBytes, "the config file"));
}

bool RunSpec::option_bool(const std::string& name) const { return option(name) == "true"; }
const std::string& RunSpec::option(const std::string& name) const {
  const auto it = options.find(name);
  if (it == options.end()) throw Error("the config has no option '" + name + "'");
  return it->second;
}

RunSpec load_run_spec(const std::filesystem::path& path, const PluginRegistry& plugins, const KernelLibrary& kernels,
                      const std::optional<std::filesystem::path>& input) {
  return parse_run_spec(read_regular_file_or_throw(path, kMaxConfigBytes, "the config file"), path, plugins, kernels,
                        input);
}

RunSpec parse_run_spec(const std::string& yaml_text, const std::filesystem::path& path, const PluginRegistry& plugins,
                       const KernelLibrary& kernels, const std::optional<std::filesystem::path>& input) try {
  const yaml::Source src{path, 0};
  YAML::Node root = src.parse(yaml_text);
  if (!root.IsMap()) throw ConfigError(path.string() + ":1:1: a config must be a YAML mapping (family:, operation:, ...)");
  if (input) {
    // `--input FILE.npy`: the array replaces the config's data, size and dtype.
    if (!is_npy(*input))
      throw ConfigError("--input " + input->string() + ": give a .npy file (it says its own dtype and size)");
    YAML::Node data(YAML::NodeType::Map);
    data["file"] = std::filesystem::absolute(*input).string();
    root["data"] = data;
    root.remove("size");
    root.remove("dtype");
  }
  for (const char* key : kTuneOnlyKeys)
    if (root[key])
      src.fail(root[key], std::string("'") + key + "' belongs to a tune config: run it with gpuk tune, not gpuk run");
  return parse_run_root(src, root, path, plugins, kernels, Mode::run);
} catch (const YAML::Exception& e) {
  yaml::throw_config_error(path, 0, e);
}

namespace {

RunSpec parse_run_root(const yaml::Source& src, const YAML::Node& root, const std::filesystem::path& path,
                       const PluginRegistry& plugins, const KernelLibrary& kernels, Mode mode) {
  RunSpec spec;
  spec.path = path;

  // A data file describes itself (a .npy header; a raw file's size in data.dtype elements): it is
  // opened now, so that `gpuk check` fails on a missing or damaged file, and it gives the size
  // and dtype a config leaves out.
  std::optional<FileContents> held;
  YAML::Node file_node;
  if (const YAML::Node data = root["data"]; data && data.IsMap() && data["file"]) {
    file_node = data["file"];
    refuse_generator_with_file(src, data);
    DataSpec d;
    std::filesystem::path file = src.string(file_node, "file");
    d.file = file.is_relative() ? src.path.parent_path() / file : file;
    if (data["dtype"]) d.raw_dtype = parse_dtype(src.string(data["dtype"], "data.dtype"));
    if (data["dtype"] && !d.raw_dtype) src.fail(data["dtype"], "unknown dtype '" + data["dtype"].Scalar() + "'");
    try {
      held = inspect_file(d);
    } catch (const ConfigError& e) {
      src.fail(file_node, e.what());
    }
  }
  const auto holds = [&] {
    return "the data file holds " + std::to_string(held->size) + " " + std::string(dtype_name(held->dtype)) +
           " elements";
  };

  for (const char* required : {"family", "operation", "size"}) {
    if (root[required] || (held && std::string_view(required) == "size")) continue;
    // `operaton: argmax` is a misspelling, not a missing key: say so where it stands.
    for (const auto& item : root)
      if (item.first.IsScalar() && !did_you_mean(item.first.Scalar(), {required}).empty())
        src.fail(item.first, "unknown key '" + printable(item.first.Scalar()) + "'" +
                                 did_you_mean(item.first.Scalar(), {required}) + "; '" + required + "' is required");
    throw ConfigError(path.string() + ":1:1: missing '" + required + "'" +
                      (std::string_view(required) == "size" ? " (or a data.file to take it from)" : ""));
  }

  const YAML::Node family_node = root["family"];
  spec.family = src.string(family_node, "family");
  const FamilyPlugin* plugin = plugins.find(spec.family);
  if (!plugin) {
    try {
      plugins.get(spec.family);
    } catch (const ConfigError& e) {
      src.fail(family_node, e.what());
    }
  }

  // Unknown keys: core's own plus the family's options.
  std::vector<std::string> allowed = mode == Mode::run ? kCoreKeys : kTuneKeys;
  for (const auto& o : plugin->options()) allowed.push_back(o.name);
  src.check_keys(root, allowed, mode == Mode::run ? "the config" : "the tune config");

  spec.operation = src.string(root["operation"], "operation");
  const auto ops = plugin->operations();
  if (std::find(ops.begin(), ops.end(), spec.operation) == ops.end())
    src.fail(root["operation"], no_such_operation(*plugin, spec.operation));

  if (root["dtype"]) {
    const std::string name = src.string(root["dtype"], "dtype");
    const auto dtype = parse_dtype(name);
    const std::vector<DType> dtypes = plugin->dtypes();  // one vector: begin() and end() of the same
    if (!dtype || std::find(dtypes.begin(), dtypes.end(), *dtype) == dtypes.end())
      src.fail(root["dtype"], unsupported_dtype(*plugin, name));
    spec.dtype = *dtype;
    if (held && held->dtype != spec.dtype)
      src.fail(root["dtype"], holds() + ", but the config asks for " + name + " (leave dtype out to take the file's)");
  } else if (held) {
    const std::vector<DType> dtypes = plugin->dtypes();
    if (std::find(dtypes.begin(), dtypes.end(), held->dtype) == dtypes.end())
      src.fail(file_node, holds() + "; " + unsupported_dtype(*plugin, std::string(dtype_name(held->dtype))));
    spec.dtype = held->dtype;
  }

  if (root["size"]) {
    const auto size = src.integer(root["size"], "size");
    if (size <= 0) src.fail(root["size"], "size must be at least 1, not " + std::to_string(size));
    spec.size = static_cast<std::uint64_t>(size);
    if (held && held->size != spec.size)
      src.fail(root["size"], holds() + ", but the config asks for " + std::to_string(spec.size) +
                                 " (leave size out to take the file's)");
  } else {
    if (held->size == 0) src.fail(file_node, holds() + "; a run needs at least 1");
    spec.size = held->size;
  }

  const auto count = [&](const char* key, int& out, int low) {
    if (!root[key]) return;
    const auto v = src.integer(root[key], key);
    if (v < low || v > 1000000) src.fail(root[key], std::string(key) + " must be between " + std::to_string(low) + " and 1000000");
    out = static_cast<int>(v);
  };
  count("warmup", spec.warmup, 0);
  count("repeats", spec.repeats, 1);
  count("cpu_repeats", spec.cpu_repeats, 1);
  if (root["verify"]) spec.verify = src.boolean(root["verify"], "verify");
  if (root["baseline"]) spec.baseline = src.boolean(root["baseline"], "baseline");
  if (root["output"]) {
    std::filesystem::path out = src.string(root["output"], "output");
    if (out.is_relative()) out = path.parent_path() / out;
    spec.output = out;
  }

  // An option without a default ("") is absent unless given: it leaves the problem, and the
  // tuning key, of configs that do not use it as they were. One marked omitted_at_default is
  // absent while it has its default value, given or not (OptionSpec).
  for (const auto& o : plugin->options()) {
    if (!root[o.name] && o.default_value.empty()) continue;
    const std::string value = root[o.name] ? checked_option(src, root[o.name], o) : o.default_value;
    if (!(o.omitted_at_default && value == o.default_value)) spec.options[o.name] = value;
  }

  spec.data = root["data"] ? parse_data(src, root["data"], spec.dtype, spec.size) : DataSpec{};

  // The family's own check of its options against each other, the dtype and the size.
  try {
    plugin->check(problem_of(spec));
  } catch (const ConfigError& e) {
    throw ConfigError(path.string() + ": " + e.what());
  }

  if (mode == Mode::tune) return spec;  // the tune config's own parser takes kernels and params

  // A config that names a kernel (or parameters) runs exactly that; one that names none, the
  // fastest known variant (run/choose.hpp); `variant: auto` says so explicitly.
  spec.pick = root["kernel"] || root["params"] ? RunSpec::Pick::named : RunSpec::Pick::lookup;
  if (const YAML::Node variant = root["variant"]) {
    const std::string v = src.string(variant, "variant");
    if (v != "auto" && v != "default")
      src.fail(variant, "variant must be 'auto' (the fastest known) or 'default' (the metadata's defaults), not '" + v +
                            "'");
    for (const char* key : {"kernel", "params"})
      if (root[key])
        src.fail(root[key], std::string("'") + key + "' and 'variant: " + v +
                                "' do not go together: a config names its kernel or says how to choose one; "
                                "remove one of them");
    if (v == "default") spec.pick = RunSpec::Pick::defaults;
  }
  if (const YAML::Node tuning = root["tuning"]) {
    if (spec.pick != RunSpec::Pick::lookup)
      src.fail(tuning, "'tuning' names the tuning file the lookup reads, but this config " +
                           std::string(spec.pick == RunSpec::Pick::named ? "names its kernel"
                                                                         : "says variant: default") +
                           "; remove one of them");
    std::filesystem::path file = src.string(tuning, "tuning");
    if (file.is_relative()) file = path.parent_path() / file;
    spec.tuning_file = file;
  }

  // The kernel file, and the parameter values against its metadata.
  const YAML::Node kernel_node = root["kernel"];
  spec.kernel = kernel_node ? src.string(kernel_node, "kernel") : plugin->default_kernel();
  std::shared_ptr<const KernelFile> file;
  try {
    file = kernels.find(spec.family, spec.kernel);
  } catch (const ConfigError& e) {
    if (kernel_node) src.fail(kernel_node, e.what());
    throw ConfigError(path.string() + ": " + e.what());
  }
  check_operations(*file, plugin->operations());
  if (!file->supports(spec.operation))
    src.fail(kernel_node ? kernel_node : root["operation"],
             "kernel " + file->name + " does not implement '" + spec.operation + "' (it implements " +
                 join(file->operations) + ")");
  if (!file->supports(spec.dtype))
    src.fail(root["dtype"] ? root["dtype"] : root, "kernel " + file->name + " does not support dtype " +
                                                       std::string(dtype_name(spec.dtype)));
  if (const auto params = root["params"]; params && !params.IsNull()) {
    if (!params.IsMap()) src.fail(params, "params must be a mapping NAME: value");
    for (const auto& item : params) {
      const std::string name = src.string(item.first, "a parameter name");
      spec.params[name] = src.integer(item.second, "parameter " + name);
      const ParamSpec* p = file->param(name);
      if (!p || !std::binary_search(p->values.begin(), p->values.end(), spec.params[name])) {
        try {
          Variant(file, {}, {{name, spec.params[name]}});  // words the error
        } catch (const ConfigError& e) {
          src.fail(p ? item.second : item.first, e.what());
        }
      }
    }
    try {
      Variant(file, {}, spec.params);
    } catch (const ConfigError& e) {
      src.fail(params, e.what());
    }
  }
  return spec;
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
  t.run = parse_run_root(src, root, path, plugins, kernels, Mode::tune);
  RunSpec& spec = t.run;
  if (!root["warmup"]) spec.warmup = 5;
  if (!root["repeats"]) spec.repeats = 30;
  spec.cpu_repeats = 1;
  spec.baseline = false;
  const FamilyPlugin& plugin = plugins.get(spec.family);

  // Kernel files: `kernel: X`, `kernels: [X, Y]` or `kernels: all`.
  if (root["kernel"] && root["kernels"]) src.fail(root["kernels"], "give kernel or kernels, not both");
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
    if (!node) {
      spec.kernel = plugin.default_kernel();
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
  for (const auto& f : files) t.kernels.push_back(f->name);
  spec.kernel = t.kernels.front();

  // The space: per parameter, a value list in the metadata's grammar.
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
        bool known = id == "n" || id == "sm_count" || id == "elem_bytes" || id == "vec";
        for (const auto& f : files) known = known || f->param(id);
        if (!known) src.fail(item, "constraint '" + text + "' names '" + id + "', which no kernel being tuned has");
      }
    }
  }

  if (const YAML::Node s = root["strategy"]) {
    const std::string name = src.string(s, "strategy");
    const std::vector<std::string> names = {"exhaustive", "random", "anneal", "bayes"};
    if (name == "exhaustive") t.strategy = TuneStrategy::exhaustive;
    else if (name == "random") t.strategy = TuneStrategy::random;
    else if (name == "anneal") t.strategy = TuneStrategy::anneal;
    else if (name == "bayes") t.strategy = TuneStrategy::bayes;
    else src.fail(s, "unknown strategy '" + name + "'" + did_you_mean(name, names) + "; strategies: " + join(names));
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
  if (const YAML::Node o = root["objective"]) {
    const std::string name = src.string(o, "objective");
    const std::vector<std::string> names = {"time", "energy", "edp"};
    if (name == "time") t.objective = TuneObjective::time;
    else if (name == "energy") t.objective = TuneObjective::energy;
    else if (name == "edp") t.objective = TuneObjective::edp;
    else src.fail(o, "unknown objective '" + name + "'" + did_you_mean(name, names) + "; objectives: " + join(names));
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
  return t;
}

}  // namespace gpuk
