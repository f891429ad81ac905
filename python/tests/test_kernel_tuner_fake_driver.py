"""gpuk.kernel_tuner on gpuk's real tuner without a GPU: the driver whose device memory is host
memory and whose launches write nothing (tests/api/fake_driver.cpp, built as
build/tests/fake_memory_driver/libcuda.so.1), in a child process that loads it (run_child of
test_tune_binding.py). NVRTC compiles every variant for real; outputs keep the data they start
with, which is the answer these tests give where they want a pass. Each of Kernel Tuner's example
scripts' call patterns runs here whole: the arguments it passes, and what it does with the results
(json.dump, get_best_config, min over "time", the T4 files)."""
import pytest

from test_tune_binding import run_child

from gpuk.kernel_tuner import toolkit

HEAD = """
import collections, json, os, sys
sys.path.insert(0, {tests!r})
from test_kernel_tuner_gpu import CONVOLUTION, MATMUL, PNPOLY, REDUCTION, SPMV, STENCIL, VECTOR_ADD, ZEROMEAN
from gpuk import kernel_tuner
from gpuk.kernel_tuner import tune_kernel, run_kernel, util
from gpuk.kernel_tuner.file_utils import store_output_file, store_metadata_file
out = {{}}
"""


def child(body, tmp_path):
    from pathlib import Path
    return run_child(HEAD.format(tests=str(Path(__file__).parent)) + body + "\nprint(json.dumps(out))\n", tmp_path)


def test_run_kernel_writes_cmem_args_into_the_module(tmp_path):
    """Kernel Tuner's run_kernel copies cmem_args into the module it compiled; so does gpuk's (the
    data reaches the module: data of another size than the symbol is refused there)."""
    out = child("""
filt = np.arange(15, dtype=np.float32)
image, o = np.ones(7 * 13, np.float32), np.full(5 * 9, 2.0, np.float32)
args = [o, image, filt, np.int32(9), np.int32(5)]
params = {"filter_height": 3, "filter_width": 5, "block_size_x": 16, "block_size_y": 2}
r = run_kernel("convolution_kernel", CONVOLUTION, (9, 5), args, params, cmem_args={"d_filter": filt})
out["form"] = [type(x).__name__ for x in r] + [float(r[0][0]), int(r[3])]
try:
    run_kernel("convolution_kernel", CONVOLUTION, (9, 5), args, params, cmem_args={"d_filter": filt[:6]})
except gpuk.ConfigError as e:
    out["short"] = str(e)
""", tmp_path)
    assert out["form"] == ["ndarray", "ndarray", "ndarray", "int32", "int32", 2.0, 9]
    assert "constant d_filter is 60 bytes in the kernel, but its declared data is 24 bytes" in out["short"]


CUB = """
#include <cub/cub.cuh>
__global__ void block_sum(double *out, const double *x, int n) {
    typedef cub::BlockReduce<double, block_size_x> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp;
    int i = blockIdx.x * block_size_x + threadIdx.x;
    double s = BlockReduce(temp).Sum(i < n ? x[i] : 0.0);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}
"""


@pytest.mark.skipif(toolkit.cccl_dir() is None, reason="no CUDA toolkit with CCCL headers (cub) is found here")
def test_a_kernel_including_cub_compiles_as_with_kernel_tuners_nvcc(tmp_path):
    """Kernel Tuner's expdist example includes <cub/cub.cuh> (cub::BlockReduce): nvcc finds it; gpuk's
    NVRTC gets the toolkit's CCCL, cub.cuh as its device-code part."""
    out = child(f"CUB = {CUB!r}\n" + """
x = np.ones(1000, np.float64)
r, env = tune_kernel("block_sum", CUB, 1000, [np.zeros(8, np.float64), x, np.int32(1000)],
                     {"block_size_x": [128, 256]}, answer=[np.zeros(8, np.float64), None, None], quiet=True)
out["errors"] = [getattr(x.get("__error__"), "reason", None) for x in r]
""", tmp_path)
    assert out["errors"] == [None, None]
