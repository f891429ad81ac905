// A run config (docs/configs.md): YAML -> RunSpec, checked against the family plugin and the
// kernel file's metadata, every error at its file:line:column: its data: block (a generator and
// its settings, NaNs to inject, or a .npy or raw file that says its own size and dtype), then its
// root. The same root, read in RootMode::tune, is the workload of a tune config (tune_config.cpp).
#include <algorithm>
#include <cmath>
#include <optional>

#include "kernel/default_kernel.hpp"
#include "config/config_parse.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

const std::vector<std::string> kCoreKeys = {"family",  "operation",   "kernel", "params",   "dtype",
                                            "size",    "data",        "warmup", "repeats",  "cpu_repeats",
                                            "verify",  "baseline",    "output", "variant",  "tuning"};
// A tune config: the workload keys of a run config, then the sweep's own.
const std::vector<std::string> kTuneKeys = {"family", "operation", "dtype",    "size",        "data",
                                            "warmup", "repeats",   "kernel",   "kernels",     "params",
                                            "constraints", "strategy", "budget", "seed", "recheck",
                                            "flush_l2", "show",    "save", "objective", "energy",
                                            "auto_repeats", "points"};

const std::vector<std::string> kDataKeys = {"generator", "low",  "high", "mean", "stddev", "distinct",
                                            "nan",       "seed", "file", "dtype"};

// A data file describes itself (a .npy header; a raw file's size in data.dtype elements): it is
// opened while the config is read, so that `gpuk check` fails on a missing or damaged file, and it
// gives the size and dtype a config leaves out.
struct HeldData {
  std::optional<FileContents> contents;  // none: the config generates its data
  YAML::Node node;                       // data.file, where errors about the file point
  std::string holds() const;             // "the data file holds N T elements"
};

std::string HeldData::holds() const {
  return "the data file holds " + std::to_string(contents->size) + " " + std::string(dtype_name(contents->dtype)) +
         " elements";
}

// A file gives the data: a generator's settings beside it would be ignored without a word.
void refuse_generator_with_file(const yaml::Source& src, const YAML::Node& data) {
  if (!data.IsMap() || !data["file"]) return;
  for (const char* key : {"generator", "low", "high", "mean", "stddev", "distinct", "seed"})
    if (data[key])
      src.fail(data[key], std::string("'") + key + "' sets up generated data, but data.file gives the data; "
                                                   "remove one of them");
}

}  // namespace

void refuse_unused_generator_settings(const yaml::Source& src, const YAML::Node& data, Generator generator) {
  if (!data.IsMap()) return;
  std::vector<std::string> uses;
  switch (generator) {
    case Generator::uniform:
    case Generator::sorted:
    case Generator::reversed: uses = {"low", "high", "range"}; break;
    case Generator::normal: uses = {"mean", "stddev"}; break;
    case Generator::few_distinct: uses = {"low", "high", "range", "distinct"}; break;
    case Generator::permutation: break;
  }
  const std::string name = data["generator"] ? data["generator"].Scalar() : "uniform";
  for (const char* key : {"low", "high", "range", "mean", "stddev", "distinct"})
    if (data[key] && std::find(uses.begin(), uses.end(), key) == uses.end())
      src.fail(data[key], std::string("'") + key + "' is not used by the " + name + " generator" +
                              (uses.empty() ? std::string(", which takes no settings but seed")
                                            : " (it uses " + join(uses) + ")") +
                              "; remove it or choose a generator that uses it");
}

namespace {

HeldData inspect_data_file(const yaml::Source& src, const YAML::Node& root) {
  HeldData held;
  if (const YAML::Node data = root["data"]; data && data.IsMap() && data["file"]) {
    held.node = data["file"];
    refuse_generator_with_file(src, data);
    DataSpec d;
    std::filesystem::path file = src.string(held.node, "file");
    d.file = file.is_relative() ? src.path.parent_path() / file : file;
    if (data["dtype"]) d.raw_dtype = parse_dtype(src.string(data["dtype"], "data.dtype"));
    if (data["dtype"] && !d.raw_dtype) src.fail(data["dtype"], "unknown dtype '" + data["dtype"].Scalar() + "'");
    try {
      held.contents = inspect_file(d);
    } catch (const ConfigError& e) {
      src.fail(held.node, e.what());
    }
    // A .npy says its own dtype: a data.dtype beside it that differs was accepted and ignored.
    if (d.raw_dtype && is_npy(*d.file) && held.contents->dtype != *d.raw_dtype)
      src.fail(data["dtype"], "data.dtype says " + std::string(dtype_name(*d.raw_dtype)) + ", but the .npy file holds " +
                                  std::string(dtype_name(held.contents->dtype)) +
                                  " elements (a .npy says its own dtype: data.dtype is for raw files; remove it)");
  }
  return held;
}

// The data: block of a workload of `size` elements of `dtype`.
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
  refuse_unused_generator_settings(src, node, d.generator);
  // NaN or infinity would make every element NaN (or the range empty): generated data that
  // verifies nothing.
  const auto finite = [&](const char* key) {
    const double v = src.number(node[key], key);
    if (!std::isfinite(v)) src.fail(node[key], std::string(key) + " must be a finite number, not '" + node[key].Scalar() + "'");
    return v;
  };
  if (node["low"]) d.low = finite("low");
  if (node["high"]) d.high = finite("high");
  if ((d.low || d.high) && uniform_range(d, dtype).low > uniform_range(d, dtype).high)  // a bound may be the dtype's
    src.fail(node["low"] ? node["low"] : node["high"], "low must not be above high");
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

void require_keys(const yaml::Source& src, const YAML::Node& root, const std::filesystem::path& path,
                  const HeldData& held) {
  for (const char* required : {"family", "operation", "size"}) {
    if (root[required] || (held.contents && std::string_view(required) == "size")) continue;
    // `operaton: argmax` is a misspelling, not a missing key: say so where it stands.
    for (const auto& item : root)
      if (item.first.IsScalar() && !did_you_mean(item.first.Scalar(), {required}).empty())
        src.fail(item.first, "unknown key '" + printable(item.first.Scalar()) + "'" +
                                 did_you_mean(item.first.Scalar(), {required}) + "; '" + required + "' is required");
    throw ConfigError(path.string() + ":1:1: missing '" + required + "'" +
                      (std::string_view(required) == "size" ? " (or a data.file to take it from)" : ""));
  }
}

// The family's plugin, the keys it and core know, and the operation.
const FamilyPlugin& family_and_operation(const yaml::Source& src, const YAML::Node& root, const PluginRegistry& plugins,
                                         RootMode mode, RunSpec& spec) {
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
  std::vector<std::string> allowed = mode == RootMode::run ? kCoreKeys : kTuneKeys;
  for (const auto& o : plugin->options()) allowed.push_back(o.name);
  src.check_keys(root, allowed, mode == RootMode::run ? "the config" : "the tune config");

  spec.operation = src.string(root["operation"], "operation");
  const auto ops = plugin->operations();
  if (std::find(ops.begin(), ops.end(), spec.operation) == ops.end())
    src.fail(root["operation"], no_such_operation(*plugin, spec.operation));
  return *plugin;
}

// The dtype and size: the config's, checked against the data file's when there is one, or the file's.
void dtype_and_size(const yaml::Source& src, const YAML::Node& root, const FamilyPlugin& plugin, const HeldData& held,
                    RunSpec& spec) {
  if (root["dtype"]) {
    const std::string name = src.string(root["dtype"], "dtype");
    const auto dtype = parse_dtype(name);
    const std::vector<DType> dtypes = plugin.dtypes();  // one vector: begin() and end() of the same
    if (!dtype || std::find(dtypes.begin(), dtypes.end(), *dtype) == dtypes.end())
      src.fail(root["dtype"], unsupported_dtype(plugin, name));
    spec.dtype = *dtype;
    if (held.contents && held.contents->dtype != spec.dtype)
      src.fail(root["dtype"], held.holds() + ", but the config asks for " + name + " (leave dtype out to take the file's)");
  } else if (held.contents) {
    const std::vector<DType> dtypes = plugin.dtypes();
    if (std::find(dtypes.begin(), dtypes.end(), held.contents->dtype) == dtypes.end())
      src.fail(held.node, held.holds() + "; " + unsupported_dtype(plugin, std::string(dtype_name(held.contents->dtype))));
    spec.dtype = held.contents->dtype;
  }

  if (root["size"]) {
    const auto size = src.integer(root["size"], "size");
    if (size <= 0) src.fail(root["size"], "size must be at least 1, not " + std::to_string(size));
    spec.size = static_cast<std::uint64_t>(size);
    if (held.contents && held.contents->size != spec.size)
      src.fail(root["size"], held.holds() + ", but the config asks for " + std::to_string(spec.size) +
                                 " (leave size out to take the file's)");
  } else {
    if (held.contents->size == 0) src.fail(held.node, held.holds() + "; a run needs at least 1");
    spec.size = held.contents->size;
  }
}

// Warm-up, repeats, verify, baseline, output, the family's options and the data.
void run_settings(const yaml::Source& src, const YAML::Node& root, const std::filesystem::path& path,
                  const FamilyPlugin& plugin, RunSpec& spec) {
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
  for (const auto& o : plugin.options()) {
    if (!root[o.name] && o.default_value.empty()) continue;
    const std::string value = root[o.name] ? checked_option(src, root[o.name], o) : o.default_value;
    if (!(o.omitted_at_default && value == o.default_value)) spec.options[o.name] = value;
  }

  spec.data = root["data"] ? parse_data(src, root["data"], spec.dtype, spec.size) : DataSpec{};
}

// A config that names a kernel (or parameters) runs exactly that; one that names none, the
// fastest known variant (run/choose.hpp); `variant: auto` says so explicitly.
void variant_pick(const yaml::Source& src, const YAML::Node& root, const std::filesystem::path& path, RunSpec& spec) {
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
}

// The kernel file, and the parameter values against its metadata.
void kernel_and_params(const yaml::Source& src, const YAML::Node& root, const std::filesystem::path& path,
                       const FamilyPlugin& plugin, const KernelLibrary& kernels, RunSpec& spec) {
  const YAML::Node kernel_node = root["kernel"];
  spec.kernel = kernel_node ? src.string(kernel_node, "kernel")
                            : default_kernel_for(kernels, spec.family, spec.operation, plugin.default_kernel());
  std::shared_ptr<const KernelFile> file;
  try {
    file = kernels.find(spec.family, spec.kernel);
  } catch (const ConfigError& e) {
    if (kernel_node) src.fail(kernel_node, e.what());
    throw ConfigError(path.string() + ": " + e.what());
  }
  check_operations(*file, plugin.operations());
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
}

}  // namespace

RunSpec parse_run_root(const yaml::Source& src, const YAML::Node& root, const std::filesystem::path& path,
                       const PluginRegistry& plugins, const KernelLibrary& kernels, RootMode mode) {
  if (root["sizes"]) return parse_declared_root(src, root, path, plugins, kernels, mode);
  // A family without operations of its own runs declared kernels: its config lacks `sizes:`,
  // not an operation.
  if (const YAML::Node family = root["family"]; family && family.IsScalar())
    if (const FamilyPlugin* plugin = plugins.find(family.Scalar()); plugin && plugin->operations().empty())
      throw ConfigError(path.string() + ":1:1: missing 'sizes': a config of the " + family.Scalar() +
                        " family gives its kernel's named sizes (sizes: {n: 1000}; docs/declared.md)");
  RunSpec spec;
  spec.path = path;
  const HeldData held = inspect_data_file(src, root);
  require_keys(src, root, path, held);
  const FamilyPlugin& plugin = family_and_operation(src, root, plugins, mode, spec);
  dtype_and_size(src, root, plugin, held, spec);
  run_settings(src, root, path, plugin, spec);

  // The family's own check of its options against each other, the dtype and the size; the error
  // points at the option it names first (file:line:column), else at the file.
  try {
    plugin.check(problem_of(spec));
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    std::size_t first = std::string::npos;
    YAML::Node named;
    for (const OptionSpec& o : plugin.options())
      if (const auto at = what.find(o.name); at != std::string::npos && at < first && root[o.name])
        first = at, named = root[o.name];
    if (named) src.fail(named, what);
    throw ConfigError(path.string() + ": " + what);
  }

  if (mode == RootMode::tune) return spec;  // the tune config's own parser takes kernels and params
  variant_pick(src, root, path, spec);
  kernel_and_params(src, root, path, plugin, kernels, spec);
  return spec;
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
  return parse_run_root(src, root, path, plugins, kernels, RootMode::run);
} catch (const YAML::Exception& e) {
  yaml::throw_config_error(path, 0, e);
}

}  // namespace gpuk
