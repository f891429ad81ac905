// A plain kernel written for another tuner: its block size is a preprocessor name, and it has no
// gpuk metadata. The tests declare it in their configs alone.
extern "C" __global__ void axpy(float* y, const float* x, float a, int n) {
  const int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
