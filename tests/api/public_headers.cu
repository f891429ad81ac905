// An application's .cu file, compiled by nvcc as C++17 (gpuk_api_cuda17, built with the tests):
// every public header together, and the typed calls and prepared handles instantiated as an
// application would write them (typed pointers, a search value of another type, n = 0, the sort
// options, caller-owned scratch, segmented and per-channel reductions, segmented sorts, a tuning
// policy).
#include "gpuk/dtype.hpp"
#include "gpuk/error.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/op_table.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/reduce_ops.hpp"
#include "gpuk/search.hpp"
#include "gpuk/search_ops.hpp"
#include "gpuk/sort.hpp"
#include "gpuk/sort_ops.hpp"
#include "gpuk/tuning.hpp"

static_assert(__cplusplus == 201703L, "this file checks the public headers as C++17");

__global__ void scale(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

void application(const gpuk::Engine& engine, float* d_x, float* d_y, std::uint32_t* d_u, std::uint32_t* d_v,
                 std::int64_t* d_index,
                 gpuk::reduce::Best<float>* d_best, double* d_sum, int* d_values, int* d_values_out, std::uint64_t n,
                 cudaStream_t stream) {
  scale<<<1, 32, 0, stream>>>(d_x, static_cast<int>(n));
  gpuk::TuneRequest tune;  // a tuning call as an application writes one (gpuk/tuning.hpp)
  const float host[4] = {1, 2, 3, 4};
  tune.inputs["in"] = gpuk::HostView::of(host, 4);
  tune.answers["out"] = std::nullopt;
  (void)gpuk::variant_status_name(gpuk::VariantStatus::does_not_fit);
  gpuk::reduce::argmax(engine, d_x, d_best, n, stream);
  gpuk::reduce::sum(engine, d_x, d_sum, n, stream);
  const gpuk::reduce::Best<float> top = gpuk::reduce::max(engine, d_x, n, stream);
  (void)top;
  gpuk::search::find(engine, d_u, d_index, n, 42, stream);  // 42: an int, searched for as uint32
  const std::int64_t count = gpuk::search::count(engine, d_u, n, 7u, stream);
  (void)count;
  gpuk::sort::keys(engine, d_u, d_v, n, stream);  // out of place: outputs never alias inputs
  gpuk::sort::pairs(engine, d_x, d_y, d_values, d_values_out, n, stream, gpuk::sort::Order::descending);

  auto sorter = gpuk::sort::prepare_pairs<float, int>(engine, n);
  sorter(d_x, d_y, d_values, d_values_out, n, stream);
  auto amax = gpuk::reduce::prepare_argmax<float>(engine, n);
  amax(d_x, d_best, n, stream);
  // argminmax: both answers from one pass, into device memory or to the host; its handle.
  auto* d_pair = reinterpret_cast<gpuk::reduce::MinMax<float>*>(d_best);
  gpuk::reduce::argminmax(engine, d_x, d_pair, n, stream);
  const gpuk::reduce::MinMax<float> both = gpuk::reduce::argminmax(engine, d_x, n, stream);
  (void)both;
  auto pair = gpuk::reduce::prepare_argminmax<float>(engine, n);
  pair(d_x, d_pair, n, stream);
  const gpuk::reduce::MinMax<float> again = pair(d_x, n, stream);
  (void)again;
  auto finder = gpuk::search::prepare_find<std::uint32_t>(engine, n);
  (void)finder(d_u, n, 42, stream);

  // CUB's sort options (a bit window, CUB's float order), an in-place sort, argsort's handle.
  const gpuk::sort::Options cub_like(gpuk::sort::Order::ascending, 4, 20, gpuk::sort::FloatOrder::cub);
  gpuk::sort::keys(engine, d_x, d_x, n, stream, cub_like);
  auto argsorter = gpuk::sort::prepare_argsort<float>(engine, n, gpuk::sort::Order::descending);
  argsorter(d_x, d_y, d_u, n, stream);
  // Caller-owned scratch: the handle allocates nothing; the application's memory goes in.
  auto pooled = gpuk::sort::prepare_keys<std::uint32_t>(engine, n, {}, gpuk::Scratch::caller);
  pooled.use_scratch(d_v, pooled.scratch_bytes(), stream);
  pooled(d_u, d_v, n, stream);
  // Segmented and per-channel reductions: offsets (segments + 1 of them) or begin/end arrays.
  gpuk::reduce::segmented_argmax(engine, d_x, d_index, d_best, n, 4, stream);
  gpuk::reduce::segmented_sum(engine, d_x, d_index, d_index + 1, d_sum, n, 4, stream);
  gpuk::reduce::per_channel_argmax(engine, d_x, d_best, n / 17, 17, stream);
  // Their prepared handles: a max of elements and segments (channels), every call's count.
  auto seg = gpuk::reduce::prepare_segmented_argmax<float>(engine, n, 1000);
  seg(d_x, d_index, d_best, n, 4, stream);
  auto seg_sum = gpuk::reduce::prepare_segmented_sum<float>(engine, n, 1000, gpuk::Scratch::caller);
  seg_sum.use_scratch(d_v, seg_sum.scratch_bytes(), stream);
  seg_sum(d_x, d_index, d_index + 1, d_sum, n, 4, stream);
  auto per_channel = gpuk::reduce::prepare_per_channel_argmax<float>(engine, 480 * 640, 17);
  per_channel(d_x, d_best, 480 * 640, stream);
  (void)per_channel.max_pixels();
  // Segmented sorts in CUB's order (n, segments, begin, end): int64 or long long offsets.
  const long long* d_ll = reinterpret_cast<const long long*>(d_index);
  gpuk::sort::segmented_keys(engine, d_x, d_y, n, 4, d_index, d_index + 1, stream);
  gpuk::sort::segmented_pairs(engine, d_u, d_v, d_values, d_values_out, n, 4, d_ll, d_ll + 1, stream,
                              gpuk::sort::Order::descending);
  auto seg_keys = gpuk::sort::prepare_segmented_keys<float>(engine, n, 1000);
  seg_keys(d_x, d_y, n, 4, d_index, d_index + 1, stream);
  auto seg_pairs = gpuk::sort::prepare_segmented_pairs<std::uint32_t, int>(engine, n, 1000, {}, gpuk::Scratch::caller);
  seg_pairs.use_scratch(d_v, seg_pairs.scratch_bytes(), stream);
  seg_pairs(d_u, d_v, d_values, d_values_out, n, 4, d_ll, d_ll + 1, stream);
  (void)seg_pairs.max_segments();
  // Captured into a CUDA graph after it is prepared (docs/api.md, "Graph capture").
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  amax(d_x, d_best, n, stream);
  cudaGraph_t graph;
  cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec;
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphLaunch(exec, stream);
  // An Engine that takes only the shipped tuning file.
  gpuk::EngineOptions pinned;
  pinned.tuning = gpuk::TuningPolicy::shipped_only();
  (void)pinned;

  gpuk::OperationSpec spec;
  spec.family = "reduce";
  spec.operation = "argmax";
  spec.n = n;
  gpuk::Operation op = engine.prepare(spec);
  op.launch({d_x, d_best}, n, stream);  // typed pointers, no CUdeviceptr casts
  (void)engine.cached_bytes();
  engine.release_cached();
}
