#include "kernel/kernel_file.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "gpuk/dtype.hpp"
#include "gpuk/error.hpp"
#include "util/install_dirs.hpp"
#include "util/regular_file.hpp"
#include "util/safe_dirs.hpp"
#include "util/text.hpp"
#include "util/yaml_util.hpp"
#include "kernel/expr_bounds.hpp"
#include "kernel/metadata_parse.hpp"
#include "kernel/declaration.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kMetadataKeys = {"family", "operations", "dtypes", "summary", "fixes",
                                                "params", "constraints", "launch", "scratch"};

}  // namespace

bool valid_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

namespace {
// The names a metadata expression may use besides the file's parameters: what plan_launches
// binds for a problem on a device.
const std::vector<std::string> kBuiltinNames = {"n", "sm_count", "elem_bytes", "vec"};

}  // namespace

void refuse_too_many(const yaml::Source& src, const YAML::Node& node, const std::string& key, std::size_t most) {
  if (node && (node.IsSequence() || node.IsMap()) && node.size() > most)
    src.fail(node, key + ": " + std::to_string(node.size()) + " of them; a kernel file or a declaration has at most " +
                       std::to_string(most) + " (docs/reliability.md, Bounds on what gpuk reads)");
}

std::size_t identifier_offset(const std::string& text, const std::string& word) {
  const auto is_id = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_id(text[at - 1]);
    const bool ends = at + word.size() == text.size() || !is_id(text[at + word.size()]);
    if (starts && ends) return at;
  }
  return 0;
}

void fail_in_expr(const yaml::Source& src, const YAML::Node& node, std::size_t offset, const std::string& what) {
  const std::string& text = node.Scalar();
  if (text.find('\n') != std::string::npos)
    throw ConfigError(src.where(node.Mark()) + ": " + what + " (at column " + std::to_string(offset + 1) +
                      " of the expression)");
  YAML::Mark mark = node.Mark();
  // A quoted scalar's mark is its opening quote (yaml-cpp tags quoted scalars "!").
  mark.column += static_cast<int>(offset) + (node.Tag() == "!" ? 1 : 0);
  throw ConfigError(src.where(mark) + ": " + what);
}

// Parses a metadata expression and resolves every identifier in it now, against the parameters
// declared so far and the built-in names, so that a typo fails `gpuk check` (and loading) with
// file:line:col rather than a launch on a GPU.
Expr parse_metadata_expr(const yaml::Source& src, const YAML::Node& node, const std::string& what,
                         const std::vector<std::string>& params, const std::vector<std::string>& builtins) {
  const std::string text = src.string(node, what);
  Expr e;
  try {
    e = Expr::parse(text);
  } catch (const ExprSyntaxError& error) {
    fail_in_expr(src, node, error.offset(), what + " " + quote_expr(text) + ": " + error.reason());
  }
  for (const auto& id : e.identifiers()) {
    if (std::find(params.begin(), params.end(), id) != params.end() ||
        std::find(builtins.begin(), builtins.end(), id) != builtins.end())
      continue;
    std::vector<std::string> known = params;
    known.insert(known.end(), builtins.begin(), builtins.end());
    fail_in_expr(src, node, identifier_offset(text, id),
                 what + " " + quote_expr(text) + " names '" + id + "', which is not a parameter" + did_you_mean(id, known) +
                     "; it may use " +
                     (params.empty() ? std::string("no parameters (there are none)") : "the parameters " + join(params)) +
                     " and " + join(builtins));
  }
  return e;
}

namespace {
Expr parse_expr(const yaml::Source& src, const YAML::Node& node, const std::string& what,
                const std::vector<std::string>& params) {
  return parse_metadata_expr(src, node, what, params, kBuiltinNames);
}
}  // namespace

ParamSpec parse_metadata_param(const yaml::Source& src, const std::string& name, const YAML::Node& node) {
  ParamSpec p;
  p.name = name;
  p.line = src.line(node);
  if (!valid_identifier(name)) src.fail(node, "parameter name '" + name + "' is not an identifier");
  src.check_keys(node, {"default", "values", "range", "pow2"}, "parameter " + name);
  if (node["values"]) {
    if (!node["values"].IsSequence() || node["values"].size() == 0)
      src.fail(node["values"], "parameter " + name + ": values must be a non-empty list of integers");
    if (node["values"].size() > 100000)
      src.fail(node["values"], "parameter " + name + ": at most 100000 values (as range: allows)");
    for (const auto& v : node["values"]) p.values.push_back(src.integer(v, "a value of " + name));
  }
  // range: [lo, hi] or [lo, hi, step]; pow2: [lo, hi] = powers of two from lo to hi.
  if (node["range"]) {
    const auto r = node["range"];
    if (!r.IsSequence() || r.size() < 2 || r.size() > 3)
      src.fail(r, "parameter " + name + ": range must be [low, high] or [low, high, step]");
    const std::int64_t lo = src.integer(r[0], "range"), hi = src.integer(r[1], "range");
    const std::int64_t step = r.size() == 3 ? src.integer(r[2], "range step") : 1;
    if (step <= 0 || lo > hi || (hi - lo) / step > 100000)
      src.fail(r, "parameter " + name + ": range needs low <= high, step > 0, at most 100000 values");
    for (std::int64_t v = lo; v <= hi; v += step) p.values.push_back(v);
  }
  if (node["pow2"]) {
    const auto r = node["pow2"];
    if (!r.IsSequence() || r.size() != 2)
      src.fail(r, "parameter " + name + ": pow2 must be [low, high]");
    const std::int64_t lo = src.integer(r[0], "pow2"), hi = src.integer(r[1], "pow2");
    if (lo < 1 || hi < lo || hi > (std::int64_t{1} << 40))
      src.fail(r, "parameter " + name + ": pow2 needs 1 <= low <= high <= 2^40");
    for (std::int64_t v = 1; v <= hi; v *= 2)
      if (v >= lo) p.values.push_back(v);
    if (p.values.empty()) src.fail(r, "parameter " + name + ": pow2 range holds no power of two");
  }
  if (!node["default"]) src.fail(node, "parameter " + name + " has no default");
  p.default_value = src.integer(node["default"], "the default of " + name);
  std::sort(p.values.begin(), p.values.end());
  p.values.erase(std::unique(p.values.begin(), p.values.end()), p.values.end());
  if (p.values.empty()) p.values.push_back(p.default_value);
  if (!std::binary_search(p.values.begin(), p.values.end(), p.default_value))
    src.fail(node["default"], "the default of " + name + " (" + std::to_string(p.default_value) +
                                  ") is not among its allowed values");
  return p;
}

namespace {

bool has_metadata_block(const std::string& source) {
  const std::size_t pos = source.find_first_not_of(" \t\r\n");
  const std::string opener = "/* gpuk";
  return pos != std::string::npos && source.compare(pos, opener.size(), opener) == 0 &&
         (pos + opener.size() == source.size() || std::isspace(static_cast<unsigned char>(source[pos + opener.size()])));
}

}  // namespace

KernelFile KernelFile::load(const fs::path& path) {
  std::string source = read_regular_file_or_throw(path, kMaxKernelFileBytes, "the kernel file");
  if (has_metadata_block(source)) return parse(source, path);
  // No metadata block: plain CUDA, declared by the YAML file beside it, or by a config.
  KernelFile k;
  k.path = path;
  k.name = path.stem().string();
  k.source = std::move(source);
  std::error_code ec;
  if (fs::is_regular_file(sidecar_of(path), ec)) {
    const fs::path sidecar = sidecar_of(path);
    const std::string text = read_regular_file_or_throw(sidecar, kMaxKernelFileBytes, "the declaration");
    const yaml::Source src{sidecar, 0};
    try {
      const YAML::Node root = src.parse(text);
      if (!root.IsMap()) throw ConfigError(sidecar.string() + ":1:1: a declaration must be a YAML mapping (sizes:, args:, launch:, ...)");
      DeclarationKeys keys;
      for (const auto& item : root) keys[src.string(item.first, "a key")] = {&src, item.second};
      src.check_keys(root, declaration_keys(), "the declaration");
      apply_declaration(k, keys);
    } catch (const YAML::Exception& e) {
      yaml::throw_config_error(sidecar, 0, e);
    }
    return k;
  }
  k.plain = true;
  k.family = path.parent_path().filename().string();  // kernels_src/kernel/x.cu: "kernel"
  return k;
}

KernelFile KernelFile::parse(const std::string& source, const fs::path& path) try {
  KernelFile k;
  k.path = path;
  k.name = path.stem().string();
  k.source = source;

  // The metadata block: the file's first non-blank line is "/* gpuk", closed by "*/".
  std::size_t pos = source.find_first_not_of(" \t\r\n");
  const std::string opener = "/* gpuk";
  if (pos == std::string::npos || source.compare(pos, opener.size(), opener) != 0 ||
      (pos + opener.size() < source.size() && !std::isspace(static_cast<unsigned char>(source[pos + opener.size()]))))
    throw ConfigError(path.string() +
                      ":1:1: a kernel file must start with its metadata block ('/* gpuk' ... '*/'); "
                      "see docs/kernels.md");
  const std::size_t body = source.find('\n', pos);
  const std::size_t close = source.find("*/", pos);
  if (body == std::string::npos || close == std::string::npos || close < body)
    throw ConfigError(path.string() + ":1:1: the metadata block is not closed with '*/'");
  const int offset = static_cast<int>(std::count(source.begin(), source.begin() + body + 1, '\n'));
  yaml::Source src{path, offset};
  const YAML::Node meta = src.parse(source.substr(body + 1, close - body - 1));
  if (!meta.IsMap())
    throw ConfigError(path.string() + ":" + std::to_string(offset + 1) +
                      ":1: the metadata block must be a YAML mapping (family:, operations:, launch:, ...)");
  if (meta["args"] || meta["sizes"]) {
    // A declaration in the block: its keys first, then those of the YAML file beside it.
    src.check_keys(meta, declaration_keys(), "the declaration");
    DeclarationKeys keys;
    std::optional<yaml::Source> side_src;
    YAML::Node side;
    std::error_code ec;
    if (fs::is_regular_file(sidecar_of(path), ec)) {
      side_src.emplace(yaml::Source{sidecar_of(path), 0});
      side = side_src->parse(read_regular_file_or_throw(side_src->path, kMaxKernelFileBytes, "the declaration"));
      if (side.IsMap()) {
        side_src->check_keys(side, declaration_keys(), "the declaration");
        for (const auto& item : side) keys[side_src->string(item.first, "a key")] = {&*side_src, item.second};
      }
    }
    for (const auto& item : meta) keys[src.string(item.first, "a key")] = {&src, item.second};
    apply_declaration(k, keys);
    return k;
  }
  src.check_keys(meta, kMetadataKeys, "the metadata block");

  for (const char* required : {"family", "operations", "launch"})
    if (!meta[required])
      throw ConfigError(path.string() + ":" + std::to_string(offset + 1) + ":1: the metadata block has no '" +
                        required + "'");
  k.family = src.string(meta["family"], "family");
  k.operations = src.strings(meta["operations"], "operations");
  if (meta["operations"].IsSequence())
    for (const auto& item : meta["operations"]) k.operation_where.push_back(src.where(item.Mark()));
  else
    k.operation_where.assign(k.operations.size(), src.where(meta["operations"].Mark()));
  if (meta["dtypes"]) {
    for (const auto& item : meta["dtypes"]) {
      const std::string name = src.string(item, "dtypes");
      const auto dtype = parse_dtype(name);
      if (!dtype) src.fail(item, "unknown dtype '" + name + "'");
      k.dtypes.push_back(*dtype);
    }
  } else {
    k.dtypes = all_dtypes();
  }
  if (meta["summary"]) k.summary = src.string(meta["summary"], "summary");
  if (meta["fixes"]) k.fixes = src.string(meta["fixes"], "fixes");

  refuse_too_many(src, meta["params"], "params", kMostParams);
  refuse_too_many(src, meta["constraints"], "constraints", kMostConstraints);
  refuse_too_many(src, meta["launch"], "launch", kMostLaunches);
  std::set<std::string> names(kBuiltinNames.begin(), kBuiltinNames.end());
  if (const auto params = meta["params"]; params && !params.IsNull()) {
    if (!params.IsMap()) src.fail(params, "params must be a mapping NAME: {default: ..., values: [...]}");
    for (const auto& item : params) {
      const std::string name = src.string(item.first, "a parameter name");
      if (!names.insert(name).second) src.fail(item.first, "parameter name '" + name + "' is taken");
      k.params.push_back(parse_metadata_param(src, name, item.second));
    }
  }
  std::vector<std::string> param_names;
  for (const auto& p : k.params) param_names.push_back(p.name);
  if (const auto constraints = meta["constraints"]) {
    for (const auto& item : constraints)
      k.constraints.push_back({parse_expr(src, item, "constraint", param_names), src.line(item)});
  }

  const auto launch = meta["launch"];
  if (!launch.IsSequence() || launch.size() == 0)
    src.fail(launch, "launch must be a list of {entry: NAME, grid: EXPR, block: EXPR}");
  for (const auto& item : launch) {
    src.check_keys(item, {"entry", "grid", "block", "shared", "when", "repeat"}, "a launch");
    if (!item["entry"] || !item["grid"] || !item["block"])
      src.fail(item, "a launch needs entry, grid and block");
    LaunchSpec l;
    l.entry = src.string(item["entry"], "entry");
    if (!valid_identifier(l.entry)) src.fail(item["entry"], "entry '" + l.entry + "' is not an identifier");
    l.grid = parse_expr(src, item["grid"], "grid", param_names);
    l.block = parse_expr(src, item["block"], "block", param_names);
    l.shared_bytes = item["shared"] ? parse_expr(src, item["shared"], "shared", param_names) : Expr::parse("0");
    if (item["when"]) l.when = parse_expr(src, item["when"], "when", param_names);
    if (item["repeat"]) l.repeat = parse_expr(src, item["repeat"], "repeat", param_names);
    l.line = src.line(item);
    // The entry must exist as a template in the source: catch typos before NVRTC does.
    if (source.find(l.entry + "(") == std::string::npos && source.find(l.entry + " (") == std::string::npos)
      src.fail(item["entry"], "entry '" + l.entry + "' is not defined in this file");
    k.launches.push_back(std::move(l));
  }
  k.scratch = meta["scratch"] ? parse_expr(src, meta["scratch"], "scratch", param_names) : Expr::parse("0");
  check_can_launch(std::make_shared<const KernelFile>(k));
  return k;
} catch (const YAML::Exception& e) {
  // yaml-cpp's lines count from the line after "/* gpuk", where the YAML starts.
  const std::size_t opener = source.find("/* gpuk");
  const std::size_t body = opener == std::string::npos ? std::string::npos : source.find('\n', opener);
  const int offset =
      body == std::string::npos ? 0 : static_cast<int>(std::count(source.begin(), source.begin() + body + 1, '\n'));
  yaml::throw_config_error(path, offset, e);
}

const ParamSpec* KernelFile::param(const std::string& name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

bool KernelFile::supports(const std::string& operation) const {
  // A declared kernel is its own operation; it serves whatever problem its arguments fit.
  if (declaration) return true;
  return std::find(operations.begin(), operations.end(), operation) != operations.end();
}

bool KernelFile::supports(DType dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

void check_operations(const KernelFile& file, const std::vector<std::string>& family_operations) {
  // A declaration's `family:` may name any folder; a family with operations runs only kernels
  // that implement them, never a declared kernel as if it were one of its own.
  if (file.declaration && !family_operations.empty())
    throw ConfigError(file.path.string() + ": " + file.name + " is a declared kernel (docs/declared.md), but the " +
                      file.family + " family runs kernels of its operations (" + join(family_operations) +
                      "); a declared kernel runs in a family whose configs give sizes:");
  for (std::size_t i = 0; i < file.operations.size(); ++i) {
    const std::string& op = file.operations[i];
    if (std::find(family_operations.begin(), family_operations.end(), op) != family_operations.end()) continue;
    const std::string where = i < file.operation_where.size() ? file.operation_where[i] : file.path.string();
    throw ConfigError(where + ": the " + file.family + " family has no operation '" + op + "'" +
                      did_you_mean(op, family_operations) + "; its operations: " + join(family_operations));
  }
}

}  // namespace gpuk
