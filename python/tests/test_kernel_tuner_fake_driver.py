"""gpuk.kernel_tuner on gpuk's real tuner without a GPU: the driver whose device memory is host
memory and whose launches write nothing (tests/api/fake_driver.cpp, built as
build/tests/fake_memory_driver/libcuda.so.1), in a child process that loads it (run_child of
test_tune_binding.py). NVRTC compiles every variant for real; outputs keep the data they start
with, which is the answer these tests give where they want a pass. Each of Kernel Tuner's example
scripts' call patterns runs here whole: the arguments it passes, and what it does with the results
(json.dump, get_best_config, min over "time", the T4 files)."""
import json

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
                     {"block_size_x": [128]}, answer=[np.zeros(8, np.float64), None, None], quiet=True)
out["errors"] = [getattr(x.get("__error__"), "reason", None) for x in r]
""", tmp_path)
    assert out["errors"] == [None]


EXAMPLES = """
os.chdir({work!r})
f32, i32 = np.float32, np.int32

# vector_add.py: no answer, the T4 files
n = 1000
args = [np.zeros(n, f32), np.ones(n, f32), np.ones(n, f32), i32(n)]
tune_params = dict(block_size_x=[128, 192])
results, env = tune_kernel("vector_add", VECTOR_ADD, n, args, tune_params)
store_output_file("vector_add.json", results, tune_params)
store_metadata_file("vector_add-metadata.json")
out["vector_add"] = [len(json.load(open("vector_add.json"))["results"]), "metadata" in json.load(open(
    "vector_add-metadata.json")), all(r["compile_time"] > 0 and r["benchmark_time"] > 0 for r in results)]

# stencil.py: two dimensions, one divisor each, verbose
nx, ny = 67, 33
x_old = np.ones(nx * ny, f32)
tune_params = collections.OrderedDict(block_size_x=[32, 64], block_size_y=[1, 2])
results, env = kernel_tuner.tune_kernel("stencil_kernel", STENCIL, (nx, ny), [x_old.copy(), x_old, i32(nx), i32(ny)],
                                        tune_params, grid_div_x=["block_size_x"], grid_div_y=["block_size_y"],
                                        verbose=True)
out["stencil"] = len(results)

# matmul.py: the kernel as a file name, a restriction, a callable metric, iterations, json.dump(results)
open("matmul.cu", "w").write(MATMUL)
m = 64
A = np.ones((m, m), f32)
metrics = collections.OrderedDict()
metrics["GFLOP/s"] = lambda p: (2 * m ** 3 / 1e9) / (p["time"] / 1e3)
res, env = kernel_tuner.tune_kernel("matmul_kernel", "matmul.cu", (m, m), [np.zeros_like(A), A, A, i32(m)],
                                    dict(block_size_x=[16, 32], block_size_y=[8, 16], tile_size_x=[1],
                                         tile_size_y=[1, 2]),
                                    grid_div_y=["block_size_y", "tile_size_y"], grid_div_x=["block_size_x",
                                                                                            "tile_size_x"],
                                    restrictions=["block_size_x==block_size_y*tile_size_y"], verbose=True,
                                    iterations=32, metrics=metrics)
json.dump(res, open("matmul.json", "w"))
out["matmul"] = [[r["block_size_x"], r["block_size_y"], r["tile_size_y"], r["GFLOP/s"] > 0] for r in res]

# convolution.py: cmem_args, a restriction with or and %, json.dump((results, env))
w, h, fw, fh = 40, 20, 3, 3
filt = np.ones(fw * fh, f32)
results, env = kernel_tuner.tune_kernel(
    "convolution_kernel", CONVOLUTION, (w, h), [np.zeros(w * h, f32), np.ones((w + 2) * (h + 2), f32), filt,
                                                i32(w), i32(h)],
    dict(filter_height=[fh], filter_width=[fw], block_size_x=[16, 32], block_size_y=[2], use_padding=[0, 1]),
    grid_div_y=["block_size_y"], grid_div_x=["block_size_x"], cmem_args={{"d_filter": filt}}, verbose=True,
    restrictions=["use_padding==0 or (block_size_x % 32 != 0)"])
env["execution_time"] = 1.0
json.dump((results, env), open("convolution.json", "w"))
out["convolution"] = sorted((r["block_size_x"], r["use_padding"]) for r in results)

# spmv.py: an expression divisor, an answer and atol; the call's value returned
nrows = i32(100)
rows = np.arange(nrows + 1, dtype=i32)
spmv = kernel_tuner.tune_kernel("spmv_kernel", SPMV, nrows, [np.zeros(nrows, f32), rows, rows[:-1].copy(),
                                                           np.ones(nrows, f32), np.ones(nrows, f32), nrows],
                                dict(block_size_x=[32, 64], threads_per_row=[1, 32]),
                                grid_div_x=["block_size_x/threads_per_row"], verbose=True,
                                answer=[np.zeros(nrows, f32), None, None, None, None, None], atol=1e-4)
out["spmv"] = [len(spmv), len(spmv[0]), sum("__error__" in r for r in spmv[0])]

# reduction.py: problem_size a parameter's name, no grid divisor, verify, then the second kernel per
# num_blocks, min over "time", a total per configuration, get_config_string
x = np.zeros(5000, f32)
sum_x = np.zeros(64, f32)
tune_params = collections.OrderedDict(block_size_x=[32, 64], num_blocks=[32, 64])
def verify_partial_reduce(cpu_result, gpu_result, atol=None):
    return np.isclose(cpu_result[0], np.sum(gpu_result[0]), atol=atol)
smem = {{"size": "block_size_x * 4"}}
first_kernel, _ = tune_kernel("sum_floats", REDUCTION, "num_blocks", [sum_x, x, i32(x.size)], tune_params,
                              grid_div_x=[], verbose=True, answer=[np.sum(x), None, None],
                              verify=verify_partial_reduce, smem_args=smem)
num_blocks = tune_params["num_blocks"]
tune_params["num_blocks"] = [1]
second_kernel = dict()
for nblocks in num_blocks:
    result, _ = tune_kernel("sum_floats", REDUCTION, "num_blocks", [sum_x, x, i32(nblocks)], tune_params,
                            grid_div_x=[], verbose=True, smem_args=smem)
    json.dump(result, open("reduce-kernel2-" + str(nblocks) + ".json", "w"))
    second_kernel[nblocks] = min(result, key=lambda x: x["time"])
for i, instance in enumerate(first_kernel):
    first_kernel[i]["total"] = instance["time"] + second_kernel[instance["num_blocks"]]["time"]
best_config = min(first_kernel, key=lambda x: x["total"])
json.dump(first_kernel, open("reduce.json", "w"))
out["reduction"] = [len(first_kernel), "num_blocks=" in util.get_config_string(best_config)]

# expdist.py: numpy sizes, util.get_best_config, json.dump of (results, env), a second kernel of one block
size = i32(40)
kernel1 = tune_kernel("stencil_kernel", STENCIL, (size, size), [np.ones(1600, f32), np.ones(1600, f32), size, size],
                      collections.OrderedDict(block_size_x=[32], block_size_y=[1, 2]),
                      grid_div_x=["block_size_x"], grid_div_y=["block_size_y"], verbose=True)
json.dump(kernel1, open("expdist.json", "w"))
best_config1 = util.get_best_config(kernel1[0], "time")
kernel2 = tune_kernel("vector_add", VECTOR_ADD, 1, [np.zeros(1, f32), np.ones(1, f32), np.ones(1, f32), i32(1)],
                      dict(block_size_x=[32, 64]), grid_div_x=[], verbose=True)
best_config2 = util.get_best_config(kernel2[0], "time")
out["expdist"] = best_config1["time"] + best_config2["time"] > 0

# zeromeanfilter.py: one row of blocks, an empty divisor list, a scalar-first argument list
height, width = i32(31), i32(45)
image = np.ones(height * width, f32)
r, env = tune_kernel("computeMeanVertically", ZEROMEAN, (width, 1), [height, width, image],
                     collections.OrderedDict(block_size_x=[32, 64], block_size_y=[1]), grid_div_y=[],
                     grid_div_x=["block_size_x"])
out["zeromeanfilter"] = len(r)

# pnpoly's device kernel: __constant__ float2 vertices, compiler options
npts = 300
vertices = np.ones(2 * 5, f32)
r, env = kernel_tuner.tune_kernel("cn_pnpoly", PNPOLY, npts, [np.zeros(npts, i32), np.ones(2 * npts, f32), i32(npts)],
                                  dict(block_size_x=[64], tile_size=[1, 2]), grid_div_x=["block_size_x", "tile_size"],
                                  cmem_args={{"d_vertices": vertices}}, compiler_options=["-DVERTICES=5"], verbose=True)
out["pnpoly"] = [len(r), sum("__error__" in x for x in r)]
"""


def test_kernel_tuners_example_scripts_call_patterns_run_whole(tmp_path):
    """Each of Kernel Tuner's example scripts (vector_add, stencil, matmul, convolution, spmv,
    reduction, expdist, zeromeanfilter, point-in-polygon's device kernel), its arguments and what it
    does with the results, on small kernels of the same shape (test_kernel_tuner_gpu.py's)."""
    work = tmp_path / "work"
    work.mkdir()
    out = child(EXAMPLES.format(work=str(work)), tmp_path)
    assert out["vector_add"] == [2, True, True]
    assert out["stencil"] == 4
    assert out["matmul"] == [[16, 8, 2, True], [16, 16, 1, True], [32, 16, 2, True]]
    assert out["convolution"] == [[16, 0], [16, 1], [32, 0]]
    assert out["spmv"] == [2, 4, 0]
    assert out["reduction"] == [4, True]
    assert out["expdist"] is True
    assert out["zeromeanfilter"] == 2
    assert out["pnpoly"] == [2, 0]
    for name in ("matmul.json", "convolution.json", "reduce.json", "expdist.json"):
        json.loads((work / name).read_text())


BIG_SHARED = """
__global__ void big_shared(float *y, const float *x, int n) {
    __shared__ float s[block_size_x * 256];  // 64 KB at 64 threads: more than a kernel's 48 KB of static shared
    int i = blockIdx.x * block_size_x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = s[(threadIdx.x + 1) % block_size_x];
}
"""


def test_without_an_answer_a_first_configuration_that_does_not_compile_fails_alone(tmp_path):
    """The reference without an answer is the space's first configuration; where it does not compile
    the next that does is, and the first is a CompilationFailedConfig, as Kernel Tuner marks it (the
    tune stopped: "the worker on GPU 0 could not start")."""
    out = child(f"BIG_SHARED = {BIG_SHARED!r}\n" + """
r, env = tune_kernel("big_shared", BIG_SHARED, 100, [np.zeros(100, np.float32), np.ones(100, np.float32),
                     np.int32(100)], {"block_size_x": [64, 32, 16]}, quiet=True)
out["results"] = [(x["block_size_x"], repr(x.get("__error__"))) for x in r]
out["reason"] = [x["__error__"].reason for x in r if "__error__" in x]
out["best"] = env["best_config"]["block_size_x"]
""", tmp_path)
    assert sorted(out["results"]) == [[16, "None"], [32, "None"], [64, "CompilationFailedConfig"]]
    assert len(out["reason"]) == 1 and "too much shared data" in out["reason"][0] and out["best"] in (16, 32)
