#!/usr/bin/env python3
"""The Python package's host overhead per call, beside tools/bench/bench_api.cpp (the C++ figure).

For argmax of n float32 (the onepass kernel, metadata defaults; bench_api.cpp's rows run the
variant the lookup picks for n, onepass with tuned parameters at these sizes: the host side of a
call is the same), the host time one call takes to enqueue, timed as bench_api.cpp times it
(there, three trials of its rows taken in turn; its first Operation::launch line is the one read
here): batches of launches enqueued without waiting, the median batch divided by its size, the
stream drained between batches. Rows:
  - Operation.launch([ptr_in, ptr_out], n, stream): the prepared operation on device pointers,
  - op(x, out=best, stream=s): the prepared operation on arrays, through __cuda_array_interface__
    (a gpuk.DeviceArray) and through DLPack alone: _gpuk.DLPackArray over the same memory (gpuk's
    C++ producer, DeviceArray's base: __dlpack__ and __dlpack_device__ written in C++, as a
    framework's are), and, for scale, a producer written in Python (a Python __dlpack__ making the
    capsule with _gpuk.dlpack_capsule, behind a wrapper: what this row measured before),
  - gpuk.reduce.argmax(x, out=best, stream=s): the family function (its Operation found per call),
    through either protocol,
  - the same on PyTorch tensors and CuPy arrays where they are installed (torch.argmax for scale),
and a breakdown: the Python calls each row makes (sys.setprofile), the time to read and check
both arrays without launching (an out= too small: read, refused, handed to the general path
unlaunched... measured through Operation.call_arrays) and the driver's launch (Operation.launch).
The C++ figure, gpuk::Operation::launch, is timed in this process (a C++ loop in the module,
Operation.launch_repeated: the same clock, placement and caches as the Python rows), and by
build/bench_api (or --cpp PATH) in its own process, which can read a microsecond apart from run to
run; the rows are compared with the first. Targets (issue 37): the
pointer path within 1.5 us of C++'s Operation::launch, a prepared operation on arrays within
3 us, the family function within 5 us. Every answer is checked against NumPy.

  tools/bench/bench_api.py [--n 4096 250000] [--batch 100] [--batches 200] [--cpp build/bench_api]
                           [--cpp-declared build/bench_declared]
  tools/bench/bench_api.py --no-gpu      (any machine: what reading one array costs the array path)

Then a declared kernel (issue 34; tests/declared/kernels' scale2d, 1000 x 300 float32, block 64 x 2,
as build/bench_declared runs it in C++: a bare cuLaunchKernel and gpuk::Operation::launch): its
Operation's launch on pointers, and gpuk.Kernel called on arrays through either protocol (the
shapes' Operation found in C++), the answer checked. Target: within 3 us of the C++ call.

Run it with PYTHONPATH naming another copy of the package's .py files (over the same module) to
measure another Python layer in the same way (docs/python.md's before/after).
"""
import argparse
import collections
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGETS = {"pointers": 1.5, "arrays": 3.0, "family": 5.0}
REPO = Path(__file__).resolve().parents[2]


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


def batch_us(call_batch, sync, batch, batches):
    """As per_call_us for a call that makes a whole batch of calls itself (a C++ loop)."""
    samples = []
    for b in range(batches + 1):
        start = time.perf_counter()
        call_batch(batch)
        stop = time.perf_counter()
        sync()
        if b:
            samples.append((stop - start) / batch * 1e6)
    return statistics.median(samples)


def cpp_here_us(op, ptrs, n, s, sync, batch, batches):
    """gpuk::Operation::launch in a C++ loop (Operation.launch_repeated), timed from this process:
    the C++ figure beside the Python rows, without another process's clock, placement and caches."""
    if not hasattr(op, "launch_repeated"):
        return None
    return batch_us(lambda count: op.launch_repeated(ptrs, n, s, count), sync, batch, batches)


def python_calls(call):
    """The Python functions and C functions one call enters (after a first call)."""
    call()
    counts = collections.Counter()

    def profile(frame, event, arg):
        if event == "call":
            counts["python"] += 1
        elif event == "c_call":
            counts["c"] += 1

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return counts["python"], counts["c"] - 1  # less setprofile itself


def cpp_launch_us(cpp, n, batch, batches):
    out = subprocess.run([str(cpp), str(n), str(batch), str(batches)], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        return None, out.stderr.strip()
    m = re.search(r"gpuk::Operation::launch\s+([\d.]+) us", out.stdout)
    return (float(m.group(1)) if m else None), out.stdout


class PythonDLPack:
    """DLPack alone from a producer written in Python: the capsule made by _gpuk.dlpack_capsule in a
    Python __dlpack__ that orders the producer's stream as the protocol asks (gpuk.DeviceArray's
    own __dlpack__ until it moved to C++), behind a wrapper (this benchmark's producer before)."""

    def __init__(self, memory, dtype, shape, stream):
        self.memory, self.shape, self.stream = memory, list(shape), stream
        dt = np.dtype(dtype)
        self.code, self.bits = {"i": 0, "u": 1, "f": 2}[dt.kind], dt.itemsize * 8

    def __dlpack_device__(self):
        return (2, self.memory.device)

    def __dlpack__(self, stream=None, **kwargs):
        if stream is not None and stream != -1:
            consumer = 0 if stream == 1 else int(stream)
            if consumer != self.stream:
                _gpuk.order_streams(self.memory.device, self.stream, consumer)
        return _gpuk.dlpack_capsule(self.memory.ptr, self.code, self.bits, self.shape, 2, self.memory.device,
                                    self.memory)


class Wrapped:
    """An array seen through DLPack alone, one Python call deeper (the wrapper this benchmark used)."""

    def __init__(self, a):
        self.a = a

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__(stream=stream)


def frameworks():
    found = {}
    try:
        import torch
        if torch.cuda.is_available():
            found["torch"] = torch
    except ImportError:
        pass
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        found["cupy"] = cupy
    except Exception:
        pass
    return found


def bench(n, batch, batches, cpp):
    engine = gpuk.default_engine()
    info = engine.device_info()
    op = engine.prepare("reduce", "argmax", "float32", n, kernel="onepass")
    host = ((np.arange(n, dtype=np.uint64) * 2654435761) % 1000003).astype(np.float32) - 500000
    expected = int(np.argmax(host))
    x_mem = _gpuk.DeviceMemory(engine.device, host.nbytes)
    x_mem.upload_from(host.ctypes.data, host.nbytes, 0)
    best_mem = _gpuk.DeviceMemory(engine.device, 16)
    found = frameworks()
    torch, cupy = found.get("torch"), found.get("cupy")
    stream_obj = torch.cuda.Stream() if torch else None
    s = stream_obj.cuda_stream if torch else 0
    # Arrays written on the benchmark's stream, as __cuda_array_interface__ says.
    x = gpuk.DeviceArray(x_mem, "float32", (n,), s)
    best = gpuk.DeviceArray(best_mem, "int64", (2,), s)
    sync = lambda: _gpuk.synchronize(engine.device, s)  # noqa: E731
    _gpuk.synchronize(engine.device, 0)

    def check(label):
        sync()
        got = best.numpy()[1]
        assert got == expected, f"{label}: argmax {got}, expected {expected}"
        best_mem.upload_from(np.full(2, -1, np.int64).ctypes.data, 16, s)
        sync()

    ptrs = [x_mem.ptr, best_mem.ptr]
    rows = []  # (name, kind, call)
    rows.append(("Operation.launch (device pointers)", "pointers", lambda: op.launch(ptrs, n, s)))
    rows.append(("op(x, out=best, stream=s) (CAI)", "arrays", lambda: op(x, out=best, stream=s)))
    # DLPack alone: gpuk's C++ producer over the same memory (written on s, as x and best are).
    dx = _gpuk.DLPackArray(x_mem, x_mem.ptr, 2, 32, [n], engine.device, s)
    dbest = _gpuk.DLPackArray(best_mem, best_mem.ptr, 0, 64, [2], engine.device, s)
    rows.append(("op(x, out=best, stream=s) (DLPack)", "arrays", lambda: op(dx, out=dbest, stream=s)))
    px, pbest = Wrapped(PythonDLPack(x_mem, "float32", (n,), s)), Wrapped(PythonDLPack(best_mem, "int64", (2,), s))
    rows.append(("op(x, out=best, stream=s) (DLPack, a Python producer)", None,
                 lambda: op(px, out=pbest, stream=s)))
    rows.append(("gpuk.reduce.argmax(x, out=best, stream=s) (CAI)", "family",
                 lambda: gpuk.reduce.argmax(x, out=best, stream=s)))
    rows.append(("gpuk.reduce.argmax(x, out=best, stream=s) (DLPack)", "family",
                 lambda: gpuk.reduce.argmax(dx, out=dbest, stream=s)))
    frame = []  # the frameworks' rows: their own best arrays, checked separately
    if torch:
        xt = torch.from_numpy(host).cuda()
        bt = torch.empty(2, dtype=torch.int64, device="cuda")
        torch.cuda.synchronize()
        frame.append(("op(tensor, out=tensor, stream=s) (PyTorch)", "arrays", lambda: op(xt, out=bt, stream=s),
                      lambda: int(bt[1])))
        frame.append(("gpuk.reduce.argmax(tensor, out=tensor, stream=s) (PyTorch)", "family",
                      lambda: gpuk.reduce.argmax(xt, out=bt, stream=s), lambda: int(bt[1])))
    if torch:
        torch.cuda.set_stream(stream_obj)  # PyTorch's work on the benchmark's stream
    if cupy:
        # CuPy's __cuda_array_interface__ names its current stream: the benchmark's, so that gpuk
        # orders nothing (another stream would cost an event per call, as the protocol asks).
        (cupy.cuda.ExternalStream(s) if s else cupy.cuda.Stream.null).use()
        xc = cupy.asarray(host)
        bc = cupy.empty(2, dtype=cupy.int64)
        cupy.cuda.runtime.deviceSynchronize()
        frame.append(("op(cupy, out=cupy, stream=s) (CuPy)", "arrays", lambda: op(xc, out=bc, stream=s),
                      lambda: int(bc[1])))
        frame.append(("gpuk.reduce.argmax(cupy, out=cupy, stream=s) (CuPy)", "family",
                      lambda: gpuk.reduce.argmax(xc, out=bc, stream=s), lambda: int(bc[1])))

    results = []
    for name, kind, call in rows:
        try:
            call()
            check(name)
            results.append((name, kind, per_call_us(call, sync, batch, batches), python_calls(call)))
            check(name)
        except Exception as e:  # another Python layer may lack a protocol (the old DeviceArray had no DLPack)
            results.append((name, kind, None, f"{type(e).__name__}: {e}"))
    for name, kind, call, read in frame:
        try:
            call()
            sync()
            assert read() == expected, f"{name}: wrong argmax"
            results.append((name, kind, per_call_us(call, sync, batch, batches), python_calls(call)))
        except Exception as e:
            results.append((name, kind, None, f"{type(e).__name__}: {e}"))
    if torch:
        with torch.cuda.stream(stream_obj):
            results.append(("torch.argmax(tensor) (for scale)", None,
                            per_call_us(lambda: torch.argmax(xt), sync, batch, batches), None))
    assert gpuk.reduce.argmax(x).index == expected

    # The breakdown of the array path: reading and checking both arrays without a launch (an out=
    # too small is read, refused and handed back unlaunched), and the launch alone.
    breakdown = []
    if hasattr(op, "_call_arrays"):
        small = gpuk.DeviceArray(_gpuk.DeviceMemory(engine.device, 8), "int64", (1,), s)
        assert op._call_arrays((x,), small, s, engine.device) is NotImplemented
        breakdown.append(("  C++: read and check both arrays (CAI), no launch",
                          per_call_us(lambda: op._call_arrays((x,), small, s, engine.device), sync, batch, batches)))
        dsmall = _gpuk.DLPackArray(small._memory, small.ptr, 0, 64, [1], engine.device, s)
        breakdown.append(("  C++: read and check both arrays (DLPack), no launch",
                          per_call_us(lambda: op._call_arrays((dx,), dsmall, s, engine.device), sync, batch, batches)))
        psmall = Wrapped(PythonDLPack(small._memory, "int64", (1,), s))
        breakdown.append(("  C++: read and check both arrays (DLPack, a Python producer), no launch",
                          per_call_us(lambda: op._call_arrays((px,), psmall, s, engine.device), sync, batch, batches)))
    breakdown.append(("  the producer: x.__cuda_array_interface__", per_call_us(
        lambda: x.__cuda_array_interface__, sync, batch, batches)))
    ds = s if s else 1
    breakdown.append(("  the producer: __dlpack_device__(), __dlpack__(stream=s) (C++; the capsule freed)",
                      per_call_us(lambda: (dx.__dlpack_device__(), dx.__dlpack__(stream=ds)), sync, batch, batches)))
    breakdown.append(("  the producer: the same, a Python producer behind a wrapper", per_call_us(
        lambda: (px.__dlpack_device__(), px.__dlpack__(stream=ds)), sync, batch, batches)))

    here_us = cpp_here_us(op._native, ptrs, n, s, sync, batch, batches)
    check("C++ loop")
    other_us, cpp_out = cpp_launch_us(cpp, n, batch, batches) if cpp and Path(cpp).exists() else (None, "no C++ bench")
    # The reference: the C++ call timed from this process where the module has the loop.
    cpp_us = here_us if here_us is not None else other_us
    print(f"argmax of {n} float32 on {info['name']}, variant {op.variant}; host time per call "
          f"(median of {batches} batches of {batch}); Python layer {Path(gpuk.__file__).parent}:")
    if here_us is not None:
        print(f"  {'C++ gpuk::Operation::launch, this process (a C++ loop)':62s} {here_us:8.3f} us")
    if other_us is not None:
        print(f"  {'C++ gpuk::Operation::launch, build/bench_api (its process)':62s} {other_us:8.3f} us")
    elif cpp_us is None:
        print(f"  C++ figure missing: {cpp_out}")
    verdicts = []
    for name, kind, us, calls in results:
        if us is None:
            print(f"  {name:62s}      n/a  ({calls})")
            continue
        extra = f"  ({us - cpp_us:+.3f} us over C++)" if cpp_us is not None else ""
        profile = f"  [{calls[0]} Python calls, {calls[1]} C calls]" if calls else ""
        print(f"  {name:62s} {us:8.3f} us{extra}{profile}")
        if cpp_us is not None and kind in TARGETS:
            verdicts.append((name, us - cpp_us, TARGETS[kind]))
    print("  breakdown:")
    for name, us in breakdown:
        print(f"  {name:62s} {us:8.3f} us")
    for name, over, target in verdicts:
        print(f"target: {name} within {target} us of C++: {'met' if over <= target else 'NOT met'} ({over:+.3f} us)")
    return results, cpp_us


class InterfaceProducer:
    """__cuda_array_interface__ with its dict built once (as gpuk.DeviceArray's)."""

    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (ptr, False), "version": 3,
                                         "strides": None, "stream": 7}


def no_gpu(batch, batches):
    """The array path's reading of one array, without a GPU: a Dispatch with nothing prepared reads
    the first array (pointer never touched) and hands the call back."""
    dispatch = _gpuk.Dispatch(0)
    fake = 0x7F0000000000
    # DLPack from gpuk's C++ producer, written on stream 7 (the call's: no ordering, no driver).
    cai, dl = InterfaceProducer(fake, 4096), _gpuk.DLPackArray(None, fake, 2, 32, [4096], 0, 7)
    idle = lambda: None  # noqa: E731
    print("reading one array in the array path's C++ (no GPU; median of %d batches of %d):" % (batches, batch))
    class Memory:  # what PythonDLPack reads of a _gpuk.DeviceMemory
        ptr, device = fake, 0
    py = Wrapped(PythonDLPack(Memory(), "float32", (4096,), 7))
    rows = [("a loop step alone", idle),
            ("__cuda_array_interface__ (its dict ready)", lambda: dispatch.call((cai,), None, 7)),
            ("DLPack (__dlpack_device__, __dlpack__, the capsule given back)", lambda: dispatch.call((dl,), None, 7)),
            ("  of which the producer (C++): __dlpack_device__ and __dlpack__", lambda: (dl.__dlpack_device__(),
                                                                                           dl.__dlpack__(stream=7))),
            ("DLPack from a Python producer behind a wrapper", lambda: dispatch.call((py,), None, 7)),
            ("  of which the producer (Python)", lambda: (py.__dlpack_device__(), py.__dlpack__(stream=7)))]
    for name, call in rows:
        print(f"  {name:66s} {per_call_us(call, idle, batch, batches):8.3f} us")
    return 0


def cpp_declared_us(cpp):
    out = subprocess.run([str(cpp), str(REPO / "tests" / "declared" / "kernels")], capture_output=True, text=True,
                         timeout=300)
    bare = re.search(r"bare cuLaunchKernel.*?([\d.]+) us", out.stdout)
    launch = re.search(r"gpuk::Operation::launch \(declared\)\s+([\d.]+) us", out.stdout)
    if out.returncode != 0 or not launch:
        return None, None, (out.stdout + out.stderr).strip()
    return float(bare.group(1)), float(launch.group(1)), out.stdout


def bench_declared(batch, batches, cpp):
    """gpuk.Kernel on scale2d, beside bench_declared's C++ figures for the same kernel and sizes."""
    engine = gpuk.default_engine()
    nx, ny = 1000, 300
    k = gpuk.Kernel(REPO / "tests" / "declared" / "kernels" / "kernel" / "scale2d.cu",
                    params={"block_size_x": 64, "block_size_y": 2})
    host = (np.arange(nx * ny) % 1000).astype(np.float32).reshape(ny, nx) * 0.001 - 0.5
    x_mem = _gpuk.DeviceMemory(engine.device, host.nbytes)
    x_mem.upload_from(host.ctypes.data, host.nbytes, 0)
    y_mem = _gpuk.DeviceMemory(engine.device, host.nbytes)
    s = 0
    sync = lambda: _gpuk.synchronize(engine.device, s)  # noqa: E731
    x, y = gpuk.DeviceArray(x_mem, "float32", (ny, nx), s), gpuk.DeviceArray(y_mem, "float32", (ny, nx), s)
    dx = _gpuk.DLPackArray(x_mem, x_mem.ptr, 2, 32, [ny, nx], engine.device, s)
    dy = _gpuk.DLPackArray(y_mem, y_mem.ptr, 2, 32, [ny, nx], engine.device, s)
    op = k.prepare(nx=nx, ny=ny)
    ptrs = [y_mem.ptr, x_mem.ptr]
    want = 0.5 * host
    rows = [("Operation.launch (device pointers)", lambda: op.launch(ptrs, op.max_n, s)),
            ("k(y, x, stream=s) (CAI, gpuk.DeviceArray)", lambda: k(y, x, stream=s)),
            ("k(y, x, stream=s) (DLPack, _gpuk.DLPackArray)", lambda: k(dy, dx, stream=s))]
    results = []
    for name, call in rows:
        y_mem.upload_from(np.zeros_like(host).ctypes.data, host.nbytes, s)
        call()
        sync()
        assert np.array_equal(y.numpy(), want), f"{name}: wrong answer"
        results.append((name, per_call_us(call, sync, batch, batches), python_calls(call)))
    here_us = cpp_here_us(op._native, ptrs, op.max_n, s, sync, batch, batches)
    bare, other_us, cpp_out = cpp_declared_us(cpp) if cpp and Path(cpp).exists() else (None, None, "no C++ bench")
    cpp_us = here_us if here_us is not None else other_us
    print(f"declared kernel scale2d ({op.variant}), nx {nx} ny {ny} float32, every answer verified; host time per "
          f"call (median of {batches} batches of {batch}):")
    if here_us is not None:
        print(f"  {'C++ gpuk::Operation::launch, this process (a C++ loop)':62s} {here_us:8.3f} us")
    if other_us is not None:
        print(f"  {'C++ bare cuLaunchKernel (build/bench_declared, its process)':62s} {bare:8.3f} us")
        print(f"  {'C++ gpuk::Operation::launch (build/bench_declared, its process)':62s} {other_us:8.3f} us")
    elif cpp_us is None:
        print(f"  C++ figure missing: {cpp_out}")
    for name, us, calls in results:
        extra = f"  ({us - cpp_us:+.3f} us over C++)" if cpp_us is not None else ""
        print(f"  {name:62s} {us:8.3f} us{extra}  [{calls[0]} Python calls, {calls[1]} C calls]")
    if cpp_us is not None:
        for name, us, _ in results[1:]:
            over = us - cpp_us
            print(f"target: {name} within 3.0 us of C++: {'met' if over <= 3.0 else 'NOT met'} ({over:+.3f} us)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, nargs="+", default=[4096, 250000])
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--cpp", default=str(REPO / "build" / "bench_api"))
    p.add_argument("--cpp-declared", default=str(REPO / "build" / "bench_declared"))
    p.add_argument("--no-declared", action="store_true", help="leave out the declared kernel's rows")
    p.add_argument("--no-gpu", action="store_true", help="only the array path's reading of one array (no GPU)")
    a = p.parse_args()
    # Imported here, not at the top, so that --help needs neither the package nor NumPy.
    global np, gpuk, _gpuk
    import numpy as np
    import gpuk
    from gpuk import _gpuk
    if a.no_gpu:
        return no_gpu(a.batch, a.batches)
    for n in a.n:
        bench(n, a.batch, a.batches, a.cpp)
    if not a.no_declared:
        bench_declared(a.batch, a.batches, a.cpp_declared)
    return 0


if __name__ == "__main__":
    sys.exit(main())
