/* gpuk
family: kernel
summary: "a 2-D convolution reading its filter from constant memory, as Kernel Tuner's convolution example does: d_filter is a __constant__ array the declaration fills; filter, the same values in global memory, is what the naive kernel reads"
sizes: [w, h]
params_as: defines
params:
  block_size_x: {default: 16, values: [16, 32]}
  block_size_y: {default: 8, values: [4, 8]}
defines: {FW: 5, FH: 5}
compiler_options: [-use_fast_math, -maxrregcount=64]
args:
  - {name: output, array: float32, length: w * h, role: out}
  - {name: input, array: float32, length: (w + 4) * (h + 4), role: in}
  - {name: filter, array: float32, length: 25, role: in}
  - {name: w, scalar: int32, value: w}
  - {name: h, scalar: int32, value: h}
constants:
  - {name: d_filter, array: float32, length: 25, data: {generator: uniform, seed: 11}}
launch:
  - entry: convolution_kernel
    grid: [ceil_div(w, block_size_x), ceil_div(h, block_size_y)]
    block: [block_size_x, block_size_y]
*/
#if !defined(FW) || !defined(FH) || FW != 5 || FH != 5
#error "the declaration's defines: give FW and FH"
#endif
__constant__ float d_filter[FW * FH];

extern "C" __global__ void convolution_kernel(float* output, const float* input, const float* filter, int w, int h) {
  const int x = blockIdx.x * block_size_x + threadIdx.x, y = blockIdx.y * block_size_y + threadIdx.y;
  if (x >= w || y >= h) return;
  float sum = 0.0f;
  for (int j = 0; j < FH; ++j)
    for (int i = 0; i < FW; ++i) sum = __fmaf_rn(input[(y + j) * (w + FW - 1) + x + i], d_filter[j * FW + i], sum);
  output[y * w + x] = sum;
}
