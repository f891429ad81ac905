// The sweep's device comparison (core/src/tune/measure/device_answer.cpp), compiled with NVRTC for sm_90:
// needs no GPU, runs in CI. Its behaviour on a GPU: tests/gpu/test_tune_gpu.cpp.
#include <doctest/doctest.h>

#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "tune/measure/device_answer.hpp"

using namespace gpuk;

TEST_CASE("the sweep's compare, copy and within-the-rule kernels compile for sm_90") {
  KernelFile file;
  file.path = "gpuk_device_answer.cu";
  file.source = DeviceAnswer::source();
  JitOptions options;
  options.arch = "sm_90";
  const CompiledKernels compiled = Jit(options, nullptr).compile(file, DeviceAnswer::kernel_names());
  CHECK_FALSE(compiled.cubin.empty());
  for (const auto& name : DeviceAnswer::kernel_names()) CHECK(compiled.lowered(name).find(name) != std::string::npos);
  // The compare rule's program: gpuk_within<T>, one instance per dtype, lowered to its mangled name.
  file.path = "gpuk_device_within.cu";
  file.source = DeviceAnswer::within_source();
  const CompiledKernels within = Jit(options, nullptr).compile(file, DeviceAnswer::within_kernel_names());
  CHECK(DeviceAnswer::within_kernel_names().size() == 6);
  for (const auto& name : DeviceAnswer::within_kernel_names())
    CHECK(within.lowered(name).find("gpuk_within") != std::string::npos);
}
