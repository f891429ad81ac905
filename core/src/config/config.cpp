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

namespace {

template <class E> struct Named {
  E value;
  const char* name;
};

constexpr Named<TuneStrategy> kStrategies[] = {{TuneStrategy::exhaustive, "exhaustive"},
                                               {TuneStrategy::random, "random"},
                                               {TuneStrategy::anneal, "anneal"},
                                               {TuneStrategy::bayes, "bayes"}};
constexpr Named<TuneObjective> kObjectives[] = {
    {TuneObjective::time, "time"}, {TuneObjective::energy, "energy"}, {TuneObjective::edp, "edp"}};

template <class E, std::size_t N> const char* name_in(const Named<E> (&table)[N], E value) {
  for (const auto& n : table)
    if (n.value == value) return n.name;
  return "?";
}

template <class E, std::size_t N> std::optional<E> value_in(const Named<E> (&table)[N], std::string_view name) {
  for (const auto& n : table)
    if (name == n.name) return n.value;
  return std::nullopt;
}

template <class E, std::size_t N> std::vector<std::string> names_in(const Named<E> (&table)[N]) {
  std::vector<std::string> names;
  for (const auto& n : table) names.emplace_back(n.name);
  return names;
}

}  // namespace

const char* strategy_name(TuneStrategy s) { return name_in(kStrategies, s); }
std::optional<TuneStrategy> parse_strategy(std::string_view name) { return value_in(kStrategies, name); }
const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = names_in(kStrategies);
  return names;
}

const char* objective_name(TuneObjective o) { return name_in(kObjectives, o); }
std::optional<TuneObjective> parse_objective(std::string_view name) { return value_in(kObjectives, name); }
const std::vector<std::string>& objective_names() {
  static const std::vector<std::string> names = names_in(kObjectives);
  return names;
}

}  // namespace gpuk
