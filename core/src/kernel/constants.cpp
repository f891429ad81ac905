// Constant memory of a declared kernel (kernel/constants.hpp): its declaration, the run's values
// and each module's.
#include "kernel/constants.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>

#include "data/data_yaml.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"
#include "kernel/metadata_parse.hpp"
#include "util/text.hpp"

namespace gpuk {

std::vector<DeclaredConstant> parse_constants(const yaml::Source& src, const YAML::Node& node,
                                              const std::vector<std::string>& sizes, std::set<std::string>& taken) {
  std::vector<DeclaredConstant> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence())
    src.fail(node, "constants must be a list of {name, array: DTYPE, length: EXPR, data: {...}} (__constant__ symbols)");
  for (const auto& item : node) {
    src.check_keys(item, {"name", "array", "length", "data"}, "a constant");
    if (!item["name"] || !item["array"] || !item["length"])
      src.fail(item, "a constant needs name (its __constant__ symbol), array (its dtype) and length");
    DeclaredConstant c;
    c.where = src.where(item.Mark());
    c.name = src.string(item["name"], "name");
    if (!valid_identifier(c.name)) src.fail(item["name"], "constant name '" + c.name + "' is not an identifier");
    if (!taken.insert(c.name).second) src.fail(item["name"], "constant name '" + c.name + "' is taken");
    const std::string dtype = src.string(item["array"], "a dtype");
    const auto d = parse_dtype(dtype);
    if (!d) {
      std::vector<std::string> names;
      for (DType x : all_dtypes()) names.emplace_back(dtype_name(x));
      src.fail(item["array"], "unknown dtype '" + dtype + "'" + did_you_mean(dtype, names) + "; dtypes: " + join(names) +
                                  " (a float2 array is float32 of twice the length)");
    }
    c.dtype = *d;
    c.length = parse_metadata_expr(src, item["length"], "length of " + c.name, {}, sizes);
    if (item["data"]) {
      DataSpec defaults;
      if (!dtype_is_float(c.dtype)) defaults.low = 0, defaults.high = 100;
      c.data = read_data_spec(src, item["data"], "the data of " + c.name, defaults);
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

std::string constant_text(const DeclaredConstant& c, std::uint64_t length) {
  return c.name + " (" + std::to_string(length) + " " + std::string(dtype_name(c.dtype)) + ", " + c.where + ")";
}

HostArray from_data(const DataSpec& data, const DeclaredConstant& c, std::uint64_t length) {
  HostArray a = data.file ? load_file(data) : generate(data, c.dtype, length);
  if (a.dtype() != c.dtype || a.size() != length)
    throw ConfigError("the data of constant " + constant_text(c, length) + " holds " + std::to_string(a.size()) + " " +
                      std::string(dtype_name(a.dtype())) + " elements" + (data.file ? " (" + data.file->string() + ")" : ""));
  return a;
}

}  // namespace

std::shared_ptr<const ConstantValues> constant_values(const Declaration& decl,
                                                      const std::map<std::string, std::int64_t>& sizes,
                                                      const std::map<std::string, DataSpec>& data,
                                                      const ConstantValues& given) {
  for (const auto& entry : given) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one
    if (std::none_of(decl.constants.begin(), decl.constants.end(), [&](const auto& c) { return c.name == name; })) {
      std::vector<std::string> names;
      for (const auto& c : decl.constants) names.push_back(c.name);
      throw ConfigError("'" + name + "' is not a declared constant" + did_you_mean(name, names) + "; the constants: " +
                        (names.empty() ? std::string("(none: a declaration names them under constants:)") : join(names)));
    }
  }
  if (decl.constants.empty()) return nullptr;
  auto out = std::make_shared<ConstantValues>();
  std::uint64_t total = 0;
  for (const DeclaredConstant& c : decl.constants) {
    const std::int64_t n = eval_sizes(c.length, sizes);
    if (n < 1) throw ConfigError("constant " + c.name + " has " + std::to_string(n) + " elements ('" + c.length.text() + "', " + c.where + ")");
    const auto length = static_cast<std::uint64_t>(n);
    if (length > kConstantMemoryBytes) throw ConfigError("constant " + constant_text(c, length) + " is larger than constant memory (65536 bytes)");
    std::shared_ptr<const HostArray> value;
    if (const auto g = given.find(c.name); g != given.end()) {
      if (!g->second || g->second->dtype() != c.dtype || g->second->size() != length)
        throw ConfigError("the value given for constant " + constant_text(c, length) + " holds " +
                          (g->second ? std::to_string(g->second->size()) + " " + std::string(dtype_name(g->second->dtype()))
                                     : std::string("no")) + " elements");
      value = g->second;
    } else if (const auto d = data.find(c.name); d != data.end()) {
      value = std::make_shared<const HostArray>(from_data(d->second, c, length));
    } else if (c.data) {
      value = std::make_shared<const HostArray>(from_data(*c.data, c, length));
    } else {
      throw ConfigError("constant " + constant_text(c, length) + " has no data: its declaration gives none (data: {...}), "
                        "nor the config's data:, nor the caller");
    }
    total += value->bytes();
    (*out)[c.name] = std::move(value);
  }
  if (total > kConstantMemoryBytes)
    throw ConfigError("the constants take " + std::to_string(total) + " bytes; constant memory holds 65536");
  return out;
}

std::shared_ptr<const ConstantValues> module_constants(const KernelFile& file,
                                                       const std::map<std::string, std::int64_t>& sizes,
                                                       const ConstantValues* run) {
  if (!file.declaration || file.declaration->constants.empty()) return nullptr;
  const Declaration& d = *file.declaration;
  ConstantValues given;
  if (run)
    for (const auto& c : d.constants)
      if (const auto it = run->find(c.name); it != run->end()) given[c.name] = it->second;
  if (run && given.size() == run->size() && given.size() == d.constants.size())
    return std::make_shared<const ConstantValues>(std::move(given));
  try {
    return constant_values(d, sizes, {}, given);
  } catch (const ConfigError& e) {
    throw ConfigError(file.path.string() + ": " + e.what());
  }
}

std::shared_ptr<const HostArray> host_array_from(DType dtype, const void* data, std::size_t bytes) {
  if (bytes % dtype_size(dtype) != 0)
    throw ConfigError(std::to_string(bytes) + " bytes are not a whole number of " + std::string(dtype_name(dtype)) + " elements");
  auto a = std::make_shared<HostArray>(dtype, bytes / dtype_size(dtype));
  if (bytes) std::memcpy(a->data(), data, bytes);
  return a;
}

std::size_t constants_hash(const ConstantValues* values) {
  if (!values) return 0;
  std::size_t h = values->size();
  for (const auto& [name, a] : *values) {
    const std::string_view bytes(static_cast<const char*>(a->data()), a->bytes());
    const std::size_t x = std::hash<std::string_view>{}(name) ^
                          (std::hash<std::string_view>{}(bytes) * 31 + static_cast<std::size_t>(a->dtype()));
    h = h * 1000003 ^ x;
  }
  return h;
}

bool same_constants(const ConstantValues* a, const ConstantValues* b) {
  const bool empty_a = !a || a->empty(), empty_b = !b || b->empty();
  if (empty_a || empty_b) return empty_a == empty_b;
  if (a->size() != b->size()) return false;
  for (auto x = a->begin(), y = b->begin(); x != a->end(); ++x, ++y)
    if (x->first != y->first || x->second->dtype() != y->second->dtype() || x->second->bytes() != y->second->bytes() ||
        std::memcmp(x->second->data(), y->second->data(), x->second->bytes()) != 0)
      return false;
  return true;
}

}  // namespace gpuk
