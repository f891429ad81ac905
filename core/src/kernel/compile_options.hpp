// A declaration's NVRTC options (docs/declared.md): `compiler_options:` checked against an
// allow-list of options that change only the code generated, and untuned `defines:`.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "util/yaml_util.hpp"

namespace gpuk {

// `compiler_options: [-use_fast_math, -maxrregcount=64]`: each option one of the allowed (said
// by name when refused: no paths, no architecture, nothing that writes files).
std::vector<std::string> parse_compiler_options(const yaml::Source& src, const YAML::Node& node);

// `defines: {NAME: VALUE}` as "-DNAME=VALUE", for every variant alike. A NAME in `taken` (the
// parameters, sizes and built-in names) is refused: a parameter is tuned, not defined.
std::vector<std::string> parse_defines(const yaml::Source& src, const YAML::Node& node, const std::set<std::string>& taken);

}  // namespace gpuk
