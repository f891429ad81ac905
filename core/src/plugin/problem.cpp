// A problem checked against its family: the words a config's errors use, for the library API.
#include "plugin/problem.hpp"

#include <algorithm>

#include "gpuk/error.hpp"
#include "kernel/constants.hpp"
#include "kernel/declaration.hpp"
#include "plugin/plugin.hpp"
#include "util/text.hpp"

namespace gpuk {

const std::string& Problem::option(const std::string& name) const {
  const auto it = options.find(name);
  if (it == options.end()) throw Error("the " + family + " family has no option '" + name + "'");
  return it->second;
}

std::string no_such_operation(const FamilyPlugin& plugin, const std::string& operation) {
  const auto ops = plugin.operations();
  return "the " + plugin.name() + " family has no operation '" + operation + "'" + did_you_mean(operation, ops) +
         "; its operations: " + join(ops);
}

std::string unsupported_dtype(const FamilyPlugin& plugin, const std::string& dtype) {
  std::vector<std::string> supported;
  for (DType t : plugin.dtypes()) supported.emplace_back(dtype_name(t));
  return "unsupported dtype '" + dtype + "'" + did_you_mean(dtype, supported) + "; the " + plugin.name() +
         " family supports " + join(supported);
}

namespace {

// A value as a config would give it, checked as the config reader checks it.
std::string checked_value(const OptionSpec& o, const std::string& value) {
  const auto fail = [&](const std::string& what) { throw ConfigError(o.name + " " + what + ", not '" + value + "'"); };
  switch (o.kind) {
    case OptionSpec::Kind::boolean:
      if (value != "true" && value != "false") fail("must be true or false");
      return value;
    case OptionSpec::Kind::integer:
    case OptionSpec::Kind::number: {
      if (value == o.default_value) return value;  // "none": not given
      std::size_t used = 0;
      try {
        if (o.kind == OptionSpec::Kind::integer) (void)std::stoll(value, &used);
        else (void)std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size())
        fail(o.kind == OptionSpec::Kind::integer ? "must be an integer" : "must be a number");
      return value;
    }
    case OptionSpec::Kind::choice:
      if (std::find(o.choices.begin(), o.choices.end(), value) == o.choices.end())
        throw ConfigError(o.name + " must be one of " + join(o.choices) + ", not '" + value + "'" +
                          did_you_mean(value, o.choices));
      return value;
  }
  return value;
}

}  // namespace

Problem make_problem(const FamilyPlugin& plugin, const std::string& operation, DType dtype,
                     const std::map<std::string, std::string>& options, std::uint64_t n) {
  Problem p;
  p.family = plugin.name();
  const auto ops = plugin.operations();
  if (std::find(ops.begin(), ops.end(), operation) == ops.end()) throw ConfigError(no_such_operation(plugin, operation));
  p.operation = operation;
  const auto dtypes = plugin.dtypes();
  if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end())
    throw ConfigError(unsupported_dtype(plugin, std::string(dtype_name(dtype))));
  p.dtype = dtype;
  if (n == 0) throw ConfigError("size must be at least 1, not 0");
  p.n = p.max_n = n;
  const auto specs = plugin.options();
  std::vector<std::string> names;
  for (const auto& o : specs) names.push_back(o.name);
  for (const auto& [name, value] : options)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw ConfigError("the " + p.family + " family has no option '" + name + "'" + did_you_mean(name, names) +
                        (names.empty() ? "; it has none" : "; its options: " + join(names)));
  for (const auto& o : specs) {
    const auto it = options.find(o.name);
    if (it == options.end() && o.default_value.empty()) continue;  // "": absent unless given
    const std::string value = it == options.end() ? o.default_value : checked_value(o, it->second);
    if (!(o.omitted_at_default && value == o.default_value)) p.options[o.name] = value;
  }
  plugin.check(p);
  return p;
}

Problem make_declared_problem(const FamilyPlugin& plugin, const std::shared_ptr<const KernelFile>& file,
                              const std::map<std::string, std::int64_t>& sizes) {
  if (!file->declaration)
    throw ConfigError("kernel " + file->name + " (" + file->path.string() + ") has no declaration (docs/declared.md)");
  const Declaration& d = *file->declaration;
  Problem p;
  p.family = plugin.name();
  p.operation = file->name;
  p.declaration = file->declaration;
  std::uint64_t n = 1;
  for (const auto& name : d.sizes) {
    const auto it = sizes.find(name);
    if (it == sizes.end()) throw ConfigError("kernel " + file->name + " needs the size " + name + " (its sizes: " + join(d.sizes) + ")");
    if (it->second < 1) throw ConfigError("size " + name + " must be at least 1, not " + std::to_string(it->second));
    // Past 2^63 - 1 no run holds so many elements (the config's loader says so at its line).
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(it->second), &n) || n > (~std::uint64_t{0} >> 1))
      throw ConfigError("kernel " + file->name + ": the sizes' product (" + join(d.sizes, " * ") +
                        ") is past 2^63 - 1: no run can hold so many elements");
  }
  for (const auto& [name, v] : sizes) {
    if (std::find(d.sizes.begin(), d.sizes.end(), name) == d.sizes.end())
      throw ConfigError("kernel " + file->name + " has no size '" + name + "'" + did_you_mean(name, d.sizes) +
                        "; its sizes: " + join(d.sizes));
    p.options[name] = std::to_string(v);  // the tuning database's key, as a config's
  }
  p.sizes = sizes;
  p.n = p.max_n = n;
  p.constants = constant_values(d, sizes);  // the declaration's data (generated or read)
  return p;
}

}  // namespace gpuk
