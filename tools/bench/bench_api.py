#!/usr/bin/env python3
"""The Python package's host overhead per call, beside tools/bench/bench_api.cpp (the C++ figure).

For argmax of n float32 (the onepass kernel, metadata defaults; bench_api.cpp's rows run the
variant the lookup picks for n, onepass with tuned parameters at these sizes: the host side of a
call is the same), the host time one call takes to enqueue, timed as bench_api.cpp times it
(there, three trials of its rows taken in turn; its first Operation::launch line is the one read
here): batches of launches enqueued without
waiting, the median batch divided by its size, the stream drained between batches:
  - Operation.launch([ptr_in, ptr_out], n, stream): the prepared operation on device pointers,
  - op(x, out=best, stream=s): the prepared operation on arrays (__cuda_array_interface__ of a
    gpuk.DeviceArray; and PyTorch tensors where PyTorch is installed),
  - gpuk.reduce.argmax(x, out=best, stream=s): the family function (one Operation per bucket and
    stream, looked up per call),
and runs build/bench_api (or --cpp PATH) in the same process's run for gpuk::Operation::launch.
Target: the prepared operation from Python at most 2 us above the C++ Operation::launch.

  tools/bench/bench_api.py [--n 4096 250000] [--batch 100] [--batches 200] [--cpp build/bench_api]
"""
import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import gpuk
from gpuk import _gpuk


def per_call_us(call, sync, batch, batches):
    samples = []
    for b in range(batches + 1):  # the first batch warms up
        start = time.perf_counter()
        for _ in range(batch):
            call()
        stop = time.perf_counter()
        sync()
        if b:
            samples.append((stop - start) / batch * 1e6)
    return statistics.median(samples)


def cpp_launch_us(cpp, n, batch, batches):
    out = subprocess.run([str(cpp), str(n), str(batch), str(batches)], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        return None, out.stderr.strip()
    m = re.search(r"gpuk::Operation::launch\s+([\d.]+) us", out.stdout)
    return (float(m.group(1)) if m else None), out.stdout


def bench(n, batch, batches, cpp):
    engine = gpuk.default_engine()
    info = engine.device_info()
    op = engine.prepare("reduce", "argmax", "float32", n, kernel="onepass")
    host = ((np.arange(n, dtype=np.uint64) * 2654435761) % 1000003).astype(np.float32) - 500000
    x_mem = _gpuk.DeviceMemory(engine.device, host.nbytes)
    x_mem.upload_from(host.ctypes.data, host.nbytes, 0)
    best_mem = _gpuk.DeviceMemory(engine.device, 16)
    torch = None
    try:
        import torch as _torch
        if _torch.cuda.is_available():
            torch = _torch
    except ImportError:
        pass
    stream_obj = torch.cuda.Stream() if torch else None
    s = stream_obj.cuda_stream if torch else 0
    # Arrays written on the benchmark's stream, as __cuda_array_interface__ says.
    x = gpuk.DeviceArray(x_mem, "float32", (n,), s)
    best = gpuk.DeviceArray(best_mem, "int64", (2,), s)
    sync = lambda: _gpuk.synchronize(engine.device, s)  # noqa: E731
    _gpuk.synchronize(engine.device, 0)

    rows = []
    ptrs = [x_mem.ptr, best_mem.ptr]
    rows.append(("Operation.launch (device pointers)", per_call_us(lambda: op.launch(ptrs, n, s), sync, batch, batches)))
    rows.append(("op(x, out=best, stream=s) (CAI)",
                 per_call_us(lambda: op(x, out=best, stream=s), sync, batch, batches)))
    rows.append(("gpuk.reduce.argmax(x, out=best, stream=s) (CAI)",
                 per_call_us(lambda: gpuk.reduce.argmax(x, out=best, stream=s), sync, batch, batches)))
    if torch:
        xt = torch.from_numpy(host).cuda()
        bt = torch.empty(2, dtype=torch.int64, device="cuda")
        torch.cuda.synchronize()
        rows.append(("op(tensor, out=tensor, stream=s) (PyTorch)",
                     per_call_us(lambda: op(xt, out=bt, stream=s), sync, batch, batches)))
        with torch.cuda.stream(stream_obj):
            rows.append(("torch.argmax(tensor) (for scale)",
                         per_call_us(lambda: torch.argmax(xt), sync, batch, batches)))
    # Every answer checked once: the index of the maximum.
    expected = int(np.argmax(host))
    op.launch(ptrs, n, s)
    sync()
    assert best.numpy()[1] == expected, "wrong argmax"
    assert gpuk.reduce.argmax(x).index == expected

    cpp_us, cpp_out = cpp_launch_us(cpp, n, batch, batches) if cpp and Path(cpp).exists() else (None, "no C++ bench")
    print(f"argmax of {n} float32 on {info['name']}, variant {op.variant}; host time per call "
          f"(median of {batches} batches of {batch}):")
    if cpp_us is not None:
        print(f"  {'C++ gpuk::Operation::launch (build/bench_api)':52s} {cpp_us:8.3f} us")
    else:
        print(f"  C++ figure missing: {cpp_out}")
    for name, us in rows:
        extra = f"  ({us - cpp_us:+.3f} us over C++)" if cpp_us is not None else ""
        print(f"  {name:52s} {us:8.3f} us{extra}")
    if cpp_us is not None:
        verdict = "met" if rows[0][1] - cpp_us <= 2.0 else "NOT met"
        print(f"target: the prepared Operation from Python within 2 us of C++: {verdict} "
              f"({rows[0][1] - cpp_us:+.3f} us)")
    return rows, cpp_us


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, nargs="+", default=[4096, 250000])
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--cpp", default=str(Path(__file__).resolve().parents[2] / "build" / "bench_api"))
    a = p.parse_args()
    for n in a.n:
        bench(n, a.batch, a.batches, a.cpp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
