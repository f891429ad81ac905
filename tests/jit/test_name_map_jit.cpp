// A template whose parameters do not match the metadata: NVRTC says so in two errors per name
// expression in its "__nv_name_map"; gpuk says it in one line, with the list the metadata implies.
#include <doctest/doctest.h>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

using namespace gpuk;

namespace {

std::string compile_error(const std::string& source) {
  const test::TempDir dir;
  const auto path = dir.write("reduce/mismatch.cu", source);
  const PluginRegistry plugins({test::plugin_dir()});
  const KernelLibrary kernels({test::kernels_dir()});
  const KernelFile file = KernelFile::load(path);
  const auto shared = std::make_shared<const KernelFile>(file);
  std::vector<std::string> names;
  for (const auto& args : plugins.get("reduce").all_template_args(file))
    for (const auto& l : file.launches) names.push_back(Variant(shared, args, {}).name_expression(l));
  JitOptions options;
  options.arch = "sm_90";
  options.include_dirs = kernels.include_dirs();
  try {
    Jit(options, nullptr).compile(file, names);
  } catch (const CompileError& e) {
    return std::string(e.what()).replace(0, path.string().size(), "mismatch.cu");
  }
  return "";
}

const std::string kMetadata =
    "/* gpuk\nfamily: reduce\noperations: [max]\nparams:\n  BLOCK: {default: 256, values: [128, 256]}\n"
    "  UNROLL: {default: 4, values: [1, 4]}\nlaunch:\n  - entry: reduce_mismatch\n    grid: 1\n    block: BLOCK\n*/\n";

}  // namespace

TEST_CASE("a template with fewer parameters than the metadata is one line naming the entry and the implied list") {
  const std::string e = compile_error(kMetadata + "#include \"gpuk/reduce.cuh\"\ntemplate <class R, int BLOCK>\n"
                                                  "__global__ void reduce_mismatch(const float* in) {}\n");
  CAPTURE(e);
  CHECK(e.find('\n') == std::string::npos);
  CHECK(e.find("__nv_name_map") == std::string::npos);
  CHECK(e.rfind("mismatch.cu:13:1: the entry 'reduce_mismatch' (launch at line 8) cannot be instantiated as "
                "reduce_mismatch<gpuk::Reduce<",
                0) == 0);
  CHECK(e.find("its metadata implies template <class /* gpuk::Reduce<") != std::string::npos);
  CHECK(e.find(", int BLOCK, int UNROLL> (1 argument of the reduce family, then one per parameter in metadata "
               "order), but the file declares template <class R, int BLOCK>") != std::string::npos);
}

TEST_CASE("an error in the kernel's own code keeps NVRTC's log with file:line:col") {
  const std::string e = compile_error(kMetadata + "#include \"gpuk/reduce.cuh\"\ntemplate <class R, int BLOCK, int UNROLL>\n"
                                                  "__global__ void reduce_mismatch(const float* in) { undefined_name = 1; }\n");
  CAPTURE(e);
  CHECK(e.find("mismatch.cu:14:") != std::string::npos);
  CHECK(e.find("undefined_name") != std::string::npos);
}
