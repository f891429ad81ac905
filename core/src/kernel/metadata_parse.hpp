// What the readers of kernel metadata and of declarations share (kernel_file.cpp, declaration.cpp).
#pragma once
#include <string>
#include <vector>

#include "kernel/kernel_file.hpp"
#include "util/yaml_util.hpp"

namespace gpuk {

bool valid_identifier(const std::string& s);

// A metadata expression whose every identifier is one of `params` or `builtins`, else a
// ConfigError at the identifier's own line and column (with did-you-mean).
Expr parse_metadata_expr(const yaml::Source& src, const YAML::Node& node, const std::string& what,
                         const std::vector<std::string>& params, const std::vector<std::string>& builtins);

// One parameter NAME: {default, values | range | pow2}.
ParamSpec parse_metadata_param(const yaml::Source& src, const std::string& name, const YAML::Node& node);

}  // namespace gpuk
