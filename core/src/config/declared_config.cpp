// A declared kernel's run or tune config (docs/declared.md): the kernel and its declaration (the
// config's `declare:` over the file's own), named sizes, the data of each input array, the
// reference, the comparison per output and a baseline kernel; every error at file:line:column.
#include <algorithm>
#include <cmath>

#include "config/config_parse.hpp"
#include "data/data_yaml.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kDeclaredRunKeys = {"family", "kernel", "sizes", "declare", "params", "variant",
                                                   "tuning", "data", "reference", "compare", "baseline", "warmup",
                                                   "repeats", "verify", "output"};
const std::vector<std::string> kDeclaredTuneKeys = {"family", "kernel", "kernels", "sizes", "declare", "data",
                                                    "reference", "compare", "warmup", "repeats", "params",
                                                    "constraints", "strategy", "budget", "seed", "recheck", "flush_l2",
                                                    "show", "save", "objective", "energy", "auto_repeats", "baseline",
                                                    "points"};

fs::path relative_to(const yaml::Source& src, const YAML::Node& node, const std::string& what) {
  fs::path file = src.string(node, what);
  return file.is_relative() ? src.path.parent_path() / file : file;
}

// A kernel of the family with a declaration: the file's own, or the config's `declare:` over it.
std::shared_ptr<const KernelFile> declared_kernel(const yaml::Source& src, const YAML::Node& name_node,
                                                  const YAML::Node* declare, const std::string& family,
                                                  const KernelLibrary& kernels) {
  const std::string name = src.string(name_node, "kernel");
  std::shared_ptr<const KernelFile> file;
  try {
    file = declare && *declare ? kernels.find_declarable(family, name) : kernels.find(family, name);
  } catch (const ConfigError& e) {
    src.fail(name_node, e.what());
  }
  if (declare && *declare) {
    auto declared = std::make_shared<KernelFile>(declare_kernel(*file, src, *declare));
    declared->family = family;
    kernels.declare(declared);
    return declared;
  }
  if (!file->declaration)
    src.fail(name_node, "kernel " + name + " (" + file->path.string() + ") has no declaration: give it in the config's " +
                            "declare:, in " + sidecar_of(file->path).filename().string() +
                            " beside it, or in a metadata block (docs/declared.md)");
  return file;
}

std::int64_t length_of(const DeclaredArg& a, const std::map<std::string, std::int64_t>& sizes) {
  return eval_sizes(a.length, sizes);
}

void read_sizes(const yaml::Source& src, const YAML::Node& node, const Declaration& d, RunSpec& spec) {
  if (!node.IsMap()) src.fail(node, "sizes must be a mapping NAME: value (" + join(d.sizes) + ")");
  for (const auto& item : node) {
    const std::string name = src.string(item.first, "a size");
    if (std::find(d.sizes.begin(), d.sizes.end(), name) == d.sizes.end())
      src.fail(item.first, "the kernel has no size '" + name + "'" + did_you_mean(name, d.sizes) + "; its sizes: " +
                               join(d.sizes));
    const std::int64_t v = src.integer(item.second, "size " + name);
    if (v < 1) src.fail(item.second, "size " + name + " must be at least 1");
    spec.sizes[name] = v;
  }
  for (const auto& name : d.sizes)
    if (!spec.sizes.count(name)) src.fail(node, "sizes has no '" + name + "' (the kernel's sizes: " + join(d.sizes) + ")");
  std::int64_t n = 1;
  for (const auto& [name, v] : spec.sizes)
    if (__builtin_mul_overflow(n, v, &n))
      src.fail(node, "the sizes' product is past 2^63 - 1: no run can hold so many elements");
  spec.size = static_cast<std::uint64_t>(n);
  // What every run evaluates at these sizes, evaluated now, so that `check` refuses what every
  // run would: the bytes moved, and each metric that names no parameter (with seconds = 1).
  if (d.bytes) {
    try {
      if (eval_sizes(*d.bytes, spec.sizes) < 0) throw ConfigError("a negative number of bytes");
    } catch (const ConfigError& e) {
      src.fail(node, "bytes '" + d.bytes->text() + "' at these sizes: " + e.what());
    }
  }
  std::map<std::string, double> values = {{"seconds", 1.0}};
  for (const auto& [name, v] : spec.sizes) values[name] = static_cast<double>(v);
  for (const auto& m : d.metrics) {
    bool sizes_only = true;
    for (const auto& id : m.expression.identifiers()) sizes_only = sizes_only && values.count(id);
    if (!sizes_only) continue;
    try {
      (void)m.expression.eval(values);
    } catch (const ConfigError& e) {
      src.fail(node, "metric '" + m.name + "' (" + m.where + ") at these sizes: " + e.what());
    }
  }
  for (const auto& a : d.args) {
    if (!a.array) continue;
    std::int64_t length = 0;
    try {
      length = length_of(a, spec.sizes);
    } catch (const ConfigError& e) {
      src.fail(node, "length of " + a.name + ": " + e.what());
    }
    if (length < 1 || length > (std::int64_t{1} << 40))
      src.fail(node, "array " + a.name + " has " + std::to_string(length) + " elements ('" + a.length.text() +
                         "') for these sizes; it needs 1 to 2^40");
  }
}

const DeclaredArg& array_named(const yaml::Source& src, const YAML::Node& key, const Declaration& d, bool output) {
  const std::string name = src.string(key, "an argument name");
  std::vector<std::string> names;
  for (const auto& a : d.args)
    if (a.array && (output ? a.role != ArgRole::in : a.role != ArgRole::out)) names.push_back(a.name);
  const DeclaredArg* a = d.arg(name);
  if (!a || std::find(names.begin(), names.end(), name) == names.end())
    src.fail(key, "'" + name + "' is not " + (output ? "an output" : "an input") + " array of the kernel" +
                      did_you_mean(name, names) + "; its " + (output ? "outputs" : "inputs") + ": " +
                      (names.empty() ? std::string("(none)") : join(names)));
  return *a;
}

// data: {ARG: {generator, range, seed, ...} | {npy: FILE}}; an input not named is uniform in
// [-1, 1] (integers: [0, 100]) with the seed 1 + its position among the arguments.
void read_data(const yaml::Source& src, const YAML::Node& node, const Declaration& d, RunSpec& spec) {
  for (std::size_t i = 0; i < d.args.size(); ++i) {
    const DeclaredArg& a = d.args[i];
    if (!a.array || a.role == ArgRole::out) continue;
    DataSpec ds;
    ds.seed = 1 + i;
    if (!dtype_is_float(a.dtype)) ds.low = 0, ds.high = 100;
    spec.arg_data[a.name] = ds;
  }
  if (!node) return;
  if (!node.IsMap()) src.fail(node, "data must be a mapping ARGUMENT: {generator: ..., range: [lo, hi], seed: ...} or {npy: FILE}");
  for (const auto& item : node) {
    // A constant's data (kernel/constants.hpp), over its declaration's; checked when it is made.
    const std::string name = src.string(item.first, "a name");
    if (const auto c = std::find_if(d.constants.begin(), d.constants.end(), [&](const auto& x) { return x.name == name; });
        c != d.constants.end()) {
      DataSpec defaults;
      if (!dtype_is_float(c->dtype)) defaults.low = 0, defaults.high = 100;
      const DataSpec& ds = spec.constant_data[name] =
          read_data_spec(src, item.second, "the data of constant " + name, c->data.value_or(defaults));
      if (!ds.file) refuse_unused_generator_settings(src, item.second, ds.generator);
      continue;
    }
    const DeclaredArg& a = array_named(src, item.first, d, false);
    const YAML::Node g = item.second;
    DataSpec& ds = spec.arg_data[a.name];
    ds = read_data_spec(src, g, "the data of " + a.name, ds);
    if (!ds.file) {
      refuse_unused_generator_settings(src, g, ds.generator);
      continue;
    }
    FileContents held;
    try {
      held = inspect_file(ds);
    } catch (const ConfigError& e) {
      src.fail(g["npy"], e.what());
    }
    const std::int64_t length = length_of(a, spec.sizes);
    if (held.dtype != a.dtype || held.size != static_cast<std::uint64_t>(length))
      src.fail(g["npy"], "the file holds " + std::to_string(held.size) + " " + std::string(dtype_name(held.dtype)) +
                             " elements; " + a.name + " takes " + std::to_string(length) + " " +
                             std::string(dtype_name(a.dtype)));
  }
}

// A reference, a baseline or another kernel of a sweep runs on the same arrays: refused here,
// as every run would refuse it.
void refuse_other_arrays(const yaml::Source& src, const YAML::Node& where, const KernelFile& other,
                         const Declaration& d, const std::string& rule) {
  if (!other.declaration->same_arrays(d))
    src.fail(where, "kernel " + other.name + " takes the arrays " + other.declaration->arrays_text() + ", but this " +
                        "config's kernel takes " + d.arrays_text() + "; " + rule);
}

void read_reference(const yaml::Source& src, const YAML::Node& node, const Declaration& d,
                    const KernelLibrary& kernels, RunSpec& spec) {
  src.check_keys(node, {"kernel", "params", "declare", "npy"}, "reference");
  if (node["kernel"] && node["npy"]) src.fail(node["npy"], "a reference is a kernel or .npy files, not both");
  if (node["kernel"]) {
    const YAML::Node declare = node["declare"];
    const auto file = declared_kernel(src, node["kernel"], &declare, spec.family, kernels);
    refuse_other_arrays(src, node["kernel"], *file, d, "a reference kernel takes the same arrays");
    if (file->name == spec.kernel)
      src.fail(node["kernel"], "kernel " + file->name + " is the kernel this config checks: its own answer verifies "
                               "nothing (other parameters run the same code); name another kernel (a naive one) or "
                               "give the expected outputs as npy: {OUTPUT: FILE}");
    spec.reference_kernel = file->name;
    if (const YAML::Node params = node["params"]) {
      if (!params.IsMap()) src.fail(params, "params must be a mapping NAME: value");
      for (const auto& item : params)
        spec.reference_params[src.string(item.first, "a parameter")] = src.integer(item.second, "a parameter value");
      try {
        Variant(file, {}, spec.reference_params);
      } catch (const ConfigError& e) {
        src.fail(params, e.what());
      }
    }
    return;
  }
  if (!node["npy"] || !node["npy"].IsMap())
    src.fail(node, "reference needs kernel: NAME (a kernel of the family run once on the same inputs) or "
                   "npy: {OUTPUT: FILE, ...}");
  for (const auto& item : node["npy"]) {
    const DeclaredArg& a = array_named(src, item.first, d, true);
    DataSpec file;
    file.file = relative_to(src, item.second, "npy");
    FileContents held;
    try {
      held = inspect_file(file);
    } catch (const ConfigError& e) {
      src.fail(item.second, e.what());
    }
    const std::int64_t length = length_of(a, spec.sizes);
    if (held.dtype != a.dtype || held.size != static_cast<std::uint64_t>(length))
      src.fail(item.second, "the file holds " + std::to_string(held.size) + " " + std::string(dtype_name(held.dtype)) +
                                " elements; output " + a.name + " has " + std::to_string(length) + " " +
                                std::string(dtype_name(a.dtype)));
    spec.expected[a.name] = *file.file;
  }
}

void read_compare(const yaml::Source& src, const YAML::Node& node, const Declaration& d, RunSpec& spec) {
  if (!node.IsMap()) src.fail(node, "compare must be a mapping OUTPUT: {atol, rtol} | {ulps} | {skip: true}, each with sum: true to compare the totals");
  for (const auto& item : node) {
    const DeclaredArg& a = array_named(src, item.first, d, true);
    const YAML::Node r = item.second;
    src.check_keys(r, {"atol", "rtol", "ulps", "skip", "sum"}, "the comparison of " + a.name);
    CompareRule rule;
    if (r["skip"]) rule.skip = src.boolean(r["skip"], "skip");
    if (r["sum"]) rule.sum = src.boolean(r["sum"], "sum");
    for (const char* key : {"atol", "rtol"}) {
      if (!r[key]) continue;
      const double v = src.number(r[key], key);
      if (!(v >= 0) || !std::isfinite(v)) src.fail(r[key], std::string(key) + " must be a number >= 0");
      (std::string_view(key) == "atol" ? rule.atol : rule.rtol) = v;
    }
    if (r["ulps"]) {
      if (r["atol"] || r["rtol"]) src.fail(r["ulps"], "give ulps or atol/rtol, not both");
      const auto v = src.integer(r["ulps"], "ulps");
      if (v < 0) src.fail(r["ulps"], "ulps must be >= 0");
      rule.ulps = v;
    }
    if (!dtype_is_float(a.dtype) && (rule.atol || rule.rtol || rule.ulps))
      src.fail(r, a.name + " is " + std::string(dtype_name(a.dtype)) + ": integers are compared exactly (or skip: true)");
    spec.compare[a.name] = rule;
  }
}

void read_counts(const yaml::Source& src, const YAML::Node& root, RunSpec& spec) {
  const auto count = [&](const char* key, int& out, int low) {
    if (!root[key] || (std::string_view(key) == "repeats" && root[key].IsScalar() && root[key].Scalar() == "auto")) return;
    const auto v = src.integer(root[key], key);
    if (v < low || v > 1000000) src.fail(root[key], std::string(key) + " must be between " + std::to_string(low) + " and 1000000");
    out = static_cast<int>(v);
  };
  count("warmup", spec.warmup, 0);
  count("repeats", spec.repeats, 1);
  if (root["verify"]) spec.verify = src.boolean(root["verify"], "verify");
  if (root["output"]) spec.output = relative_to(src, root["output"], "output");
}

}  // namespace

RunSpec parse_declared_root(const yaml::Source& src, const YAML::Node& root, const fs::path& path,
                            const PluginRegistry& plugins, const KernelLibrary& kernels, RootMode mode) {
  RunSpec spec;
  spec.path = path;
  if (!root["family"]) throw ConfigError(path.string() + ":1:1: missing 'family'");
  spec.family = src.string(root["family"], "family");
  try {
    plugins.get(spec.family);
  } catch (const ConfigError& e) {
    src.fail(root["family"], e.what());
  }
  src.check_keys(root, mode == RootMode::run ? kDeclaredRunKeys : kDeclaredTuneKeys,
                 mode == RootMode::run ? "the config of a declared kernel" : "the tune config of a declared kernel");
  if (!root["kernel"] && !root["kernels"])
    throw ConfigError(path.string() + ":1:1: missing 'kernel' (the declared kernel's file, without .cu)");
  // The sizes, the data and the outputs are the first kernel's (`kernel:`, else the first of
  // `kernels:`): every kernel of a sweep takes the same arguments, and `declare:` declares it.
  const YAML::Node listed = root["kernels"];
  const YAML::Node first = root["kernel"] ? root["kernel"] : listed.IsSequence() ? listed[0] : listed;
  if (!first || !first.IsScalar() || (!root["kernel"] && listed.IsScalar() && listed.Scalar() == "all"))
    src.fail(listed, "kernels must be a declared kernel or a list of them (kernels: all does not name the one whose "
                     "arrays the sweep takes)");
  const YAML::Node declare = root["declare"];
  const auto file = declared_kernel(src, first, &declare, spec.family, kernels);
  spec.declared = file;
  spec.kernel = file->name;
  spec.operation = file->name;
  const Declaration& d = *file->declaration;
  read_sizes(src, root["sizes"], d, spec);
  // The sizes are the problem's options too: the tuning database keys and the report show them.
  for (const auto& [name, v] : spec.sizes) spec.options[name] = std::to_string(v);
  read_data(src, root["data"], d, spec);
  try {
    spec.constants = constant_values(d, spec.sizes, spec.constant_data);
  } catch (const ConfigError& e) {
    src.fail(root["data"] ? root["data"] : root["sizes"], e.what());
  }
  if (root["reference"]) read_reference(src, root["reference"], d, kernels, spec);
  if (root["compare"]) read_compare(src, root["compare"], d, spec);
  if (root["baseline"]) {
    const auto baseline = declared_kernel(src, root["baseline"], nullptr, spec.family, kernels);
    refuse_other_arrays(src, root["baseline"], *baseline, d, "a baseline kernel takes the same arrays");
    spec.baseline_kernel = baseline->name;
  }
  spec.baseline = !spec.baseline_kernel.empty();
  if (!root["kernel"] && root["kernels"].IsSequence())
    for (const auto& item : root["kernels"])
      refuse_other_arrays(src, item, *declared_kernel(src, item, nullptr, spec.family, kernels), d,
                          "every kernel of a sweep takes the same arrays");
  read_counts(src, root, spec);
  if (spec.reference_kernel.empty() && spec.expected.empty()) {
    // Verified only against a reference: without one the run says it was not verified.
    if (root["verify"] && spec.verify)
      src.fail(root["verify"], "verify: true needs a reference (reference: {kernel: NAME} or {npy: {OUTPUT: FILE}})");
    spec.verify = false;
  }
  if (mode == RootMode::tune) return spec;

  // `kernel:` names the operation here, not the variant: params name a variant; without them the
  // lookup picks (variant: auto), or variant: default takes the declaration's defaults.
  spec.pick = root["params"] ? RunSpec::Pick::named : RunSpec::Pick::lookup;
  if (const YAML::Node variant = root["variant"]) {
    const std::string v = src.string(variant, "variant");
    if (v != "auto" && v != "default")
      src.fail(variant, "variant must be 'auto' (the fastest known) or 'default' (the declaration's defaults), not '" + v + "'");
    if (root["params"]) src.fail(root["params"], "'params' and 'variant: " + v + "' do not go together; remove one of them");
    if (v == "default") spec.pick = RunSpec::Pick::defaults;
  }
  if (const YAML::Node tuning = root["tuning"]) {
    if (spec.pick != RunSpec::Pick::lookup) src.fail(tuning, "'tuning' names the file the lookup reads; this config names its variant");
    spec.tuning_file = relative_to(src, tuning, "tuning");
  }
  if (const auto params = root["params"]; params && !params.IsNull()) {
    if (!params.IsMap()) src.fail(params, "params must be a mapping NAME: value");
    for (const auto& item : params) {
      const std::string name = src.string(item.first, "a parameter name");
      const std::int64_t value = spec.params[name] = src.integer(item.second, "parameter " + name);
      // An unknown name or a value not allowed is an error at its item; the constraints hold
      // between parameters, so they are checked once, on every named value together.
      const ParamSpec* p = file->param(name);
      if (p && std::binary_search(p->values.begin(), p->values.end(), value)) continue;
      try {
        Variant(file, {}, {{name, value}});
      } catch (const ConfigError& e) {
        src.fail(p ? item.second : item.first, e.what());
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
