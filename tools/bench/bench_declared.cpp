// bench_declared [KERNEL_DIR]: a declared kernel (tests/declared/kernels' scale2d, a 2-D kernel
// with -D parameters) prepared through the library API (Engine::prepare with named sizes) and
// launched on the caller's pointers and stream, against a bare cuLaunchKernel of the same function
// with the same arguments: host time per call (the median of batches, the candidates in turn),
// and the Operation's answer checked against the host's. Not a test; run it on a GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "api/engine_internals.hpp"
#include "declared/scale2d_call.hpp"
#include "gpuk/gpuk.hpp"
#include "host_us_per_call.hpp"
#include "plugin/plugin.hpp"
#include "run/prepare.hpp"

using namespace gpuk;

int main(int argc, char** argv) try {
  const std::filesystem::path dir = argc > 1 ? argv[1] : "tests/declared/kernels";
  EngineOptions options;
  options.kernel_dirs = {dir};
  Engine engine(options);
  const std::int64_t nx = 1000, ny = 300;
  const std::map<std::string, std::int64_t> params = {{"block_size_x", 64}, {"block_size_y", 2}};
  (void)engine.device();  // opens the device: its context is current for the Stream made next
  const Stream stream;
  test::Scale2dCall call(engine, nx, ny, params, stream);  // prepared, launched once, its answer checked
  Operation& op = call.op;
  const OperationSpec spec = test::Scale2dCall::spec(nx, ny, params);
  const std::size_t n = call.n, wrong = call.wrong;

  // The same variant along core's road, launched bare: its function, its plan, its arguments.
  const FamilyPlugin& plugin = EngineInternals::plugins(engine).get("kernel");
  const Problem problem = make_declared_problem(plugin, EngineInternals::kernels(engine).find("kernel", "scale2d"), spec.sizes);
  VariantRequest request;
  request.mode = VariantRequest::Mode::named;
  request.kernel = "scale2d";
  request.params = spec.params;
  const DeviceInfo& info = EngineInternals::device(engine);
  const PlannedVariant planned = plan_variant(problem, request, plugin, EngineInternals::kernels(engine), info, {});
  const CompileCache cache(CompileCache::default_dir());
  const ReadyVariant ready = ready_variant(planned, Jit(jit_options(info.arch(), EngineInternals::kernels(engine)), &cache), info);
  const ResolvedLaunch& l = planned.plan.launches[0];
  CUdeviceptr po = call.out.get(), pi = call.in.get();
  int ix = static_cast<int>(nx), iy = static_cast<int>(ny);
  float alpha = 0.5f;
  void* args[] = {&po, &pi, &ix, &iy, &alpha};
  const CUfunction function = ready.functions[0];

  const int batch = 1000, batches = 30, trials = 5;
  std::vector<double> bare, prepared;
  for (int t = 0; t < trials; ++t) {
    const auto one = host_us_per_call(
        stream, batch, batches,
        {[&] {
           GPUK_CU(driver().cuLaunchKernel(function, l.grid, l.grid_y, l.grid_z, l.block, l.block_y, l.block_z,
                                           l.shared_bytes, stream.get(), args, nullptr));
         },
         [&] { op.launch(call.arrays, op.max_n(), stream.get()); }});
    bare.push_back(one[0]);
    prepared.push_back(one[1]);
  }
  std::sort(bare.begin(), bare.end());
  std::sort(prepared.begin(), prepared.end());
  std::printf("declared kernel %s (%s), nx %lld ny %lld, on %s: answer %s (%zu of %zu elements wrong)\n"
              "host time per call, median of %d trials of %d batches of %d:\n"
              "  bare cuLaunchKernel (same function, args)  %.3f us\n"
              "  gpuk::Operation::launch (declared)         %.3f us  (%+.3f us)\n",
              op.variant().c_str(), l.name_expression.c_str(), static_cast<long long>(nx), static_cast<long long>(ny),
              info.name.c_str(), wrong == 0 ? "verified" : "WRONG", wrong, n, trials, batches, batch,
              bare[trials / 2], prepared[trials / 2], prepared[trials / 2] - bare[trials / 2]);
  return wrong == 0 ? 0 : 3;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_declared: %s\n", e.what());
  return 1;
}
