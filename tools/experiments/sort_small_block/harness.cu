// The first one-block draft of rank_bucket (2026-11-23), phase by phase (tools/experiments/sort_small_block/run.sh).
// Event time per launch behind a gate (as gpuk's time_device), output poisoned before each run,
// optionally L2 flushed; clock64 stamps of thread 0 after each phase.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
typedef unsigned int u32;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void gate(volatile int* flag) { while (*flag == 0) {} }
__global__ void k_empty() {}
template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK, 1) k_copy(const u32* in, u32* out, int n) {
  u32 v[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) { int i = k * BLOCK + threadIdx.x; if (i < n) v[k] = in[i]; }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) { int i = k * BLOCK + threadIdx.x; if (i < n) out[i] = v[k]; }
}
__device__ __forceinline__ long long clk() { long long c; asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)); return c; }

// STOP: 1 after min/max, 2 after counting, 3 after scan, 4 after grouping, 5 full.
// CNT: 0 shared atomicAdd; 1 warp-aggregated via match (no); kept simple.
template <int BLOCK, int ITEMS, int BB, int STOP, bool STAMP>
__global__ void __launch_bounds__(BLOCK, 1) bb(const u32* in, u32* out, int n, long long* stamp) {
  constexpr int kBuckets = 1 << BB, kWarps = BLOCK / 32, kPer = kBuckets / BLOCK;
  extern __shared__ __align__(16) unsigned char smem[];
  u32* start = reinterpret_cast<u32*>(smem);
  u32* part = start + kBuckets + 4;  // lo[32], hi[32], warp_total[32]
  u32* skey = part + 96;
  unsigned short* sidx = reinterpret_cast<unsigned short*>(skey + n);
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  long long s0 = 0;
  if (STAMP && t == 0) s0 = clk();
#pragma unroll
  for (int c = 0; c < kPer; ++c) start[c * BLOCK + t] = 0;
  if (t == 0) start[kBuckets] = n;
  u32 key[ITEMS];
  u32 lo = ~0u, hi = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) { int i = k * BLOCK + t; if (i < n) { key[k] = in[i]; lo = min(lo, key[k]); hi = max(hi, key[k]); } }
  lo = __reduce_min_sync(0xffffffffu, lo);
  hi = __reduce_max_sync(0xffffffffu, hi);
  if (lane == 0) { part[warp] = lo; part[32 + warp] = hi; }
  __syncthreads();
  if (STAMP && t == 0) stamp[1] = clk() - s0;
  lo = __reduce_min_sync(0xffffffffu, lane < kWarps ? part[lane] : ~0u);
  hi = __reduce_max_sync(0xffffffffu, lane < kWarps ? part[32 + lane] : 0u);
  if (STOP == 1) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) { int i = k * BLOCK + t; if (i < n) out[i] = key[k] + lo + hi; }
    if (STAMP && t == 0) stamp[6] = clk() - s0;
    return;
  }
  const int width = 32 - __clz(hi - lo);
  const int shift = width > BB ? width - BB : 0;
  u32 slot[ITEMS], home[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    if (k * BLOCK + t < n) { home[k] = (key[k] - lo) >> shift; slot[k] = atomicAdd(&start[home[k]], 1u); }
  __syncthreads();
  if (STAMP && t == 0) stamp[2] = clk() - s0;
  if (STOP == 2) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) { int i = k * BLOCK + t; if (i < n) out[i] = key[k] + slot[k]; }
    return;
  }
  u32 c[kPer];
#pragma unroll
  for (int v = 0; v < kPer / 4; ++v) {
    const uint4 q = reinterpret_cast<const uint4*>(start + t * kPer)[v];
    c[4 * v] = q.x, c[4 * v + 1] = q.y, c[4 * v + 2] = q.z, c[4 * v + 3] = q.w;
  }
  u32 mine = 0;
#pragma unroll
  for (int v = 0; v < kPer; ++v) mine += c[v];
  u32 inclusive = mine;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) { const u32 y = __shfl_up_sync(0xffffffffu, inclusive, o); if (lane >= o) inclusive += y; }
  if (lane == 31) part[64 + warp] = inclusive;
  __syncthreads();
  u32 run = __reduce_add_sync(0xffffffffu, lane < warp ? part[64 + lane] : 0u) + inclusive - mine;
#pragma unroll
  for (int v = 0; v < kPer; ++v) { const u32 x = c[v]; c[v] = run; run += x; }
#pragma unroll
  for (int v = 0; v < kPer / 4; ++v)
    reinterpret_cast<uint4*>(start + t * kPer)[v] = make_uint4(c[4 * v], c[4 * v + 1], c[4 * v + 2], c[4 * v + 3]);
  __syncthreads();
  if (STAMP && t == 0) stamp[3] = clk() - s0;
  if (STOP == 3) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) { int i = k * BLOCK + t; if (i < n) out[i] = key[k] + start[home[k]]; }
    return;
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = k * BLOCK + t;
    if (i < n) { const u32 at = start[home[k]] + slot[k]; skey[at] = key[k]; sidx[at] = i; }
  }
  __syncthreads();
  if (STAMP && t == 0) stamp[4] = clk() - s0;
  if (STOP == 4) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) { int q = k * BLOCK + t; if (q < n) out[q] = skey[q]; }
    return;
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int q = k * BLOCK + t;
    if (q < n) {
      const u32 b = skey[q], d = (b - lo) >> shift, me = sidx[q];
      const int begin = start[d], end = start[d + 1];
      u32 rank = begin;
      for (int j = begin; j < end; ++j) { const u32 o = skey[j]; rank += (o < b) | ((o == b) & (sidx[j] < me)); }
      out[rank] = b;
    }
  }
  if (STAMP) { __syncthreads(); if (t == 0) stamp[5] = clk() - s0; }
}

struct Timer {
  cudaStream_t s; volatile int* flag; int* dflag; char* flushbuf; size_t flushbytes = 100 << 20;
  Timer() {
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    { void* hp; CK(cudaHostAlloc(&hp, 4, cudaHostAllocMapped)); flag = (volatile int*)hp; CK(cudaHostGetDevicePointer((void**)&dflag, hp, 0)); }
    CK(cudaMalloc(&flushbuf, flushbytes));
  }
  template <class F> double time(F launch, u32* out, size_t outbytes, bool flush, int reps = 300) {
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    for (int w = 0; w < 20; ++w) launch();
    CK(cudaStreamSynchronize(s));
    for (int first = 0; first < reps; first += 16) {  // 16 runs behind each gate: the queue must not fill
      *flag = 0;
      gate<<<1, 1, 0, s>>>(dflag);
      for (int r = first; r < reps && r < first + 16; ++r) {
        CK(cudaMemsetAsync(out, 0xff, outbytes, s));
        if (flush) CK(cudaMemsetAsync(flushbuf, r & 0xff, flushbytes, s));
        CK(cudaEventRecord(ev[2 * r], s)); launch(); CK(cudaEventRecord(ev[2 * r + 1], s));
      }
      *flag = 1;
      CK(cudaStreamSynchronize(s));
    }
    std::vector<float> ms(reps);
    for (int r = 0; r < reps; ++r) CK(cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]));
    for (auto& e : ev) cudaEventDestroy(e);
    std::sort(ms.begin(), ms.end());
    return ms[reps / 2] * 1000.0;
  }
};

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  const int n = argc > 1 ? atoi(argv[1]) : 4096;
  std::vector<u32> h(n);
  unsigned long long x = 88172645463325252ull;
  for (auto& v : h) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; v = (u32)x; }
  u32 *din, *dout; long long* dst;
  CK(cudaMalloc(&din, n * 4)); CK(cudaMalloc(&dout, n * 4)); CK(cudaMalloc(&dst, 64 * 8));
  CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  Timer T;
  int clock_khz; CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  printf("n %d, SM clock attr %d MHz\n", n, clock_khz / 1000);
  for (int flush = 0; flush < 2; ++flush) {
    printf("--- flush %d\n", flush);
    printf("empty 1x1024        %6.2f us\n", T.time([&] { k_empty<<<1, 1024, 0, T.s>>>(); }, dout, n * 4, flush));
    printf("empty 16x256        %6.2f us\n", T.time([&] { k_empty<<<16, 256, 0, T.s>>>(); }, dout, n * 4, flush));
    { const int sh = 60000; CK(cudaFuncSetAttribute(k_empty, cudaFuncAttributeMaxDynamicSharedMemorySize, sh));
      printf("empty 1x1024 60KB   %6.2f us\n", T.time([&] { k_empty<<<1, 1024, sh, T.s>>>(); }, dout, n * 4, flush)); }
    printf("copy 1x1024x4       %6.2f us\n", T.time([&] { k_copy<1024, 4><<<1, 1024, 0, T.s>>>(din, dout, n); }, dout, n * 4, flush));
    printf("copy 16x256x1       %6.2f us\n", T.time([&] { k_copy<256, 1><<<(n + 255) / 256, 256, 0, T.s>>>(din, dout, n); }, dout, n * 4, flush));
#define BBRUN(STOP) { auto k = bb<1024, 4, 12, STOP, false>; const int sh = (4096 + 4) * 4 + 96 * 4 + n * 6 + 64; \
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, sh)); \
    printf("bb stop %d           %6.2f us\n", STOP, T.time([&] { k<<<1, 1024, sh, T.s>>>(din, dout, n, dst); }, dout, n * 4, flush)); }
    BBRUN(1) BBRUN(2) BBRUN(3) BBRUN(4) BBRUN(5)
  }
  // verify full
  { auto k = bb<1024, 4, 12, 5, true>; const int sh = (4096 + 4) * 4 + 96 * 4 + n * 6 + 64;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, sh));
    for (int rep = 0; rep < 5; ++rep) {
      CK(cudaMemset(dst, 0, 64 * 8));
      k<<<1, 1024, sh>>>(din, dout, n, dst); CK(cudaDeviceSynchronize());
      long long st[8]; CK(cudaMemcpy(st, dst, 64, cudaMemcpyDeviceToHost));
      printf("stamps (cycles from entry): minmax %lld count %lld scan %lld group %lld rank %lld\n", st[1], st[2], st[3], st[4], st[5]);
    }
    std::vector<u32> got(n); CK(cudaMemcpy(got.data(), dout, n * 4, cudaMemcpyDeviceToHost));
    std::vector<u32> ref = h; std::sort(ref.begin(), ref.end());
    printf("verify %s\n", got == ref ? "PASS" : "FAIL");
  }
  return 0;
}
