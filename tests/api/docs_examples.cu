// docs/api.md's C++ examples, compiled as an application's .cu file (C++17, nvcc; built with the
// tests as part of gpuk_api_cuda17, never run). Each block of the page is here, line for line and
// in order, inside a function whose parameters are the page's arrays and sizes;
// tests/core/test_api_docs.cpp checks that every line of every block is, so that the page and
// this file cannot drift apart.
#include "gpuk/reduce.hpp"   // and gpuk/search.hpp, gpuk/sort.hpp: each family's typed calls
#include "gpuk/search.hpp"
#include "gpuk/sort.hpp"

#include <cstdio>
#include <vector>

#include "gpuk/gpuk.hpp"

namespace typed_calls {
void example(float* d_x, gpuk::reduce::Best<float>* d_best, std::uint64_t n, cudaStream_t stream, const std::int32_t* d_i,
             std::int64_t* d_sum, const std::uint32_t* d_u, std::int64_t* d_index, std::uint32_t* d_keys,
             std::uint32_t* d_sorted, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
             std::uint32_t* d_values_out, const float* d_f, float* d_f_out, const float* d_hay, const float* d_needles,
             std::int64_t* d_at, std::uint64_t m) {
  gpuk::Engine engine;  // device 0; the CLI's kernel, plugin and cache directories and tuning database

  // Asynchronous, on your stream, answer in device memory (no copy, no synchronisation):
  gpuk::reduce::argmax(engine, d_x, d_best, n, stream);    // d_best: gpuk::reduce::Best<float>*
  gpuk::reduce::sum(engine, d_i, d_sum, n, stream);        // d_sum: int64 for int32 input, double for float
  gpuk::search::find(engine, d_u, d_index, n, 42, stream); // d_index: int64*, -1 when absent; 42 becomes uint32
  gpuk::sort::keys(engine, d_keys, d_sorted, n, stream);   // stable; gpuk::sort::Order::descending too
  gpuk::sort::pairs(engine, d_keys, d_keys_out, d_values, d_values_out, n, stream);
  gpuk::sort::keys(engine, d_keys, d_keys, n, stream);     // in place
  gpuk::sort::keys(engine, d_f, d_f_out, n, stream,        // as cub::DeviceRadixSort::SortKeys(..., 0, 16)
                   {gpuk::sort::Order::ascending, 0, 16, gpuk::sort::FloatOrder::cub});

  // Or waiting for the answer on the host (these synchronise the stream):
  gpuk::reduce::Best<float> best = gpuk::reduce::argmax(engine, d_x, n, stream);  // max, min, argmin, sum too
  gpuk::reduce::MinMax<float> both = gpuk::reduce::argminmax(engine, d_x, n, stream);  // both.min, both.max: one pass
  (void)both;
  std::int64_t where = gpuk::search::find(engine, d_u, n, 42, stream);
  std::int64_t first = gpuk::search::find_if(engine, d_f, n, gpuk::search::Compare::lt, 0.5f, stream);  // x < 0.5

  // Many needles in sorted keys (NaN last, -0.0 before +0.0): an int64 index per needle into d_at.
  gpuk::search::lower_bound(engine, d_hay, n, d_needles, m, d_at, stream);     // upper_bound too
  gpuk::search::upper_bound(engine, d_hay, n, d_needles, m, d_at, stream, gpuk::search::Needles::sorted);
  (void)best;
  (void)where;
  (void)first;
}
}  // namespace typed_calls

namespace top_k {
void example(const gpuk::Engine& engine, const float* d_x, float* d_values, std::int64_t* d_indices, std::uint64_t n,
             std::uint64_t max_n, cudaStream_t stream) {
  // The 32 largest of n floats and their indices, largest first (ties: the lower index first).
  gpuk::sort::topk(engine, d_x, d_values, d_indices, n, 32, stream);
  // The 8 smallest of each of 1024 rows of n / 1024 keys, in input order.
  gpuk::sort::topk(engine, d_x, d_values, d_indices, n, 8, stream,
                   gpuk::sort::TopKOptions{/*largest=*/false, /*sorted=*/false, /*rows=*/1024});
  auto t = gpuk::sort::prepare_topk<float>(engine, max_n, 256);   // k fixed; any n <= max_n
  t(d_x, d_values, d_indices, n, stream);
}
}  // namespace top_k

namespace segments_and_channels {
void example(const gpuk::Engine& engine, const float* d_x, const std::int64_t* d_off, gpuk::reduce::Best<float>* d_best,
             std::uint64_t n, std::uint64_t segments, cudaStream_t stream, const std::int64_t* d_begin,
             const std::int64_t* d_end, double* d_sums, const float* d_image) {
  // Segment s is d_x[d_off[s], d_off[s + 1]) (int64 offsets; or d_begin, d_end as CUB): one answer each.
  gpuk::reduce::segmented_argmax(engine, d_x, d_off, d_best, n, segments, stream);  // _argmin, _max, _min, _sum
  gpuk::reduce::segmented_sum(engine, d_x, d_begin, d_end, d_sums, n, segments, stream);
  // Channel c of interleaved (HWC) data: one launch, no transpose; the index is the pixel.
  gpuk::reduce::per_channel_argmax(engine, d_image, d_best, 480 * 640, 17, stream);
  // Or one answer per channel on the host (waits; per_channel_argmin, _max, _min, _sum too):
  std::vector<gpuk::reduce::Best<float>> top = gpuk::reduce::per_channel_argmax(engine, d_image, 480 * 640, 17, stream);
  (void)top;
}
}  // namespace segments_and_channels

namespace segmented_sort {
void example(const gpuk::Engine& engine, std::uint64_t n, std::uint64_t segments, std::uint64_t max_n,
             const float* d_keys_in, float* d_keys_out, const std::uint32_t* d_values_in, std::uint32_t* d_values_out,
             const std::int64_t* d_begin, const std::int64_t* d_end, const std::int64_t* d_off, cudaStream_t stream) {
  // Segment s is [d_begin[s], d_end[s]) (int64), each sorted on its own, stably; as
  // cub::DeviceSegmentedSort::SortKeys(temp, bytes, d_keys_in, d_keys_out, n, segments, d_begin, d_end, stream).
  gpuk::sort::segmented_keys(engine, d_keys_in, d_keys_out, n, segments, d_begin, d_end, stream);
  gpuk::sort::segmented_pairs(engine, d_keys_in, d_keys_out, d_values_in, d_values_out, n, segments, d_off, d_off + 1,
                              stream, gpuk::sort::Order::descending);  // n + 1 offsets d_off serve as both
  // Prepared: up to max_n keys in up to 1000 segments; every call gives its own count.
  auto s = gpuk::sort::prepare_segmented_pairs<float, std::uint32_t>(engine, max_n, 1000);
  s(d_keys_in, d_keys_out, d_values_in, d_values_out, n, segments, d_begin, d_end, stream);
}
}  // namespace segmented_sort

namespace prepared_handles {
void example(const gpuk::Engine& engine, std::uint64_t max_n, const float* d_k, float* d_ko, const std::uint32_t* d_v,
             std::uint32_t* d_vo, std::uint64_t n, cudaStream_t stream, const float* d_x,
             gpuk::reduce::Best<float>* d_best, const std::int32_t* d_i, std::int64_t* d_index, const float* d_f,
             float* d_f_sorted, std::uint32_t* d_indices, const std::int64_t* d_offsets, std::uint64_t segments,
             const float* d_image, std::uint64_t pixels, const float* d_hay, const float* d_needles, std::int64_t* d_at,
             std::uint64_t m, std::uint64_t max_needles) {
  auto sorter = gpuk::sort::prepare_pairs<float, std::uint32_t>(engine, max_n);  // compiles, allocates
  std::printf("holds %llu bytes\n", (unsigned long long)sorter.scratch_bytes());
  sorter(d_k, d_ko, d_v, d_vo, n, stream);    // any n <= max_n, on any stream; n = 0: nothing

  auto amax = gpuk::reduce::prepare_argmax<float>(engine, max_n);   // prepare_max, _min, _argmin, _argminmax, _sum
  amax(d_x, d_best, n, stream);
  gpuk::reduce::Best<float> b = amax(d_x, n, stream);               // waits

  auto find = gpuk::search::prepare_find<std::int32_t>(engine, max_n);  // prepare_any, prepare_count
  find(d_i, d_index, n, 42, stream);
  auto above = gpuk::search::prepare_find_if<float>(engine, gpuk::search::Compare::ge, max_n);
  std::int64_t i = above(d_f, n, 0.5f, stream);                     // the first x >= 0.5, or -1; waits
  auto lb = gpuk::search::prepare_lower_bound<float>(engine, max_n, max_needles);  // Needles::sorted as 4th
  lb(d_hay, n, d_needles, m, d_at, stream);                      // any m up to max_needles; 0 launches nothing
  (void)i;

  auto keys = gpuk::sort::prepare_keys<std::uint32_t>(engine, max_n, {gpuk::sort::Order::ascending, 0, 12});
  auto arg = gpuk::sort::prepare_argsort<float>(engine, max_n);     // uint32 indices
  arg(d_f, d_f_sorted, d_indices, n, stream);

  // Segments: up to max_n elements in up to max_segments segments; each call gives its count.
  auto seg = gpuk::reduce::prepare_segmented_argmax<float>(engine, max_n, 1000);  // _argmin, _max, _min, _sum
  seg(d_x, d_offsets, d_best, n, segments, stream);                // or d_begin, d_end; segments <= 1000
  // A segmented sort: up to max_n keys in up to max_segments segments; CUB's begin and end arrays.
  auto segsort = gpuk::sort::prepare_segmented_keys<float>(engine, max_n, 1000, gpuk::sort::Order::descending);
  segsort(d_f, d_f_sorted, n, segments, d_offsets, d_offsets + 1, stream);  // segments <= 1000
  // Channels: a fixed channel count, up to max_pixels pixels.
  auto per_channel = gpuk::reduce::prepare_per_channel_argmax<float>(engine, 480 * 640, 17);
  per_channel(d_image, d_best, pixels, stream);                     // pixels <= 480 * 640
  std::vector<gpuk::reduce::Best<float>> maxima = per_channel(d_image, pixels, stream);  // waits
  (void)maxima;
  (void)b;
  (void)keys;
}
}  // namespace prepared_handles

namespace caller_owned_scratch {
struct Pool {  // an application's memory pool
  void* allocate(std::uint64_t bytes);
};
void example(const gpuk::Engine& engine, std::uint64_t max_n, Pool& my_pool, const float* d_k, float* d_ko,
             const std::uint32_t* d_v, std::uint32_t* d_vo, std::uint64_t n, cudaStream_t stream) {
  auto s = gpuk::sort::prepare_pairs<float, std::uint32_t>(engine, max_n, {}, gpuk::Scratch::caller);
  void* pool_block = my_pool.allocate(s.scratch_bytes());        // 256-byte aligned, as cudaMalloc's
  s.use_scratch(pool_block, s.scratch_bytes(), stream);          // initialised on `stream`
  s(d_k, d_ko, d_v, d_vo, n, stream);                            // s.held_bytes() == 0
}
}  // namespace caller_owned_scratch

namespace operations {
void example(const gpuk::Engine& engine, const float* d_x, gpuk::reduce::Best<float>* d_best, std::uint64_t n,
             cudaStream_t stream) {
  gpuk::OperationSpec spec;
  spec.family = "reduce";
  spec.operation = "argmax";
  spec.dtype = gpuk::DType::float32;
  spec.options = {{"abs", "true"}};  // the family's options, as in a config
  spec.n = 1 << 20;
  // spec.kernel = "onepass"; spec.params = {{"BLOCK", 512}};   // exactly this variant, if you must

  gpuk::Operation argmax = engine.prepare(spec);  // choose, compile, load, check, scratch
  argmax.launch({d_x, d_best}, n, stream);        // typed pointers; any n in [min_n(), max_n()]
  std::printf("%s: %s\n", argmax.variant().c_str(), argmax.chosen().c_str());
}
}  // namespace operations

namespace memory {
struct Pool {  // an application's stream-ordered pool
  CUdeviceptr allocate(std::uint64_t bytes, CUstream stream);
  void free(CUdeviceptr pointer, std::uint64_t bytes);
};
void example(Pool& my_pool) {
  gpuk::EngineOptions options;
  options.scratch_allocator = gpuk::ScratchAllocator{
      [&](std::uint64_t bytes, CUstream s) { return my_pool.allocate(bytes, s); },
      [&](CUdeviceptr p, std::uint64_t bytes) { my_pool.free(p, bytes); }};
  gpuk::Engine pooled(options);
}
}  // namespace memory

namespace graph_capture {
void example(const gpuk::Engine& engine, const float* d_x, gpuk::reduce::Best<float>* d_best, std::uint64_t n,
             cudaStream_t stream) {
  auto amax = gpuk::reduce::prepare_argmax<float>(engine, n);
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  amax(d_x, d_best, n, stream);
  cudaGraph_t graph;
  cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec;
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphLaunch(exec, stream);   // again and again, on whatever d_x holds then
}
}  // namespace graph_capture

namespace the_device {
void example(const gpuk::Engine& engine) {
  const gpuk::DeviceDescription gpu = engine.device();
  std::printf("%s (%s, %d SMs, %.0f GiB)\n", gpu.name.c_str(), gpu.arch.c_str(), gpu.sm_count,
              gpu.total_memory / 1073741824.0);
  const std::uint64_t n = gpu.total_memory / 4 / sizeof(float);  // a quarter of the memory
  (void)n;
}
}  // namespace the_device

namespace several_gpus {
void example(int gpus, std::vector<gpuk::Engine>& engines, const float* d_x1, gpuk::reduce::Best<float>* d_best1,
             std::uint64_t n, cudaStream_t stream1) {
  for (int d = 0; d < gpus; ++d) {
    gpuk::EngineOptions options;
    options.device = d;
    engines.emplace_back(options);            // std::vector<gpuk::Engine>: an Engine moves
  }
  cudaSetDevice(1);                           // your arrays on device 1 ...
  gpuk::reduce::argmax(engines[1], d_x1, d_best1, n, stream1);   // ... and device 1's Engine
}
}  // namespace several_gpus

#include "gpuk/tuning.hpp"

namespace tuning_from_cpp {
void example(const gpuk::Engine& engine, const std::vector<float>& in, const std::vector<float>& expected) {
  gpuk::TuneRequest request;
  request.config = "family: kernel\nkernels: [scale2d]\nsizes: {nx: 1000, ny: 300}\n"
                   "params: {block_size_x: [16, 32, 64], block_size_y: [1, 2, 4, 8]}\n";
  request.inputs["in"] = gpuk::HostView::of(in.data(), in.size());        // over the config's data:
  request.answers["out"] = gpuk::HostView::of(expected.data(), expected.size());  // nullopt: not compared
  gpuk::TuneResults r = gpuk::tune_kernel(engine, request);
  for (const gpuk::TunedVariant& v : r.results)             // params, time_ms, times_ms, metrics, ...
    std::printf("%s %s %s\n", v.kernel.c_str(), gpuk::variant_status_name(v.status), v.reason.c_str());
  if (r.best) std::printf("best: %.4f ms\n", r.results[*r.best].time_ms);
}
}  // namespace tuning_from_cpp

namespace pinning_the_variant {
void example() {
  gpuk::EngineOptions options;
  options.tuning = gpuk::TuningPolicy::shipped_only();
  gpuk::Engine engine(options);
  (void)engine;
}
}  // namespace pinning_the_variant
