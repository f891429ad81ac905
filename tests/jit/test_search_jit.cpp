// The search kernel files, compiled with NVRTC for sm_90 for every allowed value of every
// parameter (the tuner sweeps K = 1..64). Needs no GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

using namespace gpuk;

namespace {

// NVRTC for sm_90 with the kernels' include directories.
Jit sm90_jit(const KernelLibrary& kernels) {
  JitOptions options;
  options.arch = "sm_90";
  options.include_dirs = kernels.include_dirs();
  return Jit(options, nullptr);
}

// Every launch of `file` for each leading template argument, with `params`, in one NVRTC
// program; checks that each is lowered and returns how many were.
std::size_t compile_in_one_program(const KernelLibrary& kernels, const std::string& family, const std::string& kernel,
                                   const std::vector<std::string>& leading, const std::map<std::string, std::int64_t>& params) {
  const Jit jit = sm90_jit(kernels);
  auto file = std::make_shared<const KernelFile>(*kernels.find(family, kernel));
  std::vector<std::string> names;
  for (const std::string& t : leading) {
    const Variant v(file, {t}, params);
    for (const auto& l : file->launches) names.push_back(v.name_expression(l));
  }
  const CompiledKernels c = jit.compile(*file, names);
  for (const auto& lowered : c.lowered_names) CHECK_FALSE(lowered.empty());
  return c.lowered_names.size();
}

}  // namespace

TEST_CASE("every allowed value of every search parameter compiles (int32 find or lower_bound, other parameters at default)") {
  const KernelLibrary kernels({test::kernels_dir()});
  const Jit jit = sm90_jit(kernels);
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
  std::vector<std::string> leading;
  for (const char* t : {"int", "unsigned int", "long long", "float", "double"})
    for (const char* c : {"Eq", "Ne", "Lt", "Le", "Gt", "Ge", "Range", "ClosedRange"})
      leading.push_back(std::string("gpuk::Search<") + t + ", gpuk::SearchOp::Find, gpuk::Compare::" + c + ">");
  CHECK(compile_in_one_program(kernels, "search", "fast", leading, {}) == 40);
}

TEST_CASE("bounds_window's SPLITS 1 compiles for every dtype and both bounds (one NVRTC program)") {
  // its code path of its own: the first launch's splits, and the tiles' windows taken from them
  const KernelLibrary kernels({test::kernels_dir()});
  std::vector<std::string> leading;
  for (const char* t : {"int", "unsigned int", "long long", "float", "double"})
    for (const char* side : {"Lower", "Upper"}) leading.push_back(std::string("gpuk::Bounds<") + t + ", gpuk::Side::" + side + ">");
  CHECK(compile_in_one_program(kernels, "search", "bounds_window", leading, {{"SPLITS", 1}}) == 20);  // two entries each
}

TEST_CASE("bounds_merge compiles for every dtype and both bounds, at its widest tile too (one NVRTC program)") {
  // its two entries (the merge's splits, the merge) for each; the widest tile stages 7680 keys
  // and needles, past the 48 KiB of static shared memory for 8-byte keys: dynamic shared memory
  const KernelLibrary kernels({test::kernels_dir()});
  std::vector<std::string> leading;
  for (const char* t : {"int", "unsigned int", "long long", "float", "double"})
    for (const char* side : {"Lower", "Upper"}) leading.push_back(std::string("gpuk::Bounds<") + t + ", gpuk::Side::" + side + ">");
  CHECK(compile_in_one_program(kernels, "search", "bounds_merge", leading, {}) == 20);
  CHECK(compile_in_one_program(kernels, "search", "bounds_merge", leading, {{"BLOCK", 512}, {"ITEMS", 15}, {"BLOCKS_PER_SM", 1}}) == 20);
}
