// Every kernel file, compiled with NVRTC for sm_90: needs no GPU, runs in CI.
#include <doctest/doctest.h>

#include <algorithm>

#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

using namespace gpuk;

namespace {

struct Setup {
  PluginRegistry plugins{{test::plugin_dir()}};
  KernelLibrary kernels{{test::kernels_dir()}};
  JitOptions options() const {
    JitOptions o;
    o.arch = "sm_90";
    o.include_dirs = kernels.include_dirs();
    return o;
  }
};

std::vector<std::string> names_for(const KernelFile& file, const std::vector<std::vector<std::string>>& arg_sets,
                                   const std::map<std::string, std::int64_t>& params) {
  std::vector<std::string> names;
  auto shared = std::make_shared<const KernelFile>(file);
  for (const auto& args : arg_sets) {
    const Variant v(shared, args, params);
    for (const auto& l : file.launches) names.push_back(v.name_expression(l));
  }
  return names;
}

// Every file of one family, for every operation, dtype and option it declares: one NVRTC program
// per file. A test case per family (below), so that CTest can run them side by side
// (tests/CMakeLists.txt: the longest, minutes on one core, in a CTest entry of its own).
void compile_every_file(const std::string& family) {
  const Setup s;
  REQUIRE(s.kernels.errors().empty());
  const FamilyPlugin* plugin = s.plugins.find(family);
  REQUIRE_MESSAGE(plugin, "no plugin for family " << family);
  const auto files = s.kernels.family(family);
  REQUIRE_FALSE(files.empty());
  const Jit jit(s.options(), nullptr);
  for (const auto& file : files) {
    CAPTURE(file->path.string());
    const auto names = names_for(*file, plugin->all_template_args(*file), {});
    const CompiledKernels c = jit.compile(*file, names);
    CHECK_FALSE(c.cubin.empty());
    REQUIRE(c.lowered_names.size() == names.size());
    for (const auto& lowered : c.lowered_names) CHECK_FALSE(lowered.empty());
  }
}

const std::vector<std::string> kFamilies = {"reduce", "search", "sort", "kernel"};

}  // namespace

TEST_CASE("every kernel file is of a family whose files are all compiled below") {
  const Setup s;
  REQUIRE(s.kernels.errors().empty());
  REQUIRE_FALSE(s.kernels.files().empty());
  for (const auto& file : s.kernels.files()) {
    CAPTURE(file->path.string());
    CHECK_MESSAGE(std::find(kFamilies.begin(), kFamilies.end(), file->family) != kFamilies.end(),
                  "family " << file->family << " has no test case below: add one");
  }
}

TEST_CASE("every reduce kernel file compiles for every operation, dtype and option it declares") {
  compile_every_file("reduce");
}

TEST_CASE("every search kernel file compiles for every operation, dtype and option it declares") {
  compile_every_file("search");
}

TEST_CASE("every sort kernel file compiles for every operation, dtype and option it declares") {
  compile_every_file("sort");
}

TEST_CASE("every declared kernel file (family kernel) compiles for every dtype and option it declares") {
  compile_every_file("kernel");
}

TEST_CASE("every allowed value of every parameter compiles (float32 argmax of |x|, other parameters at default)") {
  const Setup s;
  const Jit jit(s.options(), nullptr);
  for (const auto& file : s.kernels.family("reduce")) {
    CAPTURE(file->path.string());
    std::vector<std::string> names;
    for (const auto& p : file->params) {
      for (const auto value : p.values) {
        try {
          const auto more = names_for(*file, {{"gpuk::Reduce<float, gpuk::ReduceOp::ArgMax, true>"}}, {{p.name, value}});
          for (const auto& n : more)
            if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        } catch (const ConfigError&) {
          // Ruled out by a constraint together with the other parameters' defaults.
        }
      }
    }
    if (names.empty()) continue;
    const CompiledKernels c = jit.compile(*file, names);
    CHECK(c.lowered_names.size() == names.size());
  }
}
