// The search kernel files, compiled with NVRTC for sm_90 for every allowed value of every
// parameter (the tuner sweeps K = 1..64). Needs no GPU.
#include <doctest/doctest.h>

#include <algorithm>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

using namespace gpuk;

TEST_CASE("every allowed value of every search parameter compiles (int32 find or lower_bound, other parameters at default)") {
  const KernelLibrary kernels({test::kernels_dir()});
  JitOptions options;
  options.arch = "sm_90";
  options.include_dirs = kernels.include_dirs();
  const Jit jit(options, nullptr);
  const auto files = kernels.family("search");
  REQUIRE(files.size() >= 5);
  for (const auto& file : files) {
    CAPTURE(file->path.string());
    auto shared = std::make_shared<const KernelFile>(*file);
    std::vector<std::string> names;
    int variants = 0;
    const std::string leading =
        file->supports("find") ? "gpuk::Search<int, gpuk::SearchOp::Find>" : "gpuk::Bounds<int, gpuk::Side::Lower>";
    for (const auto& p : file->params) {
      for (const auto value : p.values) {
        try {
          const Variant v(shared, {leading}, {{p.name, value}});
          ++variants;
          for (const auto& l : file->launches) {
            const std::string name = v.name_expression(l);
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
          }
        } catch (const ConfigError&) {
          // Ruled out by a constraint together with the other parameters' defaults.
        }
      }
    }
    if (names.empty()) continue;
    const CompiledKernels c = jit.compile(*file, names);  // one NVRTC program per file
    CHECK(c.lowered_names.size() == names.size());
    for (const auto& lowered : c.lowered_names) CHECK_FALSE(lowered.empty());
    MESSAGE(file->name << ": " << variants << " parameter values, " << names.size() << " kernels");
  }
}

TEST_CASE("find_if compiles in fast for every comparison, the ranges included, and dtype (one NVRTC program)") {
  const KernelLibrary kernels({test::kernels_dir()});
  JitOptions options;
  options.arch = "sm_90";
  options.include_dirs = kernels.include_dirs();
  const Jit jit(options, nullptr);
  auto file = std::make_shared<const KernelFile>(*kernels.find("search", "fast"));
  std::vector<std::string> names;
  for (const char* t : {"int", "unsigned int", "long long", "float", "double"})
    for (const char* c : {"Eq", "Ne", "Lt", "Le", "Gt", "Ge", "Range", "ClosedRange"}) {
      const Variant v(file, {std::string("gpuk::Search<") + t + ", gpuk::SearchOp::Find, gpuk::Compare::" + c + ">"}, {});
      for (const auto& l : file->launches) names.push_back(v.name_expression(l));
    }
  const CompiledKernels c = jit.compile(*file, names);
  CHECK(c.lowered_names.size() == 40);
  for (const auto& lowered : c.lowered_names) CHECK_FALSE(lowered.empty());
}

TEST_CASE("bounds_window's SPLITS 1 compiles for every dtype and both bounds (one NVRTC program)") {
  // its code path of its own: the first launch's splits, and the tiles' windows taken from them
  const KernelLibrary kernels({test::kernels_dir()});
  JitOptions options;
  options.arch = "sm_90";
  options.include_dirs = kernels.include_dirs();
  const Jit jit(options, nullptr);
  auto file = std::make_shared<const KernelFile>(*kernels.find("search", "bounds_window"));
  std::vector<std::string> names;
  for (const char* t : {"int", "unsigned int", "long long", "float", "double"})
    for (const char* side : {"Lower", "Upper"}) {
      const Variant v(file, {std::string("gpuk::Bounds<") + t + ", gpuk::Side::" + side + ">"}, {{"SPLITS", 1}});
      for (const auto& l : file->launches) names.push_back(v.name_expression(l));
    }
  const CompiledKernels c = jit.compile(*file, names);
  CHECK(c.lowered_names.size() == 20);  // two entries each
  for (const auto& lowered : c.lowered_names) CHECK_FALSE(lowered.empty());
}
