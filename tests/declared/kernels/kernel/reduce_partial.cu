/* gpuk
family: kernel
summary: "the first pass of Kernel Tuner's reduction alone: num_blocks partial sums in partial (the rest of its 1024 slots zero), verified by their total (compare: {partial: {sum: true}})"
sizes: [n]
params_as: defines
params:
  block_size_x: {default: 256, values: [128, 256]}
  num_blocks: {default: 256, values: [64, 256, 1024]}
args:
  - {name: partial, array: float32, length: 1024, role: out}
  - {name: x, array: float32, length: n, role: in}
  - {name: n, scalar: int32, value: n}
launch:
  - {entry: partial_floats, grid: num_blocks, block: block_size_x}
*/
extern "C" __global__ void partial_floats(float* partial, const float* array, int n) {
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
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
  if (blockIdx.x == 0)
    for (int i = num_blocks + threadIdx.x; i < 1024; i += block_size_x) partial[i] = 0.0f;
}
