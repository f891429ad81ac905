// The reference of axpy.cu (tests/declared/configs/axpy.yaml): other code than the kernel it
// checks, a grid-stride loop with no parameters, so that a bug of axpy's indexing cannot hide in
// its own reference. Declared beside it (axpy_ref.yaml).
extern "C" __global__ void axpy_ref(float* y, const float* x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}
