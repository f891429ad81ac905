// A run's YAML config, read into a typed spec (README.md, "Config reference").
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "gpuk/data.hpp"
#include "gpuk/dtype.hpp"

namespace gpuk {

class PluginRegistry;
class KernelLibrary;

struct RunSpec {
  std::filesystem::path path;  // the config file
  std::string family;
  std::string operation;
  std::string kernel;                           // kernel file name (stem)
  std::map<std::string, std::int64_t> params;   // values for the kernel's template parameters
  DType dtype = DType::float32;
  std::uint64_t size = 0;
  DataSpec data;
  int warmup = 10;
  int repeats = 100;
  int cpu_repeats = 5;
  bool verify = true;
  bool baseline = true;
  std::optional<std::filesystem::path> output;  // write the result as .npy
  std::map<std::string, std::string> options;   // family options, every one filled (defaults too)

  bool option_bool(const std::string& name) const;
  std::int64_t option_int(const std::string& name) const;
  double option_number(const std::string& name) const;
  const std::string& option(const std::string& name) const;
};

// Reads and checks a config against the plugins and kernel files that are there. Every error
// is a ConfigError "file:line:column: what".
RunSpec load_run_spec(const std::filesystem::path& path, const PluginRegistry& plugins,
                      const KernelLibrary& kernels);
RunSpec parse_run_spec(const std::string& yaml_text, const std::filesystem::path& path,
                       const PluginRegistry& plugins, const KernelLibrary& kernels);

}  // namespace gpuk
