// What the configs share: a RunSpec's Problem and options, and which kind of config a file is.
// The parsers: run_config.cpp and tune_config.cpp.
#include "config/config.hpp"

#include "config/config_parse.hpp"
#include "gpuk/error.hpp"
#include "util/regular_file.hpp"

namespace gpuk {

ConfigKind config_kind(const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception&) {
    return ConfigKind::run;
  }
  if (!root.IsMap()) return ConfigKind::run;
  if (root["operations"]) return ConfigKind::matrix;
  for (const char* key : kTuneOnlyKeys)
    if (root[key]) return ConfigKind::tune;
  return ConfigKind::run;
}

ConfigKind config_kind_of_file(const std::filesystem::path& path) {
  return config_kind(read_regular_file_or_throw(path, kMaxConfigBytes, "the config file"));
}

bool RunSpec::option_bool(const std::string& name) const { return option(name) == "true"; }
const std::string& RunSpec::option(const std::string& name) const {
  const auto it = options.find(name);
  if (it == options.end()) throw Error("the config has no option '" + name + "'");
  return it->second;
}

const char* objective_name(TuneObjective o) {
  return o == TuneObjective::time ? "time" : o == TuneObjective::energy ? "energy" : "edp";
}

std::optional<TuneObjective> parse_objective(std::string_view name) {
  if (name == "time") return TuneObjective::time;
  if (name == "energy") return TuneObjective::energy;
  if (name == "edp") return TuneObjective::edp;
  return std::nullopt;
}

}  // namespace gpuk
