"""gpuk.kernel_tuner on a GPU: small kernels in the style of Kernel Tuner's examples (written here:
#define'd parameters, no gpuk metadata), tuned with Kernel Tuner's arguments and checked against
NumPy: vector_add (and run_kernel), a 2-D stencil, a tiled matmul with a restriction and a
GFLOP/s objective, a convolution reading its filter from __constant__ memory, a CSR spmv with an
expression grid divisor, a two-kernel reduction verified by a function (the partial sums by their
total), a zero-mean filter working in place with no answer, point-in-polygon with __constant__
vertices and compiler options, column sums whose last bits differ between configurations (no
answer, the input not const: verified on the GPU within the rule) and a variant far behind the
fastest (timed by its probe alone). Each tune must report only verified winners."""
import re

import numpy as np
import pytest

from gpuk import _gpuk
from gpuk import kernel_tuner
from gpuk.kernel_tuner.util import ErrorConfig


@pytest.fixture
def kt(gpu):
    if not hasattr(_gpuk, "tune_kernel"):
        pytest.skip("this build's _gpuk has no tune_kernel (gpuk's tuner binding)")
    return kernel_tuner


def tuned(results, env, n):
    """Every configuration came back, the best one measured and verified."""
    assert len(results) == n, [r for r in results]
    best = env["best_config"]
    assert "__error__" not in best and isinstance(best["time"], float) and best["time"] > 0
    failed = [r for r in results if "__error__" in r]
    assert all(isinstance(r["__error__"], ErrorConfig) for r in failed)
    return best


def rng(seed):
    return np.random.default_rng(seed)


VECTOR_ADD = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def test_vector_add_tunes_and_runs(kt):
    n = 100003
    a = rng(1).standard_normal(n).astype(np.float32)
    b = rng(2).standard_normal(n).astype(np.float32)
    c = np.full_like(a, np.nan)
    tp = {"block_size_x": [128 + 64 * i for i in range(15)]}
    results, env = kt.tune_kernel("vector_add", VECTOR_ADD, n, [c, a, b, np.int32(n)], tp,
                                  answer=[a + b, None, None, None], quiet=True)
    best = tuned(results, env, 15)
    assert all("__error__" not in r for r in results)
    out = kt.run_kernel("vector_add", VECTOR_ADD, n, [c, a, b, np.int32(n)], {"block_size_x": best["block_size_x"]})
    np.testing.assert_array_equal(out[0], a + b)
    assert out[3] == n and np.isnan(c).all()  # the caller's arrays are not written


STENCIL = """
__global__ void stencil_kernel(float *x_new, const float *x_old, int nx, int ny) {
    int x = blockIdx.x * block_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1) {
        int i = y * nx + x;
        x_new[i] = x_old[i] + 0.1f * (x_old[i - 1] + x_old[i + 1] + x_old[i - nx] + x_old[i + nx] - 4.0f * x_old[i]);
    }
}
"""


def test_stencil_keeps_the_border_as_kernel_tuner_does(kt):
    nx, ny = 515, 259
    old = rng(3).standard_normal(nx * ny).astype(np.float32)
    new = old.copy()  # the border is never written: the caller's data must stay there
    g = old.reshape(ny, nx)
    want = g.copy()
    want[1:-1, 1:-1] = g[1:-1, 1:-1] + np.float32(0.1) * (g[1:-1, :-2] + g[1:-1, 2:] + g[:-2, 1:-1] + g[2:, 1:-1]
                                                           - np.float32(4) * g[1:-1, 1:-1])
    tp = {"block_size_x": [32, 64, 128], "block_size_y": [1, 2, 4, 8]}
    results, env = kt.tune_kernel("stencil_kernel", STENCIL, (nx, ny), [new, old, np.int32(nx), np.int32(ny)], tp,
                                  answer=[want.reshape(-1), None, None, None], atol=1e-5, quiet=True)
    tuned(results, env, 12)
    assert all("__error__" not in r for r in results)


MATMUL = """
__global__ void matmul_kernel(float *C, const float *A, const float *B, int n) {
    int x0 = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    int y0 = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;
    float acc[tile_size_y][tile_size_x];
    #pragma unroll
    for (int i = 0; i < tile_size_y; i++)
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++) acc[i][j] = 0.0f;
    for (int k = 0; k < n; k++) {
        #pragma unroll
        for (int i = 0; i < tile_size_y; i++) {
            int y = y0 + i * block_size_y;
            float a = y < n ? A[y * n + k] : 0.0f;
            #pragma unroll
            for (int j = 0; j < tile_size_x; j++) {
                int x = x0 + j * block_size_x;
                if (x < n) acc[i][j] += a * B[k * n + x];
            }
        }
    }
    #pragma unroll
    for (int i = 0; i < tile_size_y; i++)
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            int y = y0 + i * block_size_y, x = x0 + j * block_size_x;
            if (y < n && x < n) C[y * n + x] = acc[i][j];
        }
}
"""


def test_matmul_with_a_restriction_and_a_gflops_objective(kt):
    n = 200
    A = rng(4).standard_normal((n, n)).astype(np.float32)
    B = rng(5).standard_normal((n, n)).astype(np.float32)
    C = np.zeros_like(A)
    tp = {"block_size_x": [16, 32, 64], "block_size_y": [1, 2, 4, 8, 16, 32], "tile_size_x": [1, 2, 4],
          "tile_size_y": [1, 2, 4]}
    metrics = {"GFLOP/s": f"2*{n}**3/1e9 / (time / 1e3)"}
    results, env = kt.tune_kernel("matmul_kernel", MATMUL, (n, n), [C, A, B, np.int32(n)], tp,
                                  grid_div_x=["block_size_x", "tile_size_x"],
                                  grid_div_y=["block_size_y", "tile_size_y"],
                                  restrictions=["block_size_x==block_size_y*tile_size_y"],
                                  answer=[A.astype(np.float64) @ B, None, None, None], atol=1e-2,
                                  metrics=metrics, objective="GFLOP/s", iterations=5, quiet=True)
    # the restriction, and no block above 1,024 threads (64 x 32 is left out, as Kernel Tuner's space does)
    want = sum(1 for bx in tp["block_size_x"] for by in tp["block_size_y"] for ty in tp["tile_size_y"]
               if bx == by * ty and bx * by <= 1024) * 3
    best = tuned(results, env, want)
    assert best["GFLOP/s"] == max(r["GFLOP/s"] for r in results if "__error__" not in r)


CONVOLUTION = """
__constant__ float d_filter[filter_height * filter_width];

__global__ void convolution_kernel(float *output, const float *input, const float *filter, int w, int h) {
    int x = blockIdx.x * block_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    if (x >= w || y >= h) return;
    int iw = w + filter_width - 1;
    float sum = 0.0f;
    for (int i = 0; i < filter_height; i++)
        for (int j = 0; j < filter_width; j++)
            sum += input[(y + i) * iw + x + j] * d_filter[i * filter_width + j];
    output[y * w + x] = sum;
}
"""


def test_convolution_reads_its_filter_from_constant_memory(kt):
    w, h, fw, fh = 300, 211, 5, 3
    image = rng(6).standard_normal((h + fh - 1) * (w + fw - 1)).astype(np.float32)
    filt = rng(7).standard_normal(fh * fw).astype(np.float32)
    src = image.reshape(h + fh - 1, w + fw - 1).astype(np.float64)
    want = sum(src[i:i + h, j:j + w] * filt[i * fw + j] for i in range(fh) for j in range(fw))
    out = np.zeros(w * h, np.float32)
    tp = {"filter_height": [fh], "filter_width": [fw], "block_size_x": [16, 32, 64], "block_size_y": [2, 4, 8]}
    results, env = kt.tune_kernel("convolution_kernel", CONVOLUTION, (w, h), [out, image, filt, np.int32(w),
                                                                                np.int32(h)], tp,
                                  cmem_args={"d_filter": filt}, answer=[want.reshape(-1), None, None, None, None],
                                  atol=1e-4, quiet=True)
    tuned(results, env, 9)
    assert all("__error__" not in r for r in results)  # zeros in the filter would fail every one


SPMV = """
__global__ void spmv_kernel(float *y, const int *rows, const int *cols, const float *values, const float *x,
                            int nrows) {
    int t = blockIdx.x * block_size_x + threadIdx.x;
    int row = t / threads_per_row, lane = t % threads_per_row;
    if (row >= nrows) return;
    float sum = 0.0f;
    for (int k = rows[row] + lane; k < rows[row + 1]; k += threads_per_row) sum += values[k] * x[cols[k]];
    #if threads_per_row == 32
    for (int s = 16; s > 0; s >>= 1) sum += __shfl_down_sync(0xffffffff, sum, s);
    #endif
    if (lane == 0) y[row] = sum;
}
"""


def test_spmv_with_an_expression_divisor(kt):
    nrows, ncols, nnz = 5003, 4001, 60000
    g = rng(8)
    rows = np.concatenate([[0], np.sort(g.integers(0, nnz, nrows - 1)), [nnz]]).astype(np.int32)
    cols = g.integers(0, ncols, nnz).astype(np.int32)
    vals = g.standard_normal(nnz).astype(np.float32)
    x = g.standard_normal(ncols).astype(np.float32)
    want = np.array([np.dot(vals[rows[i]:rows[i + 1]].astype(np.float64), x[cols[rows[i]:rows[i + 1]]])
                     for i in range(nrows)])
    y = np.zeros(nrows, np.float32)
    tp = {"block_size_x": [32 * i for i in range(1, 9)], "threads_per_row": [1, 32]}
    results, env = kt.tune_kernel("spmv_kernel", SPMV, nrows, [y, rows, cols, vals, x, np.int32(nrows)], tp,
                                  grid_div_x=["block_size_x/threads_per_row"],
                                  answer=[want, None, None, None, None, None], atol=1e-3, quiet=True)
    tuned(results, env, 16)
    assert all("__error__" not in r for r in results)


REDUCTION = """
__global__ void sum_floats(float *sum_global, const float *array, int n) {
    extern __shared__ float sh_mem[];
    int ti = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * block_size_x + ti; i < n; i += num_blocks * block_size_x) sum += array[i];
    sh_mem[ti] = sum;
    __syncthreads();
    for (unsigned int s = block_size_x / 2; s > 0; s >>= 1) {
        if (ti < s) sh_mem[ti] += sh_mem[ti + s];
        __syncthreads();
    }
    if (ti == 0) sum_global[blockIdx.x] = sh_mem[0];
}
"""


def test_two_kernel_reduction_verified_by_its_total(kt):
    n = 1000003
    x = rng(9).random(n).astype(np.float32)
    tp = {"block_size_x": [64, 128, 256], "num_blocks": [32, 256, 1024]}
    partial = np.zeros(max(tp["num_blocks"]), np.float32)
    total = np.sum(x.astype(np.float64))

    def verify_partial_reduce(cpu_result, gpu_result, atol=None):
        return bool(np.isclose(cpu_result[0], np.sum(gpu_result[0].astype(np.float64)), atol=atol))

    first, env = kt.tune_kernel("sum_floats", REDUCTION, "num_blocks", [partial, x, np.int32(n)], tp, grid_div_x=[],
                                smem_args={"size": "block_size_x * 4"}, answer=[total, None, None],
                                verify=verify_partial_reduce, atol=1.0, quiet=True)
    best = tuned(first, env, 9)
    assert all("__error__" not in r for r in first)
    # the second kernel sums the first one's partial sums, in one block
    nblocks = best["num_blocks"]
    partials = kt.run_kernel("sum_floats", REDUCTION, "num_blocks", [partial, x, np.int32(n)],
                             {"block_size_x": best["block_size_x"], "num_blocks": nblocks}, grid_div_x=[],
                             smem_args={"size": "block_size_x * 4"})[0]
    assert np.isclose(np.sum(partials[:nblocks].astype(np.float64)), total, atol=1.0)
    out = np.zeros(1, np.float32)
    second, env2 = kt.tune_kernel("sum_floats", REDUCTION, "num_blocks", [out, partials, np.int32(nblocks)],
                                  {"block_size_x": [32, 64, 128], "num_blocks": [1]}, grid_div_x=[],
                                  smem_args={"size": "block_size_x * 4"},
                                  answer=[np.float32(np.sum(partials[:nblocks])).reshape(1), None, None], atol=1e-2,
                                  quiet=True)
    tuned(second, env2, 3)
    assert best["time"] + env2["best_config"]["time"] > 0


COLUMN_SUMS = """
__global__ void column_sums(float *sums, float *x, int n, int m) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i >= n) return;
    float acc[split];
    for (int s = 0; s < split; s++) acc[s] = 0.0f;
    for (int j = 0; j < m; j++) acc[j % split] += x[(size_t)j * n + i];
    float total = 0.0f;
    for (int s = 0; s < split; s++) total += acc[s];
    sums[i] = total;
}
"""


def test_outputs_that_differ_in_bits_are_verified_on_the_gpu_within_the_rule(kt):
    """No answer, and the input not declared const (as Kernel Tuner's examples often write it), so
    gpuk compares it as an output with the first variant's. The column sums differ in their last
    bits between `split`s (another order of additions): they are compared with the first
    variant's within atol/rtol on the GPU, as the 4-million-float input is byte for byte; nothing
    is copied back (the verify note says how many went which way)."""
    n, m = 4096, 1001
    x = rng(12).random(n * m).astype(np.float32)
    sums = np.zeros(n, np.float32)
    results, env = kt.tune_kernel("column_sums", COLUMN_SUMS, n, [sums, x, np.int32(n), np.int32(m)],
                                  {"block_size_x": [64, 128, 256], "split": [1, 2, 4]}, atol=1e-3, quiet=True)
    tuned(results, env, 9)
    assert all(isinstance(r["time"], float) for r in results), env["gpuk_notes"]
    # The rule's kernels are compiled beside the sweep; until they are loaded the host compares.
    note = next(n for n in env["gpuk_notes"] if "verified on the GPU" in n)
    m = re.search(r"verified on the GPU: (\d) of 9 variants \((\d) with the bytes of the first verified answer, (\d) "
                  r"within the compare rule", note)
    assert m, note
    on_gpu, same_bytes, within = map(int, m.groups())
    assert on_gpu == same_bytes + within and same_bytes <= 2 and within >= 1, note


ZEROMEAN = """
extern "C" __global__ void computeMeanVertically(int h, int w, float *image) {
    int x = blockIdx.x * block_size_x + threadIdx.x;
    if (x >= w) return;
    float sum = 0.0f;
    for (int y = 0; y < h; y++) sum += image[y * w + x];
    float mean = sum / h;
    for (int y = 0; y < h; y++) image[y * w + x] -= mean;
}
"""


def test_zero_mean_filter_in_place_without_an_answer(kt):
    h, w = 301, 257
    image = rng(10).standard_normal(h * w).astype(np.float32)
    tp = {"block_size_x": [32, 64, 128, 256]}
    results, env = kt.tune_kernel("computeMeanVertically", ZEROMEAN, (w, 1), [np.int32(h), np.int32(w), image], tp,
                                  grid_div_y=[], quiet=True)
    tuned(results, env, 4)
    assert any("first variant" in note for note in env["gpuk_notes"])
    out = kt.run_kernel("computeMeanVertically", ZEROMEAN, (w, 1), [np.int32(h), np.int32(w), image],
                        {"block_size_x": env["best_config"]["block_size_x"]}, grid_div_y=[])
    g = image.reshape(h, w).astype(np.float64)
    np.testing.assert_allclose(out[2].reshape(h, w), g - g.mean(axis=0), atol=1e-5)


PNPOLY = """
__constant__ float2 d_vertices[VERTICES];

__global__ void cn_pnpoly(int *bitmap, const float2 *points, int n) {
    int i = blockIdx.x * block_size_x * tile_size + threadIdx.x;
    #pragma unroll
    for (int t = 0; t < tile_size; t++, i += block_size_x) {
        if (i >= n) return;
        float2 p = points[i];
        int c = 0;
        for (int j = 0, k = VERTICES - 1; j < VERTICES; k = j++) {
            float2 vj = d_vertices[j], vk = d_vertices[k];
            if (((vj.y > p.y) != (vk.y > p.y)) && (p.x < (vk.x - vj.x) * (p.y - vj.y) / (vk.y - vj.y) + vj.x))
                c = !c;
        }
        bitmap[i] = c;
    }
}
"""


def test_point_in_polygon_with_constant_vertices_and_compiler_options(kt):
    n, nv = 100001, 37
    g = rng(11)
    points = g.standard_normal(2 * n).astype(np.float32)
    angles = np.sort(g.random(nv) * 2 * np.pi)[::-1]
    vertices = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32).reshape(-1)
    vx, vy = vertices[0::2], vertices[1::2]
    px, py = points[0::2], points[1::2]
    inside = np.zeros(n, bool)
    for j in range(nv):  # the same float32 operations, one at a time (no fused multiply-add: -fmad=false)
        k = (j - 1) % nv
        cross = (vy[j] > py) != (vy[k] > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            edge = (vx[k] - vx[j]) * (py - vy[j]) / (vy[k] - vy[j]) + vx[j]
        inside ^= cross & (px < edge)
    bitmap = np.full(n, -1, np.int32)
    tp = {"block_size_x": [64, 128, 256], "tile_size": [1, 2, 4]}
    results, env = kt.tune_kernel("cn_pnpoly", PNPOLY, n, [bitmap, points, np.int32(n)], tp,
                                  grid_div_x=["block_size_x", "tile_size"], cmem_args={"d_vertices": vertices},
                                  defines=None, compiler_options=["-fmad=false", f"-DVERTICES={nv}"],
                                  answer=[inside.astype(np.int32), None, None], quiet=True)
    tuned(results, env, 9)
    assert all("__error__" not in r for r in results)


BUSY = """
__global__ void busy(float *out, const float *in, int n, int flag) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i >= n) return;
    unsigned h = i;
    for (int k = 0; k < work * 4096; k++) h = h * 1664525u + 1013904223u;
    out[i] = (flag != 0 && h == 7u) ? 0.0f : 2.0f * in[i];
}
"""


def test_a_variant_far_behind_is_timed_by_its_probe_alone(kt):
    """The sweep's cut (docs/tuning.md, "Variants far behind"): the same answer at 1x and 16x the
    work; the slow variant, verified, is timed by its two probe runs, the fast one in full."""
    n = 1 << 20
    x = rng(5).random(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    results, env = kt.tune_kernel("busy", BUSY, n, [out, x, np.int32(n), np.int32(0)],
                                  {"block_size_x": [256], "work": [1, 16]}, answer=[2 * x, None, None, None],
                                  iterations=20, quiet=True)
    tuned(results, env, 2)
    fast, slow = sorted(results, key=lambda r: r["work"])
    assert len(fast["times"]) == 20
    assert len(slow["times"]) == 2 and min(slow["times"]) > 2 * fast["time"], (fast, slow)
    assert any("probe alone" in note for note in env["gpuk_notes"]), env["gpuk_notes"]
