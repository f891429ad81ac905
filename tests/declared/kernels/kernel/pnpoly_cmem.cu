/* gpuk
family: kernel
summary: "point-in-polygon by crossing number with the polygon's vertices in constant memory (__constant__ float2), as Kernel Tuner's pnpoly example; vertices, the same values in global memory, is the naive kernel's"
sizes: [n]
params:
  block_size_x: {default: 256, values: [128, 256]}
args:
  - {name: bitmap, array: int32, length: n, role: out}
  - {name: points, array: float32, length: 2 * n, role: in}
  - {name: vertices, array: float32, length: 2 * 60, role: in}
  - {name: n, scalar: int32, value: n}
constants:
  - {name: d_vertices, array: float32, length: 2 * 60, data: {generator: uniform, seed: 5}}
launch:
  - {entry: cn_pnpoly, grid: "ceil_div(n, block_size_x)", block: block_size_x}
*/
#define VERTICES 60
__constant__ float2 d_vertices[VERTICES];

template <int block_size_x>
__global__ void cn_pnpoly(int* bitmap, const float2* points, const float2* vertices, int n) {
  const int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i >= n) return;
  const float2 p = points[i];
  int c = 0;
  for (int a = 0, b = VERTICES - 1; a < VERTICES; b = a++) {
    const float2 vi = d_vertices[a], vj = d_vertices[b];
    if (((vi.y > p.y) != (vj.y > p.y)) && (p.x < __fdiv_rn(__fmul_rn(vj.x - vi.x, p.y - vi.y), vj.y - vi.y) + vi.x)) c = !c;
  }
  bitmap[i] = c;
}
