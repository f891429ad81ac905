// One instantiation of a kernel file: its parameter values checked against the metadata, its
// name expressions and label.
#include <algorithm>

#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "util/text.hpp"

namespace gpuk {

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

Variant Variant::for_launch(const LaunchSpec& launch) const {
  Variant v = *this;
  for (auto& [n, value] : v.params_)
    if (const auto it = launch.params.find(n); it != launch.params.end()) value = it->second;
  return v;
}

std::string Variant::name_expression(const LaunchSpec& launch) const {
  return launch.params.empty() ? instantiation(launch) : for_launch(launch).instantiation(launch);
}

std::string Variant::instantiation(const LaunchSpec& launch) const {
  if (file_->params_as == ParamsAs::defines) {
    std::string out = launch.entry;
    for (const auto& [n, v] : params_) out += " -D" + n + "=" + std::to_string(v);
    return out;
  }
  // A declared kernel without parameters may be a plain function (a naive reference).
  if (file_->declaration && leading_args_.empty() && params_.empty()) return launch.entry;
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

}  // namespace gpuk
