// A tuning matrix config read into cells. Each cell's config is assembled from nodes of the
// matrix's own YAML (the top-level settings, its `operations:` entry, one dtype, one size, one
// value per family option) and read by the plain tune config's parser, so a cell is checked
// exactly as `gpuk tune` checks a config, and every error names the matrix file's line.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "config/tune_root.hpp"
#include "gpuk/error.hpp"
#include "plugin/plugin.hpp"
#include "run/choose.hpp"
#include "tune/matrix/matrix.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"
#include "util/yaml_util.hpp"

namespace gpuk {

namespace {

// The matrix's own keys; the rest of the top level (and of an entry) goes to every cell.
const std::vector<std::string> kMatrixKeys = {"family", "operations", "sizes", "dtypes", "kinds"};
const std::vector<std::string> kSharedKeys = {"data",     "warmup",   "repeats", "kernel",   "kernels",
                                              "params",   "constraints", "strategy", "budget", "seed",
                                              "recheck",  "flush_l2", "show",    "save"};
const std::vector<std::string> kEntryKeys = {"operation", "sizes",  "dtypes",   "data",   "warmup",  "repeats",
                                             "kernel",    "kernels", "params", "constraints", "strategy",
                                             "budget",    "recheck", "flush_l2", "kinds"};

// A list node's items, or the node itself when it is a single value.
std::vector<YAML::Node> items_of(const yaml::Source& src, const YAML::Node& node, const std::string& what) {
  std::vector<YAML::Node> out;
  if (node.IsScalar()) return {node};
  if (!node.IsSequence() || node.size() == 0) src.fail(node, what + " must be a value or a non-empty list of values");
  for (const auto& item : node) {
    if (!item.IsScalar()) src.fail(item, what + ": each item must be a single value");
    out.push_back(item);
  }
  return out;
}

std::string file_piece(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
  return out;
}

// Ordered key -> node, later settings replacing earlier ones. A YAML::Node is a handle whose
// assignment writes into the node it refers to (a node of the matrix's own tree): so a setting is
// replaced with reset() and removed by building the list again, never by assigning nodes (an
// entry's kernels: once overwrote the matrix's strategy: that way, through remove_if).
struct Settings {
  std::vector<std::pair<std::string, YAML::Node>> items;
  void set(const std::string& key, const YAML::Node& value) {
    for (auto& item : items)
      if (item.first == key) {
        item.second.reset(value);
        return;
      }
    items.emplace_back(key, value);
  }
  void erase(const std::string& key) {
    std::vector<std::pair<std::string, YAML::Node>> kept;
    for (const auto& item : items)
      if (item.first != key) kept.emplace_back(item.first, item.second);
    items.swap(kept);
  }
  YAML::Node node() const {
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& [key, value] : items) map.force_insert(key, value);  // the value keeps its mark
    return map;
  }
};

std::string emit(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return out.c_str();
}

}  // namespace

bool is_tune_matrix(const std::string& yaml_text) {
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    return root.IsMap() && root["operations"];
  } catch (const YAML::Exception&) {
    return false;  // the plain parser says what is wrong with it
  }
}

bool is_tune_matrix_file(const std::filesystem::path& path) {
  const RegularFile file = read_regular_file(path, kMaxConfigBytes);  // a FIFO would block
  return file.status == RegularFile::Status::ok && is_tune_matrix(file.text);
}

TuneMatrix load_tune_matrix(const std::filesystem::path& path, const PluginRegistry& plugins,
                            const KernelLibrary& kernels) {
  return parse_tune_matrix(read_regular_file_or_throw(path, kMaxConfigBytes, "the tuning matrix"), path, plugins,
                           kernels);
}

namespace {

// Every combination of the options' values (an entry's own, else the matrix's), the first
// option varying slowest; nullopt: the option's default.
std::vector<std::vector<std::optional<YAML::Node>>> option_combos(const yaml::Source& src, const YAML::Node& entry,
                                                                  const YAML::Node& root,
                                                                  const std::vector<std::string>& option_names) {
  std::vector<std::vector<YAML::Node>> choices;
  for (const auto& name : option_names) {
    const YAML::Node values = entry[name] ? entry[name] : root[name];
    choices.push_back(values ? items_of(src, values, name) : std::vector<YAML::Node>{});
  }
  std::vector<std::vector<std::optional<YAML::Node>>> combos = {{}};
  for (const auto& c : choices) {
    std::vector<std::vector<std::optional<YAML::Node>>> next;
    for (const auto& combo : combos) {
      if (c.empty()) {
        next.push_back(combo);
        next.back().push_back(std::nullopt);  // the option's default
      }
      for (const auto& v : c) {
        next.push_back(combo);
        next.back().push_back(v);
      }
    }
    combos = std::move(next);
  }
  return combos;
}

struct Kind {
  std::string name;  // "" : the entry has no kinds (one cell, its own data:)
  YAML::Node data;
};

// An entry's input kinds: its `kinds:` (a mapping, kind name -> data:), else the matrix's unless
// the entry gives its own data:; none is one kind without a name.
std::vector<Kind> kinds_of(const yaml::Source& src, const YAML::Node& entry, const YAML::Node& root) {
  if (entry["kinds"] && entry["data"])
    src.fail(entry["kinds"], "an entry has either data: (one input) or kinds: (a data: per input kind), not both");
  if (!entry["kinds"] && (entry["data"] || !root["kinds"])) return {Kind{}};
  const YAML::Node kinds = entry["kinds"] ? entry["kinds"] : root["kinds"];
  if (!kinds.IsMap() || kinds.size() == 0)
    src.fail(kinds, "kinds must be a mapping of input kinds, each a name and its data: "
                    "{uniform: {generator: uniform, ...}, d16: {generator: few_distinct, distinct: 16, ...}}");
  std::vector<Kind> out;
  for (const auto& item : kinds) {
    const std::string name = src.string(item.first, "a kind's name");
    if (name.empty() || file_piece(name) != name)
      src.fail(item.first, "a kind's name is letters, digits, _ and - (it names the cell's file): '" + name + "'");
    if (!item.second.IsMap()) src.fail(item.second, "kind " + name + ": its data is a mapping, as data: is");
    out.push_back({name, item.second});
  }
  return out;
}

}  // namespace

TuneMatrix parse_tune_matrix(const std::string& yaml_text, const std::filesystem::path& path,
                             const PluginRegistry& plugins, const KernelLibrary& kernels) try {
  const yaml::Source src{path, 0};
  const YAML::Node root = src.parse(yaml_text);
  if (!root.IsMap() || !root["operations"])
    throw ConfigError(path.string() + ":1:1: a tuning matrix is a YAML mapping with family: and operations:");
  if (!root["family"]) throw ConfigError(path.string() + ":1:1: missing 'family' (one family per matrix file)");
  TuneMatrix m;
  m.path = path;
  m.family = src.string(root["family"], "family");
  const FamilyPlugin* plugin = plugins.find(m.family);
  if (!plugin) {
    try {
      plugins.get(m.family);
    } catch (const ConfigError& e) {
      src.fail(root["family"], e.what());
    }
  }
  std::vector<std::string> option_names;
  for (const auto& o : plugin->options()) option_names.push_back(o.name);

  for (const char* key : {"operation", "dtype", "size"})
    if (root[key])
      src.fail(root[key], std::string("a tuning matrix lists its cells: operations: [{operation: ...}, ...], dtypes: "
                                      "[...] and sizes: [...], not '") + key + "'");
  std::vector<std::string> allowed = kMatrixKeys;
  allowed.insert(allowed.end(), kSharedKeys.begin(), kSharedKeys.end());
  allowed.insert(allowed.end(), option_names.begin(), option_names.end());
  src.check_keys(root, allowed, "the tuning matrix");

  // What every cell shares.
  Settings shared;
  shared.set("family", root["family"]);
  for (const auto& key : kSharedKeys)
    if (root[key]) shared.set(key, root[key]);

  const YAML::Node operations = root["operations"];
  if (!operations.IsSequence() || operations.size() == 0)
    src.fail(operations, "operations must be a non-empty list of entries, each with operation: and optionally "
                         "its options, dtypes, sizes, kernels and params");
  std::vector<std::string> entry_allowed = kEntryKeys;
  entry_allowed.insert(entry_allowed.end(), option_names.begin(), option_names.end());
  std::set<std::string> ids, files;
  for (const auto& entry : operations) {
    src.check_keys(entry, entry_allowed, "an entry of operations");
    if (!entry["operation"])
      src.fail(entry, "an entry of operations needs operation: (one or a list of " + join(plugin->operations()) + ")");
    const YAML::Node sizes = entry["sizes"] ? entry["sizes"] : root["sizes"];
    if (!sizes) src.fail(entry, "no sizes: give sizes: [2^10, 2^14, ...] at the top or in this entry");
    const YAML::Node dtypes = entry["dtypes"] ? entry["dtypes"] : root["dtypes"];
    if (!dtypes) src.fail(entry, "no dtypes: give dtypes: [float32, ...] at the top or in this entry");

    Settings settings = shared;
    if (entry["kernel"] || entry["kernels"]) {
      settings.erase("kernel");
      settings.erase("kernels");
    }
    for (const auto& key : kEntryKeys)
      if (key != "sizes" && key != "dtypes" && key != "kinds" && entry[key]) settings.set(key, entry[key]);
    const auto kinds = kinds_of(src, entry, root);

    const auto combos = option_combos(src, entry, root, option_names);

    const auto dtype_items = dtypes.IsScalar() && dtypes.Scalar() == "all" ? std::vector<YAML::Node>{}
                                                                            : items_of(src, dtypes, "dtypes");
    std::vector<YAML::Node> dtype_nodes = dtype_items;
    if (dtype_nodes.empty())  // `dtypes: all`: every dtype the family supports
      for (DType t : plugin->dtypes()) {
        YAML::Node n(std::string(dtype_name(t)));
        dtype_nodes.push_back(n);
      }
    const auto size_nodes = items_of(src, sizes, "sizes");
    for (const auto& s : size_nodes)
      if (src.integer(s, "a size") < 1) src.fail(s, "sizes must be at least 1");

    for (const auto& operation : items_of(src, entry["operation"], "operation"))
      for (const auto& combo : combos)
        for (const auto& dtype : dtype_nodes)
          for (const auto& size : size_nodes)
            for (const auto& kind : kinds) {
              Settings cell_settings = settings;
              cell_settings.set("operation", operation);
              for (std::size_t i = 0; i < option_names.size(); ++i)
                if (combo[i]) cell_settings.set(option_names[i], *combo[i]);
              cell_settings.set("dtype", dtype);
              cell_settings.set("size", size);
              if (!kind.name.empty()) cell_settings.set("data", kind.data);
              const YAML::Node node = cell_settings.node();
              MatrixCell cell;
              cell.index = m.cells.size();
              cell.line = src.line(operation);
              cell.spec = parse_tune_root(src, node, plugins, kernels);
              if (!root["save"]) cell.spec.save = false;  // a matrix fills its results, not the user's database
              // Timed as `gpuk run` times a variant and the library baseline beside it (no L2
              // flush), so that the cell's speed-up compares like with like.
              if (!root["flush_l2"] && !entry["flush_l2"]) cell.spec.flush_l2 = FlushL2::off;
              const RunSpec& r = cell.spec.run;
              const std::string options = options_key(r.options);
              cell.id = r.operation;
              if (!options.empty()) cell.id.append(" ").append(options);
              cell.id.append(" ").append(dtype_name(r.dtype)).append(" ").append(size_text(r.size));
              cell.group = cell.id;
              cell.kind = kind.name;
              if (!kind.name.empty()) cell.id.append(" kind=").append(kind.name);
              if (!ids.insert(cell.id).second)
                src.fail(size, "the cell '" + cell.id + "' is in the matrix twice (an earlier entry has it already)");
              cell.file = r.operation;
              for (const auto& [k, v] : r.options) cell.file.append(".").append(file_piece(k)).append("-").append(file_piece(v));
              cell.file.append(".").append(dtype_name(r.dtype)).append(".n").append(std::to_string(r.size));
              if (!kind.name.empty()) cell.file.append(".kind-").append(file_piece(kind.name));
              if (!files.insert(cell.file).second) cell.file.append("-").append(std::to_string(cell.index));
              cell.file += ".json";
              cell.settings = emit(node);
              m.cells.push_back(std::move(cell));
            }
  }
  return m;
} catch (const YAML::Exception& e) {
  yaml::throw_config_error(path, 0, e);
}

}  // namespace gpuk
