// The library API's host overhead per call on a GPU (issue 15's target: within 1 us of a bare
// launch; issue 28's: a prepared handle's call within 0.5 us). For argmax of n float32 (default:
// 250,000, then 4,096, where the GPU's kernel is short enough never to hold the host back), on the
// variant the lookup picks for n (what gpuk::reduce::prepare_argmax gets), the host time one call
// takes to enqueue:
//   - a bare cuLaunchKernel of that variant's function with the same arguments (the floor),
//   - Operation::launch of that variant,
//   - PreparedSizes::launch (every prepared handle's road: its bucket, then Operation::launch),
//   - gpuk::reduce::prepare_argmax's handle (the typed call on PreparedSizes),
//   - the typed call gpuk::reduce::argmax (Engine::launch: one cached Operation per stream),
//   - the handle with n - 1 and n - 2 in turn (each size's plan kept and swapped back in), and
//     with a new n on every call (1,000 sizes in turn, one size bucket: its launches planned again),
//   - cub::DeviceReduce::ArgMax with its temporary storage allocated once.
// Each is timed over batches of launches enqueued without waiting (the median batch, divided by
// its size), then the stream is drained; the batch stays below the driver's launch queue, so
// the host time is the launch path. gpuk's calls and the bare launch take turns batch by batch,
// so that none is favoured by when it ran, and the whole comparison is repeated (trials) to show
// how far the differences move from trial to trial. gpuk's own share of a call, without the
// driver and the GPU, is what tools/bench_api_host measures (the launch stubbed). Not a test.
//
//   build/bench_api [n] [batch] [batches] [trials]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "api/engine_internals.hpp"
#include "gpuk/gpuk.hpp"
#include "host_us_per_call.hpp"
#include "gpuk/reduce.hpp"
#include "plugin/plugin.hpp"
#include "run/prepare.hpp"

#ifdef GPUK_BENCH_CUB
double cub_argmax_host_us(const float* d_in, long long n, void* stream, int batch, int batches);
#endif

namespace {

using namespace gpuk;

// A variant's label ("onepass BLOCK=256 UNROLL=1") as a named request of exactly it.
VariantRequest named_from_label(const std::string& label) {
  VariantRequest r;
  r.mode = VariantRequest::Mode::named;
  std::size_t at = label.find(' ');
  r.kernel = label.substr(0, at);
  while (at != std::string::npos) {
    const std::size_t next = label.find(' ', at + 1);
    const std::string word = label.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    const std::size_t eq = word.find('=');
    if (eq != std::string::npos) r.params[word.substr(0, eq)] = std::stoll(word.substr(eq + 1));
    at = next;
  }
  return r;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One size: every row on one variant, `trials` times. Returns whether both handle rows met 0.5 us
// (median of the trials).
bool compare_at(const Engine& engine, const DeviceInfo& info, const Stream& stream, std::uint64_t n, int batch,
                int batches, int trials) {
  if (n < 4) throw Error("n must be at least 4 (the rows with other sizes take n - 1 and below)");
  // The new sizes: up to 1,000 below n, all at least (n - 1) / 2.
  const std::uint64_t spread = std::min<std::uint64_t>(1000, (n - 1) / 2);
  std::vector<float> x(n);
  for (std::uint64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 2654435761u) % 1000003) - 500000.0f;
  DeviceBuffer d_in(n * sizeof(float)), d_out(16);
  d_in.upload(x.data(), n * sizeof(float), stream);
  stream.synchronize();
  const auto* px = reinterpret_cast<const float*>(d_in.get());
  auto* pb = reinterpret_cast<reduce::Best<float>*>(d_out.get());

  // The application's handle first: its variant for n is the one every other row runs.
  auto amax = reduce::prepare_argmax<float>(engine, n);
  auto amax_new = reduce::prepare_argmax<float>(engine, n);  // the new-n row's: its plans its own
  const std::string label = amax.sizes().operations().back().variant();
  VariantRequest request = named_from_label(label);
  if (request.kernel != "onepass") {
    std::printf("(the lookup picks %s for n = %llu; the rows below run onepass's defaults instead, the bare "
                "launch knowing only onepass's arguments)\n",
                label.c_str(), static_cast<unsigned long long>(n));
    request.params.clear();
    request.kernel = "onepass";
  }
  OperationSpec spec;
  spec.family = "reduce";
  spec.operation = "argmax";
  spec.dtype = DType::float32;
  spec.n = n;
  spec.kernel = request.kernel;
  spec.params = request.params;
  Operation op = engine.prepare(spec);
  PreparedSizes sizes = engine.prepare_sizes(spec);
  const CUdeviceptr arrays[] = {d_in.get(), d_out.get()};

  // The same variant along core's road, launched bare: its function, its plan, its arguments.
  const FamilyPlugin& plugin = EngineInternals::plugins(engine).get("reduce");
  const Problem problem = make_problem(plugin, "argmax", DType::float32, {}, n);
  const PlannedVariant planned = plan_variant(problem, request, plugin, EngineInternals::kernels(engine), info, {});
  const CompileCache cache(CompileCache::default_dir());
  const ReadyVariant ready = ready_variant(planned, Jit(jit_options(info.arch(), EngineInternals::kernels(engine)), &cache), info);
  if (planned.plan.launches.size() != 1) throw Error("onepass was expected to plan one launch");
  const ResolvedLaunch& l = planned.plan.launches[0];
  DeviceBuffer counter(256), partials(std::max<std::int64_t>(1, planned.plan.scratch_slots) * 16);
  counter.fill_bytes(0, stream);
  stream.synchronize();
  CUdeviceptr in = d_in.get(), out = d_out.get(), p = partials.get(), c = counter.get();
  std::int64_t count = static_cast<std::int64_t>(n);
  void* args[] = {&in, &count, &out, &p, &c};
  const CUfunction function = ready.functions[0];

  const char* names[] = {"bare cuLaunchKernel (same function, args)", "gpuk::Operation::launch",
                         "PreparedSizes::launch (every handle's road)", "prepare_argmax's handle amax(x, b, n, s)",
                         "gpuk::reduce::argmax (Engine::launch)", "handle, n-1 and n-2 in turn (kept plans)",
                         "handle, a new n every call (plans again)"};
  std::vector<std::vector<double>> us(7);  // [row][trial]
  std::uint64_t flip = 0, step = 0;
  for (int t = 0; t < trials; ++t) {
    const std::vector<double> one = host_us_per_call(
        stream, batch, batches,
        {[&] { GPUK_CU(driver().cuLaunchKernel(function, l.grid, 1, 1, l.block, 1, 1, l.shared_bytes, stream.get(),
                                               args, nullptr)); },
         [&] { op.launch(arrays, n, stream.get()); },
         [&] { sizes.launch(arrays, n, stream.get()); },
         [&] { amax(px, pb, n, stream.get()); },
         [&] { reduce::argmax(engine, px, pb, n, stream.get()); },
         [&] { amax(px, pb, n - 1 - (++flip & 1), stream.get()); },
         [&] { amax_new(px, pb, n - 1 - (++step % spread), stream.get()); }});
    for (std::size_t r = 0; r < one.size(); ++r) us[r].push_back(one[r]);
  }
#ifdef GPUK_BENCH_CUB
  const double cub = cub_argmax_host_us(px, static_cast<long long>(n), stream.get(), batch, batches);
#endif

  std::printf("\nargmax of %llu float32 on %s, every gpuk row and the bare launch on variant %s\n"
              "host time per call: median of %d batches of %d, candidates in turn; %d trials (median, then each):\n",
              static_cast<unsigned long long>(n), info.name.c_str(), op.variant().c_str(), batches, batch, trials);
  std::vector<double> over(us.size());
  for (std::size_t r = 0; r < us.size(); ++r) {
    std::vector<double> delta;
    for (int t = 0; t < trials; ++t) delta.push_back(us[r][t] - us[0][t]);
    over[r] = median_of(delta);
    std::string each;
    for (double d : delta) {
      char word[32];
      std::snprintf(word, sizeof word, " %+.3f", d);
      each += word;
    }
    if (r == 0)
      std::printf("  %-44s %8.3f us\n", names[r], median_of(us[r]));
    else
      std::printf("  %-44s %8.3f us  %+.3f us over bare  (trials:%s)\n", names[r], median_of(us[r]), over[r],
                  each.c_str());
  }
#ifdef GPUK_BENCH_CUB
  std::printf("  %-44s %8.3f us  %+.3f us over bare\n", "cub::DeviceReduce::ArgMax", cub, cub - median_of(us[0]));
#else
  std::printf("  %-44s (not built: GPUK_BASELINES=OFF)\n", "cub::DeviceReduce::ArgMax");
#endif
  const bool sizes_met = over[2] <= 0.5, handle_met = over[3] <= 0.5;
  std::printf("target (n = %llu): Operation::launch within 1 us of the bare launch: %s (%+.3f us)\n",
              static_cast<unsigned long long>(n), over[1] <= 1.0 ? "met" : "NOT met", over[1]);
  std::printf("target (n = %llu): a prepared handle's call within 0.5 us of the bare launch: PreparedSizes::launch "
              "%s (%+.3f us), prepare_argmax's handle %s (%+.3f us)\n",
              static_cast<unsigned long long>(n), sizes_met ? "met" : "NOT met", over[2],
              handle_met ? "met" : "NOT met", over[3]);
  return sizes_met && handle_met;
}

}  // namespace

int main(int argc, char** argv) try {
  const int batch = argc > 2 ? std::atoi(argv[2]) : 100;
  const int batches = argc > 3 ? std::atoi(argv[3]) : 200;
  const int trials = argc > 4 ? std::atoi(argv[4]) : 3;
  Engine engine;
  const DeviceInfo& info = EngineInternals::device(engine);
  const Device device(info.ordinal);  // current on this thread
  const Stream stream;
  std::vector<std::uint64_t> sizes;
  if (argc > 1) sizes.push_back(std::strtoull(argv[1], nullptr, 10));
  else sizes = {250000, 4096};
  bool met = true;
  for (const std::uint64_t n : sizes) met = compare_at(engine, info, stream, n, batch, batches, trials) && met;
  std::printf("\nprepared handles within 0.5 us of a bare launch at every n above: %s. gpuk's own host work per call "
              "(the launch stubbed, no driver or GPU in it): build/bench_api_host\n",
              met ? "met" : "NOT met");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_api: %s\n", e.what());
  return 1;
}
