// Every allowed value of every parameter of every sort kernel file compiles with NVRTC for sm_90
// (uint32 keys with uint32 values, or top-k's int64 indices; the other parameters at their
// defaults), and topk_rows.cu for every key dtype and order at its parameter corners: no GPU
// needed.
#include <doctest/doctest.h>

#include <algorithm>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

using namespace gpuk;

TEST_CASE("every allowed value of every sort parameter compiles (uint32 pairs, other parameters at default)") {
  const KernelLibrary kernels({test::kernels_dir()});
  JitOptions options;
  options.arch = "sm_90";
  options.include_dirs = kernels.include_dirs();
  const Jit jit(options, nullptr);
  const auto files = kernels.family("sort");
  REQUIRE(files.size() >= 4);
  for (const auto& file : files) {
    CAPTURE(file->path.string());
    // topk_radix.cu: uint32 keys with their int64 indices.
    const std::vector<std::string> leading = {
        file->supports("topk") ? "gpuk::Sort<unsigned int, long long, false, gpuk::SortKind::TopK>"
                               : "gpuk::Sort<unsigned int, unsigned int, false, gpuk::SortKind::Pairs>"};
    std::vector<std::string> names;
    for (const auto& p : file->params) {
      for (const auto value : p.values) {
        try {
          const Variant v(file, leading, {{p.name, value}});
          for (const auto& l : file->launches) {
            const std::string name = v.name_expression(l);
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
          }
        } catch (const ConfigError&) {
          // Ruled out by a constraint together with the other parameters' defaults.
        }
      }
    }
    REQUIRE_FALSE(names.empty());
    const CompiledKernels c = jit.compile(*file, names);
    CHECK(c.lowered_names.size() == names.size());
  }
}

TEST_CASE("topk_rows (a sort file) compiles for every key dtype and order at its parameter corners") {
  // Every dtype, both orders and a bit window in CUB's float order (the plugin's leading-argument
  // lists), at the defaults and at two corners: the narrowest block with one item, 11-bit digits,
  // plain atomics and a small row; the widest with 16 items, 5-bit digits and ballot matches.
  // Every path (the row in shared memory, the row read from global memory, k = 1's reduction,
  // small k's candidates up to 256 threads, k = the row's length's copy) and the sort of `sorted`
  // is in every variant: they are chosen at run time.
  const KernelLibrary kernels({test::kernels_dir()});
  const PluginRegistry plugins({test::plugin_dir()});
  JitOptions options;
  options.arch = "sm_90";
  options.include_dirs = kernels.include_dirs();
  const Jit jit(options, nullptr);
  const auto file = kernels.find("sort", "topk_rows");
  REQUIRE(file->supports("topk"));
  const auto leading = plugins.get("sort").all_template_args(*file);
  REQUIRE(leading.size() == 3 * 6);  // 6 dtypes x (ascending, descending, a window)
  const std::vector<std::map<std::string, std::int64_t>> corners = {
      {},
      {{"BLOCK", 128}, {"ITEMS", 1}, {"RADIX_BITS", 11}, {"ROW_KEYS", 1024}, {"WAVES", 1}, {"MATCH", 0}},
      {{"BLOCK", 1024}, {"ITEMS", 16}, {"RADIX_BITS", 5}, {"ROW_KEYS", 16384}, {"WAVES", 16}, {"MATCH", 1}}};
  for (const auto& params : corners) {
    std::vector<std::string> names;
    for (const auto& args : leading) {
      const Variant v(file, args, params);
      for (const auto& l : file->launches) names.push_back(v.name_expression(l));
    }
    const CompiledKernels c = jit.compile(*file, names);
    CHECK(c.lowered_names.size() == names.size());
  }
}
