// What the config parsers share (core-internal): a config's root read as a run config or as the
// workload of a tune config (run_config.cpp), the data: block (data_block.cpp), and a tune space's
// value lists (value_list.cpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

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

// A data file describes itself (a .npy header; a raw file's size in data.dtype elements): it is
// opened while the config is read, so that `gpuk check` fails on a missing or damaged file, and it
// gives the size and dtype a config leaves out.
struct HeldData {
  std::optional<FileContents> contents;  // none: the config generates its data
  YAML::Node node;                       // data.file, where errors about the file point
  std::string holds() const;             // "the data file holds N T elements"
};
HeldData inspect_data_file(const yaml::Source& src, const YAML::Node& root);

// A file gives the data: a generator's settings beside it would be ignored without a word.
void refuse_generator_with_file(const yaml::Source& src, const YAML::Node& data);

// The data: block of a workload of `size` elements of `dtype`.
DataSpec parse_data(const yaml::Source& src, const YAML::Node& node, DType dtype, std::uint64_t size);

// The metadata's value-list grammar (kernel_file.cpp, parse_param): values / range / pow2.
std::vector<std::int64_t> value_list(const yaml::Source& src, const YAML::Node& node, const std::string& name);

}  // namespace gpuk
