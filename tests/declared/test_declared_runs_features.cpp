// Kernel Tuner's kinds of kernels declared without traps, whole commands on the driver with host
// memory (tests/api/fake_driver.cpp, GPUK_FAKE_HOST_MEMORY; its modules hold their CUBIN's
// globals in host memory): constants written into each module and checked against their symbol,
// the module cache keyed by them, a memory need from the declared arrays, a pipeline with a
// launch's own parameters ranked by a metric, and partial sums compared by their total. What the
// kernels compute is the GPU test's (tests/gpu/test_declared_gpu.cpp).
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>

#include "config/config.hpp"
#include "declared/declared_cli.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "jit/jit.hpp"
#include "kernel/constants.hpp"
#include "kernel/declaration.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "run/prepare.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

using test::declared_dir;
using test::has;
using test::gpuk_cli;

fs::path config(const std::string& name) { return declared_dir() / "configs" / (name + ".yaml"); }

std::shared_ptr<const HostArray> floats(std::initializer_list<float> values) {
  const std::vector<float> v(values);
  return host_array_from(DType::float32, v.data(), v.size() * sizeof(float));
}

}  // namespace

TEST_CASE("constants are written into each module, checked against their symbol, and key the module cache") {
  Device device(0);
  KernelFile file;
  file.path = "kernel/k.cu";
  file.name = "k";
  file.source = "__constant__ float d_filter[4];\n__constant__ int d_unused_here;\n"
                "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = d_filter[threadIdx.x] + d_unused_here; }\n";
  const Jit jit(JitOptions{"sm_90", {}, {}, false}, nullptr);
  const CompiledKernels compiled = jit.compile(file, {"k"});
  const ConstantValues a = {{"d_filter", floats({1, 2, 3, 4})}};
  const ConstantValues same = {{"d_filter", floats({1, 2, 3, 4})}};
  const ConstantValues b = {{"d_filter", floats({5, 6, 7, 8})}};
  const std::size_t before = loaded_module_count();
  const LoadedKernels with_a = load_kernels(compiled, {"k"}, "k a", &a);
  const LoadedKernels with_same = load_kernels(compiled, {"k"}, "k same", &same);
  const LoadedKernels with_b = load_kernels(compiled, {"k"}, "k b", &b);
  const LoadedKernels with_none = load_kernels(compiled, {"k"}, "k none");
  // Equal values share a module; other values (or none) never do.
  CHECK(loaded_module_count() == before + 3);
  CHECK(with_a.modules()[0] == with_same.modules()[0]);
  CHECK(with_a.modules()[0] != with_b.modules()[0]);
  CHECK(with_none.modules()[0] != with_a.modules()[0]);
  // Each module holds its own bytes (the fake driver's globals are host memory).
  const auto [at_a, bytes_a] = with_a.modules()[0]->global("d_filter");
  const auto [at_b, bytes_b] = with_b.modules()[0]->global("d_filter");
  CHECK(bytes_a == 16);
  CHECK(std::memcmp(reinterpret_cast<const void*>(at_a), a.at("d_filter")->data(), 16) == 0);
  CHECK(std::memcmp(reinterpret_cast<const void*>(at_b), b.at("d_filter")->data(), 16) == 0);
  // A size other than the symbol's, and a symbol the module lacks, name what is wrong.
  const ConstantValues short_filter = {{"d_filter", floats({1, 2, 3})}};
  CHECK_THROWS_WITH_AS(load_kernels(compiled, {"k"}, "k short", &short_filter),
                       doctest::Contains("k short: constant d_filter is 16 bytes in the kernel, but its declared data is 12 bytes"),
                       ConfigError);
  const ConstantValues missing = {{"d_filtre", floats({1})}};
  CHECK_THROWS_WITH_AS(load_kernels(compiled, {"k"}, "k missing", &missing),
                       doctest::Contains("k missing: the module has no global 'd_filtre'"), ConfigError);
}

TEST_CASE("outputs a sweep found on the GPU to hold the verified answer are neither downloaded nor compared") {
  // Workload::known_good through the plugin edge: axpy_ref's in-out y, the fake driver's device
  // memory being host memory, written behind the workload's back.
  Device device(0);
  const PluginRegistry plugins({test::plugin_dir()});
  const KernelLibrary kernels({declared_dir() / "kernels"});
  const RunSpec spec =
      parse_run_spec("family: kernel\nkernel: axpy_ref\nsizes: {n: 5}\n", declared_dir() / "c.yaml", plugins, kernels);
  InputView input(std::make_shared<HostArray>(DType::float32, 0), 1);
  input.arrays["y"] = floats({1, 2, 3, 4, 5});
  input.arrays["x"] = floats({0, 0, 0, 0, 0});
  input.expected["y"] = floats({1, 2, 3, 4, 5});
  const auto workload = plugins.get("kernel").make_workload(problem_of(spec), input);
  const Stream stream;
  workload->upload(stream);
  workload->download(stream);
  CHECK(workload->verify().passed);
  float* y = reinterpret_cast<float*>(workload->device_arrays().at(0));
  y[3] = 99;  // what a variant's run left
  workload->download(stream);
  CHECK(!workload->verify().passed);
  workload->known_good({true, false});
  workload->download(stream);
  const Verification known = workload->verify();
  CHECK(known.passed);
  CHECK(known.detail == "y: the bytes of the verified answer (compared on the GPU)");
  workload->known_good({});  // every output again
  workload->download(stream);
  CHECK(!workload->verify().passed);
}

TEST_CASE("a declared kernel's outputs with their expected values and rules, for a sweep's comparison on the GPU") {
  Device device(0);
  const PluginRegistry plugins({test::plugin_dir()});
  const KernelLibrary kernels({declared_dir() / "kernels"});
  const auto outputs = [&](const std::string& compare, bool with_expected) {
    const RunSpec spec = parse_run_spec("family: kernel\nkernel: axpy_ref\nsizes: {n: 5}\n" + compare,
                                        declared_dir() / "c.yaml", plugins, kernels);
    InputView input(std::make_shared<HostArray>(DType::float32, 0), 1);
    input.arrays["y"] = floats({1, 2, 3, 4, 5});
    input.arrays["x"] = floats({0, 0, 0, 0, 0});
    if (with_expected) input.expected["y"] = floats({1, 2, 3, 4, 5});
    const auto workload = plugins.get("kernel").make_workload(problem_of(spec), input);
    auto out = workload->expected_outputs();
    // The expected values live as long as the workload's input: read them here.
    std::vector<float> first;
    if (out && !out->empty() && out->front().expected)
      first.assign(static_cast<const float*>(out->front().expected),
                   static_cast<const float*>(out->front().expected) + out->front().length);
    return std::make_pair(std::move(out), first);
  };
  const auto [plain, plain_values] = outputs("", true);
  REQUIRE(plain.has_value());
  REQUIRE(plain->size() == 1);
  const ExpectedOutput& y = plain->front();
  CHECK(y.name == "y");
  CHECK(y.array == 0);
  CHECK(y.dtype == DType::float32);
  CHECK(y.length == 5);
  CHECK(plain_values == std::vector<float>{1, 2, 3, 4, 5});
  CHECK_FALSE(y.rule.atol.has_value());
  CHECK(outputs("compare: {y: {ulps: 4}}\n", true).first->front().rule.ulps == 4);
  // Totals and outputs without an expected value are the host's to judge; a skipped output is
  // not compared anywhere.
  CHECK_FALSE(outputs("compare: {y: {sum: true}}\n", true).first.has_value());
  CHECK_FALSE(outputs("", false).first.has_value());
  const auto skipped = outputs("compare: {y: {skip: true}}\n", true).first;
  REQUIRE(skipped.has_value());
  CHECK(skipped->empty());
}

TEST_CASE("gpuk run of kernels reading __constant__ arrays: a float filter and float2 vertices") {
  for (const char* name : {"conv_cmem", "pnpoly_cmem"}) {
    CAPTURE(name);
    const auto r = gpuk_cli("run " + config(name).string());
    CAPTURE(r.output);
    CHECK(r.status == 0);
    CHECK(has(r.output, "verify      PASS"));
  }
  const auto conv = gpuk_cli("run " + config("conv_cmem").string());
  CHECK(has(conv.output, "launch   convolution_kernel -Dblock_size_x=32 -Dblock_size_y=4  grid 32x128  block 32x4"));
  // A declared length other than the symbol's: the run stops before any launch, naming both.
  const fs::path wrong = test::declared_scratch().dir / "conv_wrong.yaml";
  std::ofstream(wrong) << "family: kernel\nkernel: conv_cmem\nsizes: {w: 64, h: 32}\n"
                          "declare:\n  constants:\n    - {name: d_filter, array: float32, length: 24, data: {seed: 11}}\n";
  const auto w = gpuk_cli("run " + wrong.string());
  CAPTURE(w.output);
  CHECK(w.status != 0);
  CHECK(has(w.output, "constant d_filter is 100 bytes in the kernel, but its declared data is 96 bytes"));
}

TEST_CASE("a declared kernel's memory need is its arrays, not the product of its sizes") {
  // 4096 x 4096 x 8192 = 1.4e11 elements (550 GB as float32, more than the fake's 80 GiB); the
  // arrays take 115 KB.
  const fs::path spmv = test::declared_scratch().dir / "spmv.yaml";
  std::ofstream(spmv) << "family: kernel\nkernel: spmv_csr\nsizes: {nrows: 4096, ncols: 4096, nnz: 8192}\n"
                         "data:\n  row_ptr: {generator: sorted, range: [0, 8192]}\n  col: {range: [0, 4095]}\n"
                         "reference: {kernel: spmv_csr_naive}\nwarmup: 1\nrepeats: 2\n";
  const auto r = gpuk_cli("run " + spmv.string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(!has(r.output, "bytes of device memory"));
  CHECK(has(r.output, "verify      PASS"));
}

TEST_CASE("a pipeline whose second launch has its own num_blocks, tuned as one and ranked by a metric") {
  const auto t = gpuk_cli("tune " + config("tune_reduce_kt").string());
  CAPTURE(t.output);
  CHECK(t.status == 0);
  CHECK(has(t.output, "9 variants measured"));
  // Each variant's two launches are two sets of -D definitions: two programs.
  CHECK(has(t.output, "compile  9 variants in 18 NVRTC programs"));
  CHECK(has(t.output, "ranked by GB/s (higher is better)"));
  CHECK(!has(t.output, "saved    the best to"));
  const auto p = gpuk_cli("run " + config("reduce_partial").string());
  CAPTURE(p.output);
  CHECK(p.status == 0);
  CHECK(has(p.output, "verify      PASS  partial: the total of 1024 elements"));
}
