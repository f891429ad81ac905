// One config, end to end: data, JIT, upload, launch, verify, baselines, and the report.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "gpuk/config.hpp"
#include "gpuk/device.hpp"
#include "gpuk/jit.hpp"
#include "gpuk/kernel_file.hpp"
#include "gpuk/plugin.hpp"

namespace gpuk {

struct Stats {
  double median = 0, min = 0, max = 0;
  std::size_t count = 0;
  static Stats of(std::vector<double> samples);
};

struct NamedStats {
  std::string name;
  Stats ms;
  std::string note;
};

struct RunReport {
  // What ran.
  std::string config, family, operation, kernel_file, variant, dtype;
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<ResolvedLaunch> launches;
  std::uint64_t size = 0;
  // Where.
  std::string gpu, arch, nvrtc;
  int driver_version = 0;
  double peak_gbs = 0;
  // Compile.
  double compile_ms = 0;
  bool from_cache = false;
  // Times (milliseconds).
  double upload_ms = 0, download_ms = 0, total_ms = 0;
  Stats kernel;
  std::vector<NamedStats> cpu;
  std::optional<NamedStats> baseline;
  // Throughput and answer.
  std::uint64_t bytes_moved = 0;
  double gbs = 0, percent_of_peak = 0;
  Verification verification;
  bool verified = false;
  std::vector<std::pair<std::string, std::string>> result;

  double speedup_over_cpu() const;       // best CPU median / kernel median
  double speedup_over_baseline() const;  // baseline median / kernel median (0 without one)
};

struct RunContext {
  const PluginRegistry& plugins;
  const KernelLibrary& kernels;
  const CompileCache* cache = nullptr;
};

// Throws ConfigError, CompileError or DeviceError with the variant named. `precompiled`, when
// it holds the variant's kernels, spares the JIT (tests compile a whole file's variants at once).
RunReport run(const RunSpec& spec, const RunContext& context, Device& device,
              const CompiledKernels* precompiled = nullptr);

void print_report(std::ostream& out, const RunReport& report);
void write_json(const std::filesystem::path& path, const RunReport& report);
void write_csv(const std::filesystem::path& path, const RunReport& report);

}  // namespace gpuk
