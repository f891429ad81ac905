// A test kernel for gpuk's fault and hang isolation (tests/gpu), not a stencil to use: the naive
// 5-point stencil of kernels_src/kernel/stencil2d_naive.cu with a parameter `fault`, passed as a
// preprocessor name like the others. fault 0 is correct; 1 writes through a wild pointer
// (CUDA_ERROR_ILLEGAL_ADDRESS), 2 executes a trap, 3 spins forever. Its declaration is
// stencil2d_faulty.yaml beside it.

#if !defined(block_size_x) || !defined(block_size_y) || !defined(fault)
#error "stencil2d_faulty.cu needs block_size_x, block_size_y and fault defined (-D name=value)"
#endif

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
stencil2d_faulty(float* __restrict__ out, const float* __restrict__ in, int nx, int ny, float c0, float c1) {
  const bool first = blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0;
  if (fault == 1 && first) {
    // Above the 47-bit user address space, so neither a device allocation nor (with HMM) host
    // memory: the store faults with CUDA_ERROR_ILLEGAL_ADDRESS.
    *reinterpret_cast<volatile unsigned int*>((1ull << 48) + 16ull * (unsigned long long)nx) = 1u;
  }
  if (fault == 2 && first) __trap();
  if (fault == 3) {
    // Nothing ever sets the flag: every thread spins until the host gives up on the kernel.
    __shared__ volatile int stop;
    if (threadIdx.x == 0 && threadIdx.y == 0) stop = 0;
    __syncthreads();
    while (!stop) {
    }
  }
  const int x = blockIdx.x * block_size_x + threadIdx.x;
  const int y = blockIdx.y * block_size_y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  const long long i = (long long)y * nx + x;
  const float west = x > 0 ? in[i - 1] : 0.0f;
  const float east = x + 1 < nx ? in[i + 1] : 0.0f;
  const float north = y > 0 ? in[i - nx] : 0.0f;
  const float south = y + 1 < ny ? in[i + nx] : 0.0f;
  out[i] = c0 * in[i] + c1 * (west + east + north + south);
}
