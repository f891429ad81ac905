/* gpuk
family: kernel
summary: "the reference of block_sum: a launch that zeroes the total, then one atomic per element"
sizes: [n]
args:
  - {name: total, array: int64, length: 1, role: out}
  - {name: in, array: int32, length: n, role: in}
  - {name: n, scalar: int64, value: n}
launch:
  - {entry: zero_total, grid: 1, block: 1}
  - {entry: sum_atomic, grid: "ceil_div(n, 256)", block: 256}
*/
extern "C" __global__ void zero_total(long long* total, const int*, long long) { *total = 0; }
extern "C" __global__ void sum_atomic(long long* total, const int* in, long long n) {
  const long long i = blockIdx.x * 256ll + threadIdx.x;
  if (i < n) atomicAdd(reinterpret_cast<unsigned long long*>(total), static_cast<unsigned long long>((long long)in[i]));
}
