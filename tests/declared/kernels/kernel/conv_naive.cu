/* gpuk
family: kernel
summary: "conv_cmem's reference: the same convolution with the filter read from global memory, one thread per output"
sizes: [w, h]
defines: {FW: 5, FH: 5}
args:
  - {name: output, array: float32, length: w * h, role: out}
  - {name: input, array: float32, length: (w + 4) * (h + 4), role: in}
  - {name: filter, array: float32, length: 25, role: in}
  - {name: w, scalar: int32, value: w}
  - {name: h, scalar: int32, value: h}
launch:
  - {entry: conv_naive, grid: "ceil_div(w * h, 256)", block: 256}
*/
extern "C" __global__ void conv_naive(float* output, const float* input, const float* filter, int w, int h) {
  const long long k = blockIdx.x * 256LL + threadIdx.x;
  if (k >= (long long)w * h) return;
  const int x = (int)(k % w), y = (int)(k / w);
  float sum = 0.0f;
  for (int j = 0; j < FH; ++j)
    for (int i = 0; i < FW; ++i) sum = __fmaf_rn(input[(y + j) * (w + FW - 1) + x + i], filter[j * FW + i], sum);
  output[k] = sum;
}
