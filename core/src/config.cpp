#include "gpuk/config.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "gpuk/error.hpp"
#include "gpuk/kernel_file.hpp"
#include "gpuk/plugin.hpp"
#include "gpuk/text.hpp"
#include "yaml_util.hpp"

namespace gpuk {

namespace {

const std::vector<std::string> kCoreKeys = {"family",  "operation", "kernel",   "params",
                                            "dtype",   "size",      "data",     "warmup",
                                            "repeats", "cpu_repeats", "verify", "baseline", "output"};
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
  if (node["low"]) d.low = src.number(node["low"], "low");
  if (node["high"]) d.high = src.number(node["high"], "high");
  if (d.low > d.high) src.fail(node["low"] ? node["low"] : node, "low must not be above high");
  if (node["mean"]) d.mean = src.number(node["mean"], "mean");
  if (node["stddev"]) {
    d.stddev = src.number(node["stddev"], "stddev");
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

}  // namespace

bool RunSpec::option_bool(const std::string& name) const { return option(name) == "true"; }
std::int64_t RunSpec::option_int(const std::string& name) const { return std::stoll(option(name)); }
double RunSpec::option_number(const std::string& name) const { return std::stod(option(name)); }
const std::string& RunSpec::option(const std::string& name) const {
  const auto it = options.find(name);
  if (it == options.end()) throw Error("the config has no option '" + name + "'");
  return it->second;
}

RunSpec load_run_spec(const std::filesystem::path& path, const PluginRegistry& plugins, const KernelLibrary& kernels) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path.string() + ": cannot read the config file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_run_spec(text.str(), path, plugins, kernels);
}

RunSpec parse_run_spec(const std::string& yaml_text, const std::filesystem::path& path, const PluginRegistry& plugins,
                       const KernelLibrary& kernels) {
  const yaml::Source src{path, 0};
  const YAML::Node root = src.parse(yaml_text);
  if (!root.IsMap()) throw ConfigError(path.string() + ":1:1: a config must be a YAML mapping (family:, operation:, ...)");
  RunSpec spec;
  spec.path = path;

  for (const char* required : {"family", "operation", "size"})
    if (!root[required]) throw ConfigError(path.string() + ":1:1: missing '" + required + "'");

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
  std::vector<std::string> allowed = kCoreKeys;
  for (const auto& o : plugin->options()) allowed.push_back(o.name);
  src.check_keys(root, allowed, "the config");

  spec.operation = src.string(root["operation"], "operation");
  const auto ops = plugin->operations();
  if (std::find(ops.begin(), ops.end(), spec.operation) == ops.end())
    src.fail(root["operation"], "the " + spec.family + " family has no operation '" + spec.operation + "'" +
                                    did_you_mean(spec.operation, ops) + "; its operations: " + join(ops));

  if (root["dtype"]) {
    const std::string name = src.string(root["dtype"], "dtype");
    const auto dtype = parse_dtype(name);
    std::vector<std::string> supported;
    for (DType t : plugin->dtypes()) supported.emplace_back(dtype_name(t));
    if (!dtype || std::find(plugin->dtypes().begin(), plugin->dtypes().end(), *dtype) == plugin->dtypes().end())
      src.fail(root["dtype"], "unsupported dtype '" + name + "'" + did_you_mean(name, supported) +
                                  "; the " + spec.family + " family supports " + join(supported));
    spec.dtype = *dtype;
  }

  const auto size = src.integer(root["size"], "size");
  if (size <= 0) src.fail(root["size"], "size must be at least 1, not " + std::to_string(size));
  spec.size = static_cast<std::uint64_t>(size);

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

  for (const auto& o : plugin->options())
    spec.options[o.name] = root[o.name] ? checked_option(src, root[o.name], o) : o.default_value;

  spec.data = root["data"] ? parse_data(src, root["data"], spec.dtype, spec.size) : DataSpec{};

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
      const std::string name = item.first.as<std::string>();
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

}  // namespace gpuk
