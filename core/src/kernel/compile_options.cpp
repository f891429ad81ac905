// A declaration's NVRTC options (kernel/compile_options.hpp).
#include "kernel/compile_options.hpp"

#include <algorithm>
#include <cctype>

#include "kernel/metadata_parse.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

// Options that change the code NVRTC generates and nothing else, with the values each takes
// ("" for a flag). Each may be written with one dash or two.
struct Allowed {
  const char* name;
  std::vector<std::string> values;  // empty: a flag; {"N"}: a positive integer
};

const std::vector<Allowed>& allowed() {
  static const std::vector<Allowed> list = {
      {"use_fast_math", {}},         {"ftz", {"true", "false"}},      {"prec-div", {"true", "false"}},
      {"prec-sqrt", {"true", "false"}}, {"fmad", {"true", "false"}},  {"maxrregcount", {"N"}},
      {"restrict", {}},              {"extra-device-vectorization", {}}, {"lineinfo", {}},
      {"generate-line-info", {}},    {"dopt", {"on", "off"}},
  };
  return list;
}

std::string allowed_text() {
  std::vector<std::string> out;
  for (const auto& a : allowed())
    out.push_back("-" + std::string(a.name) + (a.values.empty() ? "" : a.values[0] == "N" ? "=N" : "=" + join(a.values, "|")));
  return join(out) + ", -DNAME[=VALUE]";
}

bool positive_integer(const std::string& s) {
  return !s.empty() && s.size() < 7 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }) &&
         std::stoi(s) > 0;
}

}  // namespace

std::vector<std::string> parse_compiler_options(const yaml::Source& src, const YAML::Node& node) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) src.fail(node, "compiler_options must be a list of NVRTC options ([-use_fast_math, -maxrregcount=64])");
  for (const auto& item : node) {
    const std::string option = src.string(item, "a compiler option");
    if (option.rfind("-D", 0) == 0) {
      const std::string def = option.substr(2);
      const std::string name = def.substr(0, def.find('='));
      if (!valid_identifier(name)) src.fail(item, "compiler option '" + option + "': '" + name + "' is not an identifier");
      out.push_back(option);
      continue;
    }
    const std::size_t dashes = option.rfind("--", 0) == 0 ? 2 : option.rfind('-', 0) == 0 ? 1 : 0;
    const std::size_t eq = option.find('=');
    const std::string name = option.substr(dashes, eq == std::string::npos ? std::string::npos : eq - dashes);
    const std::string value = eq == std::string::npos ? "" : option.substr(eq + 1);
    const auto a = std::find_if(allowed().begin(), allowed().end(), [&](const Allowed& x) { return x.name == name; });
    if (dashes == 0 || a == allowed().end())
      src.fail(item, "compiler option '" + option + "' is not allowed (gpuk sets the architecture, the include folders "
                     "and the C++ standard itself); allowed: " + allowed_text());
    const bool ok = a->values.empty() ? eq == std::string::npos
                    : a->values[0] == "N" ? positive_integer(value)
                                           : std::find(a->values.begin(), a->values.end(), value) != a->values.end();
    if (!ok)
      src.fail(item, "compiler option '" + option + "': -" + name +
                         (a->values.empty() ? " takes no value" : a->values[0] == "N" ? " takes =N, a positive integer"
                                                                                       : " takes =" + join(a->values, "|")));
    out.push_back(option);
  }
  return out;
}

std::vector<std::string> parse_defines(const yaml::Source& src, const YAML::Node& node, const std::set<std::string>& taken) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsMap()) src.fail(node, "defines must be a mapping NAME: VALUE (each reaches NVRTC as -DNAME=VALUE)");
  for (const auto& item : node) {
    const std::string name = src.string(item.first, "a define's name");
    if (!valid_identifier(name)) src.fail(item.first, "define '" + name + "' is not an identifier");
    if (taken.count(name))
      src.fail(item.first, "define '" + name + "' is a parameter, a size or a built-in name (a parameter is tuned: "
                           "params_as: defines passes it as -D)");
    const std::string value = src.string(item.second, "the value of " + name);
    if (value.find('\n') != std::string::npos) src.fail(item.second, "the value of define " + name + " is one line");
    out.push_back("-D" + name + "=" + value);
  }
  return out;
}

}  // namespace gpuk
