// The library API's host overhead per call (issue 15's target: within 1 us of a bare launch;
// issue 28's: a prepared handle's call within 0.5 us). Prints, for argmax of n float32 (default
// 250,000), the host time one call takes to enqueue:
//   - Operation::launch of a prepared argmax (the onepass kernel, metadata defaults),
//   - a prepared handle of the same variant (PreparedSizes::launch, what every prepare_* is),
//     and gpuk::reduce::prepare_argmax's handle (its variant chosen by the lookup),
//   - the typed call gpuk::reduce::argmax (Engine::launch: one cached Operation per stream),
//   - a bare cuLaunchKernel of the same variant's function with the same arguments,
//   - cub::DeviceReduce::ArgMax with its temporary storage allocated once.
// Each is timed over batches of launches enqueued without waiting (the median batch, divided by
// its size), then the stream is drained; the batch stays below the driver's launch queue, so
// the host time is the launch path, not the GPU. gpuk's calls and the bare launch take turns
// batch by batch, so that none is favoured by when it ran. Not a test: run it on a GPU, by hand.
//
//   build/bench_api [n] [batch] [batches]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "plugin/plugin.hpp"
#include "run/prepare.hpp"

double cub_argmax_host_us(const float* d_in, long long n, void* stream, int batch, int batches);

namespace {

using namespace gpuk;

// Host microseconds per call of each candidate: batches of `batch` calls enqueued without waiting,
// the stream drained after each batch; the candidates take turns batch by batch (round robin), so
// that drift of the clock, the queue or the caches over the run falls on all of them alike. The
// median batch of each, divided by its size; the first round warms up.
std::vector<double> host_us_per_call(const Stream& stream, int batch, int batches,
                                     const std::vector<std::function<void()>>& calls) {
  std::vector<std::vector<double>> per_call(calls.size());
  for (int b = 0; b < batches + 1; ++b)
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i) calls[c]();
      const auto stop = std::chrono::steady_clock::now();
      stream.synchronize();
      if (b > 0) per_call[c].push_back(std::chrono::duration<double, std::micro>(stop - start).count() / batch);
    }
  std::vector<double> medians;
  for (auto& v : per_call) {
    std::sort(v.begin(), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 250000;
  const int batch = argc > 2 ? std::atoi(argv[2]) : 100;
  const int batches = argc > 3 ? std::atoi(argv[3]) : 200;
  Engine engine;
  const DeviceInfo& info = engine.device();
  const Device device(info.ordinal);  // current on this thread
  const Stream stream;

  std::vector<float> x(n);
  for (std::uint64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 2654435761u) % 1000003) - 500000.0f;
  DeviceBuffer d_in(n * sizeof(float)), d_out(16);
  d_in.upload(x.data(), n * sizeof(float), stream);
  stream.synchronize();

  OperationSpec spec;
  spec.family = "reduce";
  spec.operation = "argmax";
  spec.dtype = DType::float32;
  spec.n = n;
  spec.kernel = "onepass";
  Operation op = engine.prepare(spec);
  const CUdeviceptr arrays[] = {d_in.get(), d_out.get()};

  // The same variant along core's road, launched bare: its function, its plan, its arguments.
  const FamilyPlugin& plugin = engine.plugins().get("reduce");
  const Problem problem = make_problem(plugin, "argmax", DType::float32, {}, n);
  VariantRequest named;
  named.mode = VariantRequest::Mode::named;
  named.kernel = "onepass";
  const PlannedVariant planned = plan_variant(problem, named, plugin, engine.kernels(), info, {});
  const CompileCache cache(CompileCache::default_dir());
  const ReadyVariant ready =
      ready_variant(planned, Jit(jit_options(info.arch(), engine.kernels()), &cache), info);
  if (planned.plan.launches.size() != 1) throw Error("onepass was expected to plan one launch");
  const ResolvedLaunch& l = planned.plan.launches[0];
  DeviceBuffer counter(256), partials(std::max<std::int64_t>(1, planned.plan.scratch_slots) * 16);
  counter.fill_bytes(0, stream);
  stream.synchronize();
  CUdeviceptr in = d_in.get(), out = d_out.get(), p = partials.get(), c = counter.get();
  std::int64_t count = static_cast<std::int64_t>(n);
  void* args[] = {&in, &count, &out, &p, &c};
  const CUfunction function = ready.functions[0];

  PreparedSizes sizes = engine.prepare_sizes(spec);  // onepass in every bucket up to n
  auto amax = reduce::prepare_argmax<float>(engine, n);
  const auto* px = reinterpret_cast<const float*>(d_in.get());
  auto* pb = reinterpret_cast<reduce::Best<float>*>(d_out.get());
  const std::vector<double> us = host_us_per_call(
      stream, batch, batches,
      {[&] { GPUK_CU(driver().cuLaunchKernel(function, l.grid, 1, 1, l.block, 1, 1, l.shared_bytes, stream.get(), args,
                                             nullptr)); },
       [&] { op.launch(arrays, n, stream.get()); },
       [&] { sizes.launch(arrays, n, stream.get()); },
       [&] { amax(px, pb, n, stream.get()); },
       [&] { reduce::argmax(engine, px, n, pb, stream.get()); }});
  const double bare = us[0], api = us[1], handle = us[2], typed_handle = us[3], typed = us[4];
  const double cub = cub_argmax_host_us(reinterpret_cast<const float*>(d_in.get()), static_cast<long long>(n),
                                        stream.get(), batch, batches);

  std::printf("argmax of %llu float32 on %s, variant %s; host time per call (median of %d batches of %d):\n",
              static_cast<unsigned long long>(n), info.name.c_str(), op.variant().c_str(), batches, batch);
  std::printf("  %-44s %8.3f us\n", "bare cuLaunchKernel (same function, args)", bare);
  std::printf("  %-44s %8.3f us  (%+.3f us over bare)\n", "gpuk::Operation::launch", api, api - bare);
  std::printf("  %-44s %8.3f us  (%+.3f us over bare)\n", "prepared handle (PreparedSizes::launch)", handle,
              handle - bare);
  std::printf("  %-44s %8.3f us  (%+.3f us over bare; variant %s)\n", "gpuk::reduce::prepare_argmax's handle",
              typed_handle, typed_handle - bare, amax.sizes().operations().back().variant().c_str());
  std::printf("  %-44s %8.3f us  (%+.3f us over bare)\n", "gpuk::reduce::argmax (Engine::launch)", typed, typed - bare);
  std::printf("  %-44s %8.3f us  (%+.3f us over bare)\n", "cub::DeviceReduce::ArgMax", cub, cub - bare);
  std::printf("target: Operation::launch within 1 us of the bare launch: %s\n", api - bare <= 1.0 ? "met" : "NOT met");
  std::printf("target: a prepared handle's call (same variant) within 0.5 us of the bare launch: %s\n",
              handle - bare <= 0.5 ? "met" : "NOT met");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_api: %s\n", e.what());
  return 1;
}
