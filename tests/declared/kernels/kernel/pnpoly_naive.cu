/* gpuk
family: kernel
summary: "pnpoly_cmem's reference: the vertices read from global memory"
sizes: [n]
args:
  - {name: bitmap, array: int32, length: n, role: out}
  - {name: points, array: float32, length: 2 * n, role: in}
  - {name: vertices, array: float32, length: 2 * 60, role: in}
  - {name: n, scalar: int32, value: n}
launch:
  - {entry: pnpoly_naive, grid: "ceil_div(n, 128)", block: 128}
*/
#define VERTICES 60
extern "C" __global__ void pnpoly_naive(int* bitmap, const float2* points, const float2* vertices, int n) {
  const int i = blockIdx.x * 128 + threadIdx.x;
  if (i >= n) return;
  const float2 p = points[i];
  int c = 0;
  for (int a = 0, b = VERTICES - 1; a < VERTICES; b = a++) {
    const float2 vi = vertices[a], vj = vertices[b];
    if (((vi.y > p.y) != (vj.y > p.y)) && (p.x < __fdiv_rn(__fmul_rn(vj.x - vi.x, p.y - vi.y), vj.y - vi.y) + vi.x)) c = !c;
  }
  bitmap[i] = c;
}
