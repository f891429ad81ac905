// What the config parsers share (core-internal): a config's root read as a run config or as the
// workload of a tune config (run_config.cpp).
#pragma once
#include <filesystem>
#include <string>

#include "config/config.hpp"
#include "util/yaml_util.hpp"

namespace gpuk {

// Keys a tune config reads and a run config does not.
inline constexpr const char* kTuneOnlyKeys[] = {"kernels", "strategy", "budget", "constraints", "recheck"};

// A run config's root, or (tune) the workload of a tune config, whose own parser then takes the
// kernels and parameters (tune_config.cpp).
enum class RootMode { run, tune };
RunSpec parse_run_root(const yaml::Source& src, const YAML::Node& root, const std::filesystem::path& path,
                       const PluginRegistry& plugins, const KernelLibrary& kernels, RootMode mode);

// A declared kernel's config (it has `sizes:`; config/declared_config.cpp, docs/declared.md).
RunSpec parse_declared_root(const yaml::Source& src, const YAML::Node& root, const std::filesystem::path& path,
                            const PluginRegistry& plugins, const KernelLibrary& kernels, RootMode mode);

// Refuses a generator setting (low, high, range, mean, stddev, distinct) in `data` that
// `generator` does not use, at its line: `distinct` beside uniform data was silently ignored.
void refuse_unused_generator_settings(const yaml::Source& src, const YAML::Node& data, Generator generator);

}  // namespace gpuk
