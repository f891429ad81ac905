// Every kernel file, compiled with NVRTC for sm_90: needs no GPU, runs in CI.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>

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

TEST_CASE("onepass's FOLD 2 compiles for every operation, dtype and |x|: argminmax of float32's fold, FOLD 1 elsewhere") {
  // FOLD 2 has code of its own only for argminmax of float32 (float_pair_onepass); the shapes are
  // the shipped 2^28 one, the smallest tile with SPLIT 1, and the largest block.
  const Setup s;
  const Jit jit(s.options(), nullptr);
  std::shared_ptr<const KernelFile> onepass;
  for (const auto& file : s.kernels.family("reduce"))
    if (file->name == "onepass") onepass = file;
  REQUIRE(onepass);
  const FamilyPlugin* plugin = s.plugins.find("reduce");
  REQUIRE(plugin);
  std::vector<std::vector<std::string>> argminmax, others;
  for (const auto& args : plugin->all_template_args(*onepass))
    (args.front().find("ArgMinMax") != std::string::npos ? argminmax : others).push_back(args);
  REQUIRE(argminmax.size() == 12);  // six dtypes, |x| or not
  std::vector<std::string> names;
  for (const std::map<std::string, std::int64_t>& params :
       {std::map<std::string, std::int64_t>{{"FOLD", 2}, {"BLOCK", 256}, {"UNROLL", 8}, {"LOAD", 2}, {"WAVES", 4}},
        std::map<std::string, std::int64_t>{{"FOLD", 2}, {"BLOCK", 128}, {"UNROLL", 1}, {"SPLIT", 1}},
        std::map<std::string, std::int64_t>{{"FOLD", 2}, {"BLOCK", 1024}, {"UNROLL", 4}, {"BLOCKS_PER_SM", 2}}})
    for (const auto& n : names_for(*onepass, argminmax, params)) names.push_back(n);
  for (const auto& n : names_for(*onepass, others, {{"FOLD", 2}})) names.push_back(n);
  const CompiledKernels c = jit.compile(*onepass, names);
  CHECK_FALSE(c.cubin.empty());
  REQUIRE(c.lowered_names.size() == names.size());
  for (const auto& lowered : c.lowered_names) CHECK_FALSE(lowered.empty());
}
