/* gpuk
family: kernel
summary: the reference of scale2d, one thread per element in one dimension
sizes: [nx, ny]
args:
  - {name: out, array: float32, length: nx * ny, role: out}
  - {name: in, array: float32, length: nx * ny, role: in}
  - {name: nx, scalar: int32, value: nx}
  - {name: ny, scalar: int32, value: ny}
  - {name: alpha, scalar: float32, value: 0.5}
launch:
  - {entry: scale2d_naive, grid: "ceil_div(nx * ny, 256)", block: 256}
*/
extern "C" __global__ void scale2d_naive(float* out, const float* in, int nx, int ny, float alpha) {
  const long long i = blockIdx.x * 256ll + threadIdx.x;
  if (i < (long long)nx * ny) out[i] = alpha * in[i];
}
