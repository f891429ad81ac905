#!/usr/bin/env python3
"""A Kernel Tuner script on gpuk (docs/kernel-tuner.md): the usual tune_kernel call, with only the
import line changed, on a kernel written for Kernel Tuner (block_size_x a #define). gpuk's tuner
compiles the 15 variants with NVRTC in parallel, verifies each against the answer on the GPU and
times it; the results come back in Kernel Tuner's form and are stored as a T4 output file.

    python examples/python/kernel_tuner_vector_add.py [N]
"""
import sys

import numpy as np
import gpuk
from gpuk.kernel_tuner import tune_kernel               # was: from kernel_tuner import tune_kernel
from gpuk.kernel_tuner.file_utils import store_output_file

try:
    gpuk.device_info()
except gpuk.NoDeviceError as e:  # one line, and 77 (skipped, as the C++ examples say)
    print(f"kernel_tuner_vector_add.py: skipped: {e}")
    sys.exit(77)

kernel_string = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = int(sys.argv[1]) if len(sys.argv) > 1 else 10000000
rng = np.random.default_rng(1)
a = rng.standard_normal(size).astype(np.float32)
b = rng.standard_normal(size).astype(np.float32)
c = np.zeros_like(b)
n = np.int32(size)

tune_params = {"block_size_x": [128 + 64 * i for i in range(15)]}
results, env = tune_kernel("vector_add", kernel_string, size, [c, a, b, n], tune_params,
                           answer=[a + b, None, None, None])
store_output_file("vector_add.json", results, tune_params)
print(f"{len(results)} configurations on {env['device_name']}; best {env['best_config']['block_size_x']} "
      f"threads per block, {env['best_config']['time']:.4f} ms")
