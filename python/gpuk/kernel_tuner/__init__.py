"""Kernel Tuner's Python interface over gpuk's tuner: change the import line and a Kernel Tuner
script tunes with gpuk (docs/kernel-tuner.md).

    from gpuk import kernel_tuner                  # was: import kernel_tuner
    from gpuk.kernel_tuner import tune_kernel, run_kernel
    results, env = kernel_tuner.tune_kernel("vector_add", code, n, [c, a, b, n32], {"block_size_x": [128, 256]})
    best = kernel_tuner.util.get_best_config(results, "time")
    kernel_tuner.file_utils.store_output_file("vector_add.json", results, tune_params)

The work is gpuk's tuner's (NVRTC compile waves, every variant verified on the GPU, faulting and
hanging variants isolated, several GPUs); this package translates the call and its results.
"""
from . import file_utils, util
from .interface import run_kernel, tune_kernel

__all__ = ["tune_kernel", "run_kernel", "util", "file_utils"]
