// A declared kernel's YAML (docs/declared.md): sizes, arguments, scratch, launches in 1 to 3
// dimensions, bytes and metrics, read into a KernelFile with every error at its file:line:col.
#include "kernel/declaration.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include "gpuk/error.hpp"
#include "kernel/compile_options.hpp"
#include "kernel/expr_bounds.hpp"
#include "kernel/metadata_parse.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kKeys = {"family", "summary", "sizes",   "params_as", "params", "constraints",
                                        "args",   "scratch", "launch",  "bytes",     "metrics", "constants",
                                        "compiler_options", "defines"};
const std::vector<std::string> kLaunchKeys = {"entry", "grid", "block", "shared_bytes", "shared", "args", "when", "repeat", "params"};

// The names every declared expression may use besides the parameters.
std::vector<std::string> builtins_of(const std::vector<std::string>& sizes) {
  std::vector<std::string> out = sizes;
  out.push_back("sm_count");
  return out;
}

// In a flow mapping {grid: ceil_div(n, 256)} the comma ends the value: "256)" becomes a key.
void refuse_cut_expression(const yaml::Source& src, const YAML::Node& item) {
  if (!item.IsMap()) return;
  for (const auto& key : item)
    if (key.first.IsScalar() && key.first.Scalar().find(')') != std::string::npos)
      src.fail(key.first, "'" + key.first.Scalar() + "' looks like the end of an expression cut at a comma: in a flow "
                          "mapping {...} a comma ends the value, so quote it (\"ceil_div(n, 256)\") or write it as a "
                          "block mapping");
}

DType parse_arg_dtype(const yaml::Source& src, const YAML::Node& node) {
  const std::string name = src.string(node, "a dtype");
  const auto dtype = parse_dtype(name);
  if (!dtype) {
    std::vector<std::string> names;
    for (DType d : all_dtypes()) names.emplace_back(dtype_name(d));
    src.fail(node, "unknown dtype '" + name + "'" + did_you_mean(name, names) + "; dtypes: " + join(names));
  }
  return *dtype;
}

std::optional<double> parse_literal(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

DeclaredArg parse_arg(const yaml::Source& src, const YAML::Node& item, const std::vector<std::string>& sizes,
                      const std::vector<std::string>& params) {
  refuse_cut_expression(src, item);
  src.check_keys(item, {"name", "array", "scalar", "length", "role", "value", "finite"}, "an argument");
  DeclaredArg a;
  a.where = src.where(item.Mark());
  if (!item["name"]) src.fail(item, "an argument needs a name");
  a.name = src.string(item["name"], "name");
  if (!valid_identifier(a.name)) src.fail(item["name"], "argument name '" + a.name + "' is not an identifier");
  if (item["array"] && item["scalar"]) src.fail(item["scalar"], "argument " + a.name + " is an array or a scalar, not both");
  if (!item["array"] && !item["scalar"])
    src.fail(item, "argument " + a.name + " needs 'array: DTYPE' (a device array) or 'scalar: DTYPE' (a value)");
  a.array = static_cast<bool>(item["array"]);
  a.dtype = parse_arg_dtype(src, a.array ? item["array"] : item["scalar"]);
  if (a.array) {
    for (const char* key : {"value"})
      if (item[key]) src.fail(item[key], "argument " + a.name + " is an array: it takes length and role, not " + key);
    if (!item["length"]) src.fail(item, "array " + a.name + " needs a length (an expression of the sizes " + join(sizes) + ")");
    // Arrays are the run's data, the same for every variant: their lengths follow from the sizes alone.
    a.length = parse_metadata_expr(src, item["length"], "length of " + a.name, {}, sizes);
    if (!item["role"]) src.fail(item, "array " + a.name + " needs a role: in, out or inout");
    const std::string role = src.string(item["role"], "role");
    if (role == "in") a.role = ArgRole::in;
    else if (role == "out") a.role = ArgRole::out;
    else if (role == "inout") a.role = ArgRole::inout;
    else src.fail(item["role"], "role must be in, out or inout, not '" + role + "'" + did_you_mean(role, {"in", "out", "inout"}));
  } else {
    for (const char* key : {"length", "role"})
      if (item[key]) src.fail(item[key], "argument " + a.name + " is a scalar: it takes a value, not " + key);
    if (!item["value"]) src.fail(item, "scalar " + a.name + " needs a value");
    const std::string text = src.string(item["value"], "value");
    const auto literal = dtype_is_float(a.dtype) ? parse_literal(text) : std::nullopt;
    if (item["finite"] && !dtype_is_float(a.dtype))
      src.fail(item["finite"], "scalar " + a.name + " is an integer: finite: is for float32 and float64 literals");
    // A literal is finite in its dtype unless the declaration says finite: false (inf, nan).
    const bool float32 = a.dtype == DType::float32;
    const double largest = float32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    if (literal && !(std::abs(*literal) <= largest) && !(item["finite"] && !src.boolean(item["finite"], "finite")))
      src.fail(item["value"], "value of " + a.name + " '" + text + "' is not a finite " +
                                  std::string(dtype_name(a.dtype)) + " (its largest is " +
                                  (float32 ? "3.4028235e38" : "1.7976931348623157e308") +
                                  "); write finite: false beside it to pass inf or nan");
    if (literal) a.literal = *literal;
    else a.value = parse_metadata_expr(src, item["value"], "value of " + a.name, params, builtins_of(sizes));
  }
  return a;
}

// A flow sequence [ceil_div(nx, bx), ny] splits at every comma, the one inside the call too:
// its items are joined again until their parentheses balance, one expression per dimension.
std::vector<Expr> parse_dims(const yaml::Source& src, const YAML::Node& node, const std::string& what,
                             const std::vector<std::string>& params, const std::vector<std::string>& builtins) {
  std::vector<Expr> out;
  if (node.IsSequence()) {
    std::string text;
    YAML::Node first;
    int depth = 0;
    for (const auto& item : node) {
      const std::string piece = src.string(item, what);
      if (text.empty()) first.reset(item);
      text += (text.empty() ? "" : ", ") + piece;
      for (char c : piece) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (depth > 0) continue;
      if (text == piece) {
        out.push_back(parse_metadata_expr(src, item, what, params, builtins));
      } else {
        // The joined text, checked at the first piece's place.
        Expr e;
        try {
          e = Expr::parse(text);
        } catch (const ConfigError& error) {
          src.fail(first, what + " " + quote_expr(text) + ": " + error.what());
        }
        std::vector<std::string> known = params;
        known.insert(known.end(), builtins.begin(), builtins.end());
        for (const auto& id : e.identifiers())
          if (std::find(known.begin(), known.end(), id) == known.end())
            src.fail(first, what + " " + quote_expr(text) + " names '" + id + "', which is not a parameter" +
                                did_you_mean(id, known) + "; it may use " + join(known));
        out.push_back(std::move(e));
      }
      text.clear();
      depth = 0;
    }
    if (!text.empty()) src.fail(first, what + " " + quote_expr(text) + ": a '(' is not closed");
    if (out.size() < 1 || out.size() > 3) src.fail(node, what + " takes 1 to 3 expressions (x, y, z)");
  } else {
    out.push_back(parse_metadata_expr(src, node, what, params, builtins));
  }
  return out;
}

// A launch's own parameter values: {NAME: integer}, each a declared parameter.
std::map<std::string, std::int64_t> parse_launch_params(const yaml::Source& src, const YAML::Node& node,
                                                        const std::vector<std::string>& params) {
  if (!node.IsMap()) src.fail(node, "a launch's params must be a mapping NAME: value (its own values of parameters)");
  std::map<std::string, std::int64_t> out;
  for (const auto& item : node) {
    const std::string name = src.string(item.first, "a parameter name");
    if (std::find(params.begin(), params.end(), name) == params.end())
      src.fail(item.first, "'" + name + "' is not a parameter" + did_you_mean(name, params) + "; the parameters: " + join(params));
    out[name] = src.integer(item.second, "parameter " + name);
  }
  return out;
}

LaunchSpec parse_launch(const yaml::Source& src, const YAML::Node& item, const KernelFile& k,
                        const std::vector<std::string>& params, const std::vector<std::string>& builtins,
                        const std::set<std::string>& arg_names) {
  refuse_cut_expression(src, item);
  src.check_keys(item, kLaunchKeys, "a launch");
  if (!item["entry"] || !item["grid"] || !item["block"]) src.fail(item, "a launch needs entry, grid and block");
  LaunchSpec l;
  l.line = src.line(item);
  l.entry = src.string(item["entry"], "entry");
  if (!valid_identifier(l.entry)) src.fail(item["entry"], "entry '" + l.entry + "' is not an identifier");
  if (k.source.find(l.entry + "(") == std::string::npos && k.source.find(l.entry + " (") == std::string::npos)
    src.fail(item["entry"], "entry '" + l.entry + "' is not defined in " + k.path.filename().string());
  std::vector<Expr> grid = parse_dims(src, item["grid"], "grid", params, builtins);
  std::vector<Expr> block = parse_dims(src, item["block"], "block", params, builtins);
  l.grid = grid[0];
  l.block = block[0];
  l.grid_yz.assign(grid.begin() + 1, grid.end());
  l.block_yz.assign(block.begin() + 1, block.end());
  if (item["shared_bytes"] && item["shared"]) src.fail(item["shared"], "give shared_bytes or shared, not both");
  const YAML::Node shared = item["shared_bytes"] ? item["shared_bytes"] : item["shared"];
  l.shared_bytes = shared ? parse_metadata_expr(src, shared, "shared_bytes", params, builtins) : Expr::parse("0");
  if (item["when"]) l.when = parse_metadata_expr(src, item["when"], "when", params, builtins);
  if (item["repeat"]) l.repeat = parse_metadata_expr(src, item["repeat"], "repeat", params, builtins);
  if (const YAML::Node own = item["params"]) l.params = parse_launch_params(src, own, params);
  if (const YAML::Node args = item["args"]) {
    if (!args.IsSequence()) src.fail(args, "a launch's args must be a list of argument and scratch names");
    for (const auto& a : args) {
      const std::string name = src.string(a, "an argument name");
      if (!arg_names.count(name))
        src.fail(a, "launch argument '" + name + "' is not declared" +
                        did_you_mean(name, std::vector<std::string>(arg_names.begin(), arg_names.end())) +
                        "; args and scratch: " + join(std::vector<std::string>(arg_names.begin(), arg_names.end())));
      l.args.push_back(name);
    }
  }
  return l;
}

// A metric, parsed once; its names (seconds, the sizes, the parameters) checked now, every error
// at its place in the YAML file.
DeclaredMetric parse_metric(const yaml::Source& src, const YAML::Node& name, const YAML::Node& node,
                            const std::vector<std::string>& names) {
  DeclaredMetric m{src.string(name, "a metric name"), MetricExpr(), src.where(node.Mark())};
  const std::string text = src.string(node, "a metric");
  try {
    m.expression = MetricExpr::parse(text);
  } catch (const ExprSyntaxError& e) {
    fail_in_expr(src, node, e.offset(), "metric '" + m.name + "' " + quote_expr(text) + ": " + e.reason());
  }
  std::vector<std::string> known = {"seconds"};
  known.insert(known.end(), names.begin(), names.end());
  for (const auto& id : m.expression.identifiers())
    if (std::find(known.begin(), known.end(), id) == known.end())
      fail_in_expr(src, node, identifier_offset(text, id),
                   "metric '" + m.name + "' " + quote_expr(text) + " names '" + id +
                       "', which is not a size, a parameter or seconds" + did_you_mean(id, known) + "; it may use " +
                       join(known));
  return m;
}

}  // namespace

const std::vector<std::string>& declaration_keys() { return kKeys; }

fs::path sidecar_of(const fs::path& kernel_path) {
  fs::path p = kernel_path;
  return p.replace_extension(".yaml");
}

const DeclaredArg* Declaration::arg(const std::string& name) const {
  for (const auto& a : args)
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<const DeclaredArg*> Declaration::arrays() const {
  std::vector<const DeclaredArg*> out;
  for (const auto& a : args)
    if (a.array) out.push_back(&a);
  return out;
}

std::string Declaration::arrays_text() const {
  std::string out;
  for (const DeclaredArg* a : arrays())
    out += (out.empty() ? "" : ", ") + a->name + " " + std::string(dtype_name(a->dtype)) + "[" + a->length.text() + "]";
  return out;
}

bool Declaration::same_arrays(const Declaration& other) const {
  const auto ours = arrays(), theirs = other.arrays();
  bool same = ours.size() == theirs.size();
  for (std::size_t i = 0; same && i < ours.size(); ++i)
    same = ours[i]->name == theirs[i]->name && ours[i]->dtype == theirs[i]->dtype &&
           ours[i]->length.text() == theirs[i]->length.text();
  return same;
}

void apply_declaration(KernelFile& k, const DeclarationKeys& keys) {
  const auto get = [&](const char* key) -> const std::pair<const yaml::Source*, YAML::Node>* {
    const auto it = keys.find(key);
    return it == keys.end() ? nullptr : &it->second;
  };
  const auto where_first = [&]() {
    for (const auto& [key, value] : keys) return value.first->where(value.second.Mark());
    return k.path.string();
  };
  for (const char* required : {"sizes", "args", "launch"})
    if (!get(required))
      throw ConfigError(where_first() + ": the declaration of " + k.name + " has no '" + required +
                        "' (docs/declared.md: sizes, args and launch are needed; the kernel file, the YAML "
                        "file beside it or the config's declare: may give them)");
  // Counted before any is read: loading stays linear in the file's size.
  using Bound = std::pair<const char*, std::size_t>;
  for (const auto& [key, most] : {Bound{"params", kMostParams}, Bound{"constraints", kMostConstraints},
                                  Bound{"launch", kMostLaunches}, Bound{"args", kMostArgs}, Bound{"scratch", kMostArgs},
                                  Bound{"metrics", kMostArgs}})
    if (const auto* v = get(key)) refuse_too_many(*v->first, v->second, key, most);
  auto decl = std::make_shared<Declaration>();
  k.plain = false;
  k.params.clear();
  k.constraints.clear();
  k.launches.clear();
  k.operations.clear();
  k.operation_where.clear();
  k.dtypes = all_dtypes();
  k.scratch = Expr::parse("0");
  k.compile_options.clear();
  if (const auto* f = get("family")) k.family = f->first->string(f->second, "family");
  else if (k.family.empty()) k.family = k.path.parent_path().filename().string();
  if (const auto* s = get("summary")) k.summary = s->first->string(s->second, "summary");

  std::set<std::string> taken = {"sm_count", "seconds"};
  {
    const auto& [src, node] = *get("sizes");
    for (const auto& item : (node.IsSequence() ? node : YAML::Node())) {
      const std::string name = src->string(item, "a size");
      if (!valid_identifier(name)) src->fail(item, "size name '" + name + "' is not an identifier");
      if (!taken.insert(name).second) src->fail(item, "size name '" + name + "' is taken");
      decl->sizes.push_back(name);
    }
    if (!node.IsSequence() || decl->sizes.empty()) src->fail(node, "sizes must be a list of names: [n] or [nx, ny]");
  }
  if (const auto* p = get("params_as")) {
    const std::string v = p->first->string(p->second, "params_as");
    if (v == "defines") k.params_as = ParamsAs::defines;
    else if (v == "template") k.params_as = ParamsAs::template_args;
    else p->first->fail(p->second, "params_as must be 'template' (template arguments) or 'defines' (-D name=value), not '" + v + "'");
  }
  if (const auto* p = get("params"); p && !p->second.IsNull()) {
    const auto& [src, node] = *p;
    if (!node.IsMap()) src->fail(node, "params must be a mapping NAME: {default: ..., values: [...]}");
    for (const auto& item : node) {
      const std::string name = src->string(item.first, "a parameter name");
      if (!taken.insert(name).second) src->fail(item.first, "parameter name '" + name + "' is taken (a size or a built-in name)");
      k.params.push_back(parse_metadata_param(*src, name, item.second));
    }
  }
  std::vector<std::string> params;
  for (const auto& p : k.params) params.push_back(p.name);
  const std::vector<std::string> builtins = builtins_of(decl->sizes);
  if (const auto* c = get("constraints"); c && !c->second.IsNull()) {
    const auto& [src, node] = *c;
    if (!node.IsSequence()) src->fail(node, "constraints must be a list of expressions");
    decl->constraints_from = src->path;
    for (const auto& item : node)
      k.constraints.push_back({parse_metadata_expr(*src, item, "constraint", params, builtins), src->line(item)});
  }
  std::set<std::string> arg_names;
  {
    const auto& [src, node] = *get("args");
    if (!node.IsSequence() || node.size() == 0) src->fail(node, "args must be a list of the kernel's arguments, in order");
    for (const auto& item : node) {
      DeclaredArg a = parse_arg(*src, item, decl->sizes, params);
      if (!arg_names.insert(a.name).second) src->fail(item["name"], "argument name '" + a.name + "' is declared twice");
      decl->args.push_back(std::move(a));
    }
  }
  if (const auto* s = get("scratch"); s && !s->second.IsNull()) {
    const auto& [src, node] = *s;
    if (!node.IsSequence()) src->fail(node, "scratch must be a list of {name, array: DTYPE, length: EXPR}");
    for (const auto& item : node) {
      refuse_cut_expression(*src, item);
      src->check_keys(item, {"name", "array", "length"}, "a scratch array");
      if (!item["name"] || !item["array"] || !item["length"]) src->fail(item, "a scratch array needs name, array and length");
      DeclaredScratch sc;
      sc.where = src->where(item.Mark());
      sc.name = src->string(item["name"], "name");
      if (!valid_identifier(sc.name)) src->fail(item["name"], "scratch name '" + sc.name + "' is not an identifier");
      if (!arg_names.insert(sc.name).second) src->fail(item["name"], "scratch name '" + sc.name + "' is taken");
      sc.dtype = parse_arg_dtype(*src, item["array"]);
      sc.length = parse_metadata_expr(*src, item["length"], "length of " + sc.name, params, builtins);
      decl->scratch.push_back(std::move(sc));
    }
  }
  std::set<std::string> names = taken;  // a constant's name is no size, parameter, argument or scratch's
  names.insert(arg_names.begin(), arg_names.end());
  if (const auto* c = get("constants")) decl->constants = parse_constants(*c->first, c->second, decl->sizes, names);
  if (const auto* o = get("compiler_options")) k.compile_options = parse_compiler_options(*o->first, o->second);
  if (const auto* d = get("defines"))
    for (auto& option : parse_defines(*d->first, d->second, taken)) k.compile_options.push_back(std::move(option));
  {
    const auto& [src, node] = *get("launch");
    if (!node.IsSequence() || node.size() == 0) src->fail(node, "launch must be a list of {entry, grid, block, ...}");
    decl->launches_from = src->path;
    for (const auto& item : node) k.launches.push_back(parse_launch(*src, item, k, params, builtins, arg_names));
  }
  if (const auto* b = get("bytes")) decl->bytes = parse_metadata_expr(*b->first, b->second, "bytes", {}, decl->sizes);
  if (const auto* m = get("metrics"); m && !m->second.IsNull()) {
    const auto& [src, node] = *m;
    if (!node.IsMap()) src->fail(node, "metrics must be a mapping NAME: EXPRESSION");
    std::vector<std::string> names = params;
    names.insert(names.end(), decl->sizes.begin(), decl->sizes.end());
    for (const auto& item : node) {
      decl->metrics.push_back(parse_metric(*src, item.first, item.second, names));
    }
  }
  k.declaration = std::move(decl);
  check_can_launch(std::make_shared<const KernelFile>(k));
}

KernelFile declare_kernel(const KernelFile& file, const yaml::Source& src, const YAML::Node& declare) {
  if (!declare.IsMap()) src.fail(declare, "declare must be a mapping of a declaration's keys (docs/declared.md)");
  src.check_keys(declare, declaration_keys(), "declare");
  KernelFile k;
  k.path = file.path;
  k.name = file.name;
  k.source = file.source;
  k.include_dirs = file.include_dirs;
  k.family = file.family;
  DeclarationKeys keys;
  // The file's own keys first (the YAML beside it, then its metadata block), then the config's.
  std::optional<yaml::Source> side_src, block_src;
  std::error_code ec;
  if (fs::is_regular_file(sidecar_of(file.path), ec)) {
    side_src.emplace(yaml::Source{sidecar_of(file.path), 0});
    const YAML::Node side = side_src->parse(read_regular_file_or_throw(side_src->path, kMaxKernelFileBytes, "the declaration"));
    if (side.IsMap())
      for (const auto& item : side) keys[side_src->string(item.first, "a key")] = {&*side_src, item.second};
  }
  const std::size_t open = file.source.find("/* gpuk");
  if (!file.plain && open != std::string::npos && file.declaration) {
    const std::size_t body = file.source.find('\n', open);
    const std::size_t close = file.source.find("*/", open);
    if (body != std::string::npos && close != std::string::npos && close > body) {
      const int offset = static_cast<int>(std::count(file.source.begin(), file.source.begin() + body + 1, '\n'));
      block_src.emplace(yaml::Source{file.path, offset});
      const YAML::Node block = block_src->parse(file.source.substr(body + 1, close - body - 1));
      if (block.IsMap())
        for (const auto& item : block) keys[block_src->string(item.first, "a key")] = {&*block_src, item.second};
    }
  }
  for (const auto& item : declare) keys[src.string(item.first, "a key")] = {&src, item.second};
  apply_declaration(k, keys);
  return k;
}

std::int64_t eval_sizes(const Expr& expr, const std::map<std::string, std::int64_t>& sizes) {
  return expr.eval([&](std::string_view name) -> std::optional<std::int64_t> {
    if (const auto it = sizes.find(std::string(name)); it != sizes.end()) return it->second;
    return std::nullopt;
  });
}

std::int64_t eval_declared(const Expr& expr, const Variant& variant, const std::map<std::string, std::int64_t>& sizes,
                           const std::string& where, const std::string& what) {
  try {
    return expr.eval([&](std::string_view name) -> std::optional<std::int64_t> {
      for (const auto& [n, v] : variant.params())
        if (n == name) return v;
      if (const auto it = sizes.find(std::string(name)); it != sizes.end()) return it->second;
      return std::nullopt;
    });
  } catch (const ConfigError& e) {
    throw ConfigError(where + ": " + what + " " + quote_expr(expr.text()) + " of " + variant.label() + ": " + e.what());
  }
}

}  // namespace gpuk
