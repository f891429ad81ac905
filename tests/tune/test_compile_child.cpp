// compile_in_child: a pooled sweep's parent compiles in child processes (NVRTC initialises CUDA in
// the process that compiles, and the parent must fork GPU workers afterwards).
#include <doctest/doctest.h>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "tune/compile_child.hpp"

using namespace gpuk;

namespace {

const char* kKernel = R"(/* gpuk
family: reduce
operations: [max]
params:
  BLOCK: {default: 64, values: [32, 64]}
launch:
  - entry: scale
    grid: 1
    block: BLOCK
*/
template <class R, int BLOCK>
__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }
)";

JitOptions sm90() {
  JitOptions o;
  o.arch = "sm_90";
  return o;
}

}  // namespace

TEST_CASE("a program compiled in a child process is the one this process would compile, taken from the cache") {
  const test::TempDir dir;
  const CompileCache cache(dir.path() / "cache");
  const Jit jit(sm90(), &cache);
  const KernelFile file = KernelFile::load(dir.write("scale.cu", kKernel));
  const std::vector<std::string> names = {"scale<int, 64>", "scale<int, 32>"};
  const CompiledKernels first = compile_in_child(jit, file, names);
  CHECK_FALSE(first.from_cache);  // the child compiled it
  CHECK_FALSE(first.cubin.empty());
  const CompiledKernels again = compile_in_child(jit, file, names);
  CHECK(again.from_cache);
  CHECK(again.cubin == first.cubin);
  CHECK(again.lowered_names == first.lowered_names);
  // The same bytes as a compile in this process, which the cache now answers.
  const CompiledKernels here = jit.compile(file, names);
  CHECK(here.from_cache);
  CHECK(here.cubin == first.cubin);
}

TEST_CASE("a compile error in the child process is this process's CompileError, with NVRTC's message") {
  const test::TempDir dir;
  const CompileCache cache(dir.path() / "cache");
  const Jit jit(sm90(), &cache);
  std::string broken = kKernel;
  broken.replace(broken.find("*= 2.0f"), 7, "*= undeclared_name");
  const KernelFile file = KernelFile::load(dir.write("broken.cu", broken));
  try {
    (void)compile_in_child(jit, file, {"scale<int, 64>"});
    FAIL("no CompileError");
  } catch (const CompileError& e) {
    const std::string what = e.what();
    CHECK(what.find("broken.cu") != std::string::npos);
    CHECK(what.find("undeclared_name") != std::string::npos);
  }
}
