/* gpuk
family: kernel
summary: "Kernel Tuner's reduction pattern as one pipeline: sum_floats (-D parameters) reduces x into num_blocks partial sums in scratch, then the same kernel again with num_blocks = 1 (the launch's own params) reduces the partial sums into total; the scratch is zero beyond num_blocks, so the second pass reads all 1024 slots"
sizes: [n]
params_as: defines
params:
  block_size_x: {default: 256, values: [128, 256, 512]}
  num_blocks: {default: 256, values: [64, 256, 1024]}
args:
  - {name: total, array: float32, length: 1, role: out}
  - {name: x, array: float32, length: n, role: in}
  - {name: n, scalar: int32, value: n}
  - {name: slots, scalar: int32, value: 1024}
scratch:
  - {name: partial, array: float32, length: 1024}
launch:
  - {entry: sum_floats, grid: num_blocks, block: block_size_x, args: [partial, x, n]}
  - {entry: sum_floats, grid: 1, block: block_size_x, params: {num_blocks: 1}, args: [total, partial, slots]}
metrics:
  GB/s: n * 4 / seconds / 1e9
*/
extern "C" __global__ void sum_floats(float* sum_global, const float* array, int n) {
  __shared__ float s[block_size_x];
  const int step = num_blocks * block_size_x;
  float sum = 0.0f;
  for (int i = blockIdx.x * block_size_x + threadIdx.x; i < n; i += step) sum += array[i];
  s[threadIdx.x] = sum;
  __syncthreads();
  for (int w = block_size_x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) sum_global[blockIdx.x] = s[0];
}
