// A tune config already parsed as YAML (core-internal): the tuning matrix builds each cell's
// config from nodes of its own file, so every error still names the matrix's file:line:column.
#pragma once
#include "config/config.hpp"
#include "util/yaml_util.hpp"

namespace gpuk {

TuneSpec parse_tune_root(const yaml::Source& src, const YAML::Node& root, const PluginRegistry& plugins,
                         const KernelLibrary& kernels);

}  // namespace gpuk
