// What the readers of kernel metadata and of declarations share (kernel_file.cpp, declaration.cpp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "kernel/kernel_file.hpp"
#include "util/yaml_util.hpp"

namespace gpuk {

bool valid_identifier(const std::string& s);

// Bounds far past any kernel's, so that a file cannot make loading (and check_can_launch's
// samples) take minutes: 100,000 parameters took 22 GB and 2 minutes, 50,000 launches 90 s;
// a declaration of 8,000 parameters 55 s and 15 GB. Kernel metadata and declarations alike.
inline constexpr std::size_t kMostParams = 64, kMostConstraints = 256, kMostLaunches = 64, kMostArgs = 256;

// Throws ConfigError at `node` when the sequence or mapping has more than `most` entries.
void refuse_too_many(const yaml::Source& src, const YAML::Node& node, const std::string& key, std::size_t most);

// Where `word` first stands as a whole identifier in `text` (0 when it does not).
std::size_t identifier_offset(const std::string& text, const std::string& word);

// Throws ConfigError "path:line:col: what" at byte `offset` of the expression in scalar `node`:
// the expression's column folded into the file's, so that a message names one place once. A
// scalar written over several lines keeps its line and says the column within the expression.
[[noreturn]] void fail_in_expr(const yaml::Source& src, const YAML::Node& node, std::size_t offset,
                               const std::string& what);

// A metadata expression whose every identifier is one of `params` or `builtins`, else a
// ConfigError at the identifier's own line and column (with did-you-mean).
Expr parse_metadata_expr(const yaml::Source& src, const YAML::Node& node, const std::string& what,
                         const std::vector<std::string>& params, const std::vector<std::string>& builtins);

// One parameter NAME: {default, values | range | pow2}.
ParamSpec parse_metadata_param(const yaml::Source& src, const std::string& name, const YAML::Node& node);

}  // namespace gpuk
