// A tuning matrix config read into cells. Each cell's config is assembled from nodes of the
// matrix's own YAML (the top-level settings, its `operations:` entry, one dtype, one size, one
// value per family option) and read by the plain tune config's parser, so a cell is checked
// exactly as `gpuk tune` checks a config, and every error names the matrix file's line. A
// declared kernel's cells are its named-size sets (`sizes: [{nx: 4096, ny: 4096}, ...]`): each
// cell's config is then a declared kernel's tune config (`kernel:` the entry's operation, `sizes:`
// one set), with no dtype, since its arrays have theirs in the declaration.
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
const std::vector<std::string> kMatrixKeys = {"family", "operations", "sizes", "dtypes", "kinds", "kind_tolerance"};
// The last four are a declared kernel's (its config's reference, comparison, declaration and
// baseline kernel); another family's cell refuses them as its plain config would, at their line.
const std::vector<std::string> kSharedKeys = {"data",     "warmup",   "repeats", "kernel",   "kernels",
                                              "params",   "constraints", "strategy", "budget", "seed",
                                              "recheck",  "flush_l2", "show",    "save",   "reference",
                                              "compare",  "declare",  "baseline"};
const std::vector<std::string> kEntryKeys = {"operation", "sizes",  "dtypes",   "data",   "warmup",  "repeats",
                                             "kernel",    "kernels", "params", "constraints", "strategy",
                                             "budget",    "recheck", "flush_l2", "reference", "compare",
                                             "declare",   "baseline", "kinds"};

// A list node's items, or the node itself when it is a single value.
// A list node's items, or the node itself when it is a single value (with `maps`, an item may
// also be a mapping: a declared kernel's named sizes).
std::vector<YAML::Node> items_of(const yaml::Source& src, const YAML::Node& node, const std::string& what,
                                 bool maps = false) {
  std::vector<YAML::Node> out;
  if (node.IsScalar() || (maps && node.IsMap())) return {node};
  if (!node.IsSequence() || node.size() == 0) src.fail(node, what + " must be a value or a non-empty list of values");
  for (const auto& item : node) {
    if (!item.IsScalar() && !(maps && item.IsMap()))
      src.fail(item, what + ": each item must be a single value");
    out.push_back(item);
  }
  return out;
}

std::string file_piece(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
  return out;
}

// Ordered key -> node, later settings replacing earlier ones. A YAML::Node's operator= writes
// through to the node it refers to (yaml-cpp's set_ref): assigning an entry's `data:` over the
// top level's would change the matrix's own tree, and every later entry would read the first
// entry's data. So a handle is only ever re-pointed (reset), and erase copies the others.
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

// A declared kernel's cell: its config names the kernel (the entry's operation: a declared kernel
// is its own operation) and one set of its named sizes. `kernels:` may list more kernels to sweep
// beside it (taking its arrays), the operation first.
void declared_cell(const yaml::Source& src, Settings& settings, const YAML::Node& operation, const YAML::Node& sizes) {
  const YAML::Node* kernels = nullptr;
  for (const auto& [key, value] : settings.items)
    if (key == "kernels" || key == "kernel") kernels = &value;
  if (!kernels) {
    settings.set("kernel", operation);
  } else {
    const YAML::Node first = kernels->IsSequence() && kernels->size() > 0 ? (*kernels)[0] : *kernels;
    if (!first.IsScalar() || first.Scalar() != operation.Scalar())
      src.fail(first, "a declared kernel is its own operation: this entry's kernels start with its operation, '" +
                          operation.Scalar() + "' (the others are swept beside it, on its arrays)");
  }
  settings.set("sizes", sizes);
}

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
  m.kernels = &kernels;
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
  if (const YAML::Node t = root["kind_tolerance"]) {
    m.kind_tolerance = src.number(t, "kind_tolerance");
    if (!(m.kind_tolerance >= 0 && m.kind_tolerance < 0.5))
      src.fail(t, "kind_tolerance is a fraction of the best worst-case ratio, from 0 (the best worst ratio only) "
                  "to below 0.5 (0.01 by default)");
  }

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
      src.fail(entry, "an entry of operations needs operation: (one or a list of " +
                          (plugin->operations().empty() ? std::string("declared kernels")
                                                        : join(plugin->operations())) + ")");
    const YAML::Node sizes = entry["sizes"] ? entry["sizes"] : root["sizes"];
    if (!sizes)
      src.fail(entry, std::string("no sizes: give sizes: ") +
                          (plugin->operations().empty() ? "[{nx: 4096, ny: 4096}, ...] (each a set of the kernel's named sizes)"
                                                        : "[2^10, 2^14, ...]") +
                          " at the top or in this entry");
    const auto size_nodes = items_of(src, sizes, "sizes", /*maps=*/true);
    // Named-size sets: the cells of a declared kernel, whose arrays have their dtypes.
    const bool named = size_nodes.front().IsMap();
    for (const auto& s : size_nodes) {
      if (s.IsMap() != named)
        src.fail(s, "sizes are all numbers (n) or all mappings of a declared kernel's named sizes, not both");
      if (!named && src.integer(s, "a size") < 1) src.fail(s, "sizes must be at least 1");
    }
    if (!named && plugin->operations().empty())  // a family whose operations are declared kernels
      src.fail(size_nodes.front(), "the " + m.family + " family's operations are declared kernels, whose cells are "
                                   "their named sizes: sizes: [{nx: 4096, ny: 4096}, ...]");
    const YAML::Node dtypes = entry["dtypes"] ? entry["dtypes"] : root["dtypes"];
    if (!dtypes && !named) src.fail(entry, "no dtypes: give dtypes: [float32, ...] at the top or in this entry");
    if (dtypes && named)
      src.fail(dtypes, "a declared kernel's cells are its named sizes; each array has its dtype in the declaration, "
                       "so leave dtypes: out");

    Settings settings = shared;
    if (entry["kernel"] || entry["kernels"]) {
      settings.erase("kernel");
      settings.erase("kernels");
    }
    for (const auto& key : kEntryKeys)
      if (key != "sizes" && key != "dtypes" && key != "kinds" && entry[key]) settings.set(key, entry[key]);
    const auto kinds = kinds_of(src, entry, root);

    const auto combos = option_combos(src, entry, root, option_names);

    std::vector<YAML::Node> dtype_nodes;
    if (named)
      dtype_nodes.emplace_back();  // one pass, no dtype
    else if (!(dtypes.IsScalar() && dtypes.Scalar() == "all"))
      dtype_nodes = items_of(src, dtypes, "dtypes");
    else  // `dtypes: all`: every dtype the family supports
      for (DType t : plugin->dtypes()) {
        YAML::Node n(std::string(dtype_name(t)));
        dtype_nodes.push_back(n);
      }

    for (const auto& operation : items_of(src, entry["operation"], "operation"))
      for (const auto& combo : combos)
        for (const auto& dtype : dtype_nodes)
          for (const auto& size : size_nodes)
            for (const auto& kind : kinds) {
              Settings cell_settings = settings;
              if (!named) cell_settings.set("operation", operation);
              for (std::size_t i = 0; i < option_names.size(); ++i)
                if (combo[i]) cell_settings.set(option_names[i], *combo[i]);
              if (named) {
                cell_settings.erase("operation");
                declared_cell(src, cell_settings, operation, size);
              } else {
                cell_settings.set("dtype", dtype);
                cell_settings.set("size", size);
              }
              if (!kind.name.empty()) cell_settings.set("data", kind.data);
              const YAML::Node node = cell_settings.node();
              MatrixCell cell;
              cell.index = m.cells.size();
              cell.line = src.line(operation);
              cell.spec = parse_tune_root(src, node, plugins, kernels);
              // Its winner goes into a tuning file as verified: a declared kernel's cell needs the
              // answer to verify against.
              if (!cell.spec.run.verify)
                src.fail(named ? size : operation,
                         "a tuning matrix exports verified winners, and this cell has nothing to verify against: give "
                         "reference: {kernel: NAME} (a kernel run once on the same inputs) or {npy: {OUTPUT: FILE}}");
              if (!root["save"]) cell.spec.save = false;  // a matrix fills its results, not the user's database
              // Timed as `gpuk run` times a variant and the library baseline beside it (no L2
              // flush), so that the cell's speed-up compares like with like.
              if (!root["flush_l2"] && !entry["flush_l2"]) cell.spec.flush_l2 = FlushL2::off;
              const RunSpec& r = cell.spec.run;
              const std::string options = options_key(r.options);  // a declared kernel's: its sizes
              cell.id = r.operation;
              if (!options.empty()) cell.id.append(" ").append(options);
              if (!named) cell.id.append(" ").append(dtype_name(r.dtype)).append(" ").append(size_text(r.size));
              cell.group = cell.id;
              cell.kind = kind.name;
              if (!kind.name.empty()) cell.id.append(" kind=").append(kind.name);
              if (!ids.insert(cell.id).second)
                src.fail(size, "the cell '" + cell.id + "' is in the matrix twice (an earlier entry has it already)");
              cell.file = r.operation;
              for (const auto& [k, v] : r.options) cell.file.append(".").append(file_piece(k)).append("-").append(file_piece(v));
              if (!named) cell.file.append(".").append(dtype_name(r.dtype)).append(".n").append(std::to_string(r.size));
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
