// Every allowed value of every parameter of every sort kernel file compiles with NVRTC for sm_90
// (uint32 keys with uint32 values, or top-k's int64 indices; the other parameters at their
// defaults): no GPU needed.
#include <doctest/doctest.h>

#include <algorithm>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"

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
