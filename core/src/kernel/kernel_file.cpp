#include "kernel/kernel_file.hpp"

#include <algorithm>
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

namespace gpuk {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kMetadataKeys = {"family", "operations", "dtypes", "summary", "fixes",
                                                "params", "constraints", "launch", "scratch"};

bool valid_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// The names a metadata expression may use besides the file's parameters: what plan_launches
// binds for a problem on a device.
const std::vector<std::string> kBuiltinNames = {"n", "sm_count", "elem_bytes", "vec"};

// Where `word` first stands as a whole identifier in `text` (0 when it does not).
std::size_t identifier_offset(const std::string& text, const std::string& word) {
  const auto is_id = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_id(text[at - 1]);
    const bool ends = at + word.size() == text.size() || !is_id(text[at + word.size()]);
    if (starts && ends) return at;
  }
  return 0;
}

// Parses a metadata expression and resolves every identifier in it now, against the parameters
// declared so far and the built-in names, so that a typo fails `gpuk check` (and loading) with
// file:line:col rather than a launch on a GPU.
Expr parse_expr(const yaml::Source& src, const YAML::Node& node, const std::string& what,
                const std::vector<std::string>& params) {
  const std::string text = src.string(node, what);
  Expr e;
  try {
    e = Expr::parse(text);
  } catch (const ConfigError& error) {
    src.fail(node, what + " '" + text + "': " + error.what());
  }
  for (const auto& id : e.identifiers()) {
    if (std::find(params.begin(), params.end(), id) != params.end() ||
        std::find(kBuiltinNames.begin(), kBuiltinNames.end(), id) != kBuiltinNames.end())
      continue;
    std::vector<std::string> known = params;
    known.insert(known.end(), kBuiltinNames.begin(), kBuiltinNames.end());
    YAML::Mark mark = node.Mark();
    // A quoted scalar's mark is its opening quote (yaml-cpp tags quoted scalars "!").
    mark.column += static_cast<int>(identifier_offset(text, id)) + (node.Tag() == "!" ? 1 : 0);
    throw ConfigError(src.where(mark) + ": " + what + " '" + text + "' names '" + id + "', which is not a parameter" +
                      did_you_mean(id, known) + "; it may use " +
                      (params.empty() ? std::string("no parameters (there are none)") : "the parameters " + join(params)) +
                      " and " + join(kBuiltinNames));
  }
  return e;
}

ParamSpec parse_param(const yaml::Source& src, const std::string& name, const YAML::Node& node) {
  ParamSpec p;
  p.name = name;
  p.line = src.line(node);
  if (!valid_identifier(name)) src.fail(node, "parameter name '" + name + "' is not an identifier");
  src.check_keys(node, {"default", "values", "range", "pow2"}, "parameter " + name);
  if (node["values"]) {
    if (!node["values"].IsSequence() || node["values"].size() == 0)
      src.fail(node["values"], "parameter " + name + ": values must be a non-empty list of integers");
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

// Declared below, beside plan_launches.
void check_can_launch(const std::shared_ptr<const KernelFile>& file);

}  // namespace

KernelFile KernelFile::load(const fs::path& path) {
  return parse(read_regular_file_or_throw(path, kMaxKernelFileBytes, "the kernel file"), path);
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

  std::set<std::string> names(kBuiltinNames.begin(), kBuiltinNames.end());
  if (const auto params = meta["params"]; params && !params.IsNull()) {
    if (!params.IsMap()) src.fail(params, "params must be a mapping NAME: {default: ..., values: [...]}");
    for (const auto& item : params) {
      const std::string name = src.string(item.first, "a parameter name");
      if (!names.insert(name).second) src.fail(item.first, "parameter name '" + name + "' is taken");
      k.params.push_back(parse_param(src, name, item.second));
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
  return std::find(operations.begin(), operations.end(), operation) != operations.end();
}

bool KernelFile::supports(DType dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

void check_operations(const KernelFile& file, const std::vector<std::string>& family_operations) {
  for (std::size_t i = 0; i < file.operations.size(); ++i) {
    const std::string& op = file.operations[i];
    if (std::find(family_operations.begin(), family_operations.end(), op) != family_operations.end()) continue;
    const std::string where = i < file.operation_where.size() ? file.operation_where[i] : file.path.string();
    throw ConfigError(where + ": the " + file.family + " family has no operation '" + op + "'" +
                      did_you_mean(op, family_operations) + "; its operations: " + join(family_operations));
  }
}

// --- KernelLibrary ---------------------------------------------------------------------------

KernelLibrary::KernelLibrary(std::vector<fs::path> dirs) : dirs_(std::move(dirs)) {
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      errors_.push_back(dir.string() + ": kernel directory does not exist");
      continue;
    }
    // Its kernels run on your GPU, as you.
    refuse_tree_if_writable_by_others(dir, "kernel directory", origin_of(dir, builtin_kernel_dir()));
    std::vector<fs::path> paths;
    // Every query takes an error_code: a link loop (or a file gone mid-walk) is an entry to skip
    // with a note, not a filesystem_error that ends gpuk.
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      std::error_code type_ec;
      const fs::file_type type = it->status(type_ec).type();
      if (type_ec && it->path().extension() == ".cu") {
        errors_.push_back(it->path().string() + ": cannot read kernel file (" + type_ec.message() + ")");
        continue;
      }
      if (type == fs::file_type::directory && it->path().filename() == "include") {
        it.disable_recursion_pending();
        continue;
      }
      if (type == fs::file_type::regular && it->path().extension() == ".cu") paths.push_back(it->path());
    }
    if (ec) errors_.push_back(dir.string() + ": cannot read the whole kernel directory (" + ec.message() + ")");
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) {
      try {
        auto file = std::make_shared<const KernelFile>(KernelFile::load(path));
        // A later directory's file shadows an earlier one of the same family and name.
        std::erase_if(files_, [&](const auto& f) { return f->family == file->family && f->name == file->name; });
        files_.push_back(std::move(file));
      } catch (const ConfigError& e) {
        errors_.push_back(e.what());
      }
    }
  }
}

std::vector<fs::path> KernelLibrary::include_dirs() const {
  std::vector<fs::path> out;
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (fs::is_directory(dir / "include", ec)) out.push_back(dir / "include");
  }
  return out;
}

std::vector<std::shared_ptr<const KernelFile>> KernelLibrary::family(const std::string& family) const {
  std::vector<std::shared_ptr<const KernelFile>> out;
  for (const auto& f : files_)
    if (f->family == family) out.push_back(f);
  return out;
}

std::shared_ptr<const KernelFile> KernelLibrary::find(const std::string& family, const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& f : files_) {
    if (f->family != family) continue;
    if (f->name == name || f->path.filename() == name) return f;
    names.push_back(f->name);
  }
  for (const auto& e : errors_)
    if (e.find("/" + name + ".cu:") != std::string::npos) throw ConfigError(e);
  std::vector<std::string> dirs;
  for (const auto& d : dirs_) dirs.push_back(d.string());
  throw ConfigError("no " + family + " kernel named '" + name + "'" + did_you_mean(name, names) +
                    "; the " + family + " kernels are: " + (names.empty() ? "(none)" : join(names)) +
                    " (read from " + join(dirs) + "; a kernel file elsewhere: gpuk --kernels DIR ...)");
}

std::vector<fs::path> kernel_dirs(const std::vector<fs::path>& extra) {
  return search_dirs(builtin_kernel_dir(), "GPUK_KERNELS", extra);
}

// --- Variant ---------------------------------------------------------------------------------

Variant::Variant(std::shared_ptr<const KernelFile> file, std::vector<std::string> leading_args,
                 const std::map<std::string, std::int64_t>& values)
    : file_(std::move(file)), leading_args_(std::move(leading_args)) {
  const KernelFile& k = *file_;
  for (const auto& [name, value] : values) {
    const ParamSpec* p = k.param(name);
    if (!p) {
      std::vector<std::string> names;
      for (const auto& q : k.params) names.push_back(q.name);
      throw ConfigError("kernel " + k.name + " has no parameter '" + name + "'" + did_you_mean(name, names) +
                        (names.empty() ? "; it has none" : "; its parameters: " + join(names)));
    }
    if (!std::binary_search(p->values.begin(), p->values.end(), value)) {
      std::vector<std::string> allowed;
      for (auto v : p->values) allowed.push_back(std::to_string(v));
      throw ConfigError("kernel " + k.name + ": " + name + " = " + std::to_string(value) +
                        " is not allowed (" + k.path.string() + ":" + std::to_string(p->line) +
                        " allows " + join(allowed) + ")");
    }
  }
  for (const auto& p : k.params) {
    const auto it = values.find(p.name);
    params_.emplace_back(p.name, it == values.end() ? p.default_value : it->second);
  }
  // Constraints that involve only parameters can be checked now; the rest when launching.
  for (const auto& c : k.constraints) {
    bool only_params = true;
    for (const auto& id : c.expr.identifiers()) only_params = only_params && k.param(id);
    if (!only_params) continue;
    if (c.expr.eval([&](std::string_view n) { return lookup(n, {}); }) == 0)
      throw ConfigError("kernel " + k.name + ": " + label() + " breaks the constraint '" + c.expr.text() +
                        "' (" + k.path.string() + ":" + std::to_string(c.line) + ")");
  }
}

std::int64_t Variant::param(const std::string& name) const {
  for (const auto& [n, v] : params_)
    if (n == name) return v;
  throw Error("variant " + label() + " has no parameter " + name);
}

std::optional<std::int64_t> Variant::lookup(std::string_view name,
                                            const std::map<std::string, std::int64_t, std::less<>>& extra) const {
  for (const auto& [n, v] : params_)
    if (n == name) return v;
  if (const auto it = extra.find(name); it != extra.end()) return it->second;
  return std::nullopt;
}

std::string Variant::name_expression(const LaunchSpec& launch) const {
  std::string out = launch.entry + "<";
  bool first = true;
  for (const auto& a : leading_args_) out += (first ? "" : ", ") + a, first = false;
  for (const auto& [n, v] : params_) out += (first ? "" : ", ") + std::to_string(v), first = false;
  return out + ">";
}

std::string Variant::label() const {
  std::string out = file_->name;
  for (const auto& [n, v] : params_) out += " " + n + "=" + std::to_string(v);
  return out;
}

namespace {
// A bound on `repeat:`, so that a wrong expression fails at once instead of queueing forever.
constexpr std::int64_t kMostRepeats = 65536;

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

void check_can_launch(const std::shared_ptr<const KernelFile>& file) {
  const KernelFile& k = *file;
  std::set<int> elem_sizes;
  for (const DType d : k.dtypes) elem_sizes.insert(static_cast<int>(dtype_size(d)));
  const std::int64_t sizes[] = {1, 1000, 4096, std::int64_t{1} << 20, std::int64_t{1} << 26, (std::int64_t{1} << 31) - 1};
  std::string first_error;
  std::size_t tried = 0;
  for (const auto& params : parameter_samples(k)) {
    for (const int elem_bytes : elem_sizes) {
      for (const std::int64_t n : sizes) {
        const LaunchLimits limits{n, 132, elem_bytes, 1024, 256 << 10};
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

}  // namespace

LaunchPlan plan_launches(const Variant& variant, const LaunchLimits& limits) {
  const KernelFile& k = variant.file();
  const std::map<std::string, std::int64_t, std::less<>> extra = {
      {"n", limits.n},
      {"sm_count", limits.sm_count},
      {"elem_bytes", limits.elem_bytes},
      {"vec", limits.elem_bytes ? 16 / limits.elem_bytes : 1}};
  const auto lookup = [&](std::string_view name) { return variant.lookup(name, extra); };
  const auto where = [&](int line) { return k.path.string() + ":" + std::to_string(line); };
  const auto eval = [&](const Expr& e, int line, const std::string& what) {
    try {
      return e.eval(lookup);
    } catch (const ConfigError& error) {
      throw ConfigError(where(line) + ": " + what + " of " + variant.label() + ": " + error.what());
    }
  };
  for (const auto& c : k.constraints)
    if (eval(c.expr, c.line, "constraint") == 0)
      throw ConfigError(where(c.line) + ": " + variant.label() + " breaks the constraint '" + c.expr.text() +
                        "' for n = " + std::to_string(limits.n));
  LaunchPlan plan;
  for (const auto& l : k.launches) {
    if (l.when && eval(*l.when, l.line, "when") == 0) continue;
    const std::int64_t repeat = l.repeat ? eval(*l.repeat, l.line, "repeat") : 1;
    if (repeat < 1 || repeat > kMostRepeats)
      throw ConfigError(where(l.line) + ": repeat '" + l.repeat->text() + "' of " + variant.label() + " is " +
                        std::to_string(repeat) + " for n = " + std::to_string(limits.n) + "; it must be between 1 and " +
                        std::to_string(kMostRepeats) + " (use when: to leave a launch out)");
    const std::int64_t grid = eval(l.grid, l.line, "grid");
    const std::int64_t block = eval(l.block, l.line, "block");
    const std::int64_t shared = eval(l.shared_bytes, l.line, "shared");
    if (grid < 1 || grid > 0x7fffffff)
      throw ConfigError(where(l.line) + ": grid '" + l.grid.text() + "' of " + variant.label() + " is " +
                        std::to_string(grid) + " for n = " + std::to_string(limits.n) +
                        "; it must be between 1 and 2^31-1");
    if (block < 1 || block > limits.max_threads_per_block)
      throw ConfigError(where(l.line) + ": block '" + l.block.text() + "' of " + variant.label() + " is " +
                        std::to_string(block) + "; this GPU allows 1 to " +
                        std::to_string(limits.max_threads_per_block) + " threads per block");
    if (shared < 0 || shared > limits.max_shared_bytes)
      throw ConfigError(where(l.line) + ": shared '" + l.shared_bytes.text() + "' of " + variant.label() +
                        " is " + std::to_string(shared) + " bytes; this GPU allows at most " +
                        std::to_string(limits.max_shared_bytes));
    plan.launches.push_back({variant.name_expression(l), static_cast<std::uint32_t>(grid),
                             static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(shared),
                             static_cast<std::uint32_t>(repeat)});
  }
  if (plan.launches.empty())
    throw ConfigError(k.path.string() + ": no launch of " + variant.label() + " runs for n = " +
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
  for (const auto& c : variant.file().constraints) {
    try {
      if (c.expr.eval([&](std::string_view name) { return variant.lookup(name, builtins); }) == 0) return &c;
    } catch (const ConfigError&) {
    }
  }
  return nullptr;
}

}  // namespace gpuk
