#!/usr/bin/env python3
"""A CuPy sort on a CuPy stream with gpuk: the keys are made on the stream, gpuk sorts them on
the same stream into a CuPy array (no copy, no host wait), and CuPy checks the result.

    python examples/python/sort_cupy_stream.py [N]
"""
import sys

import gpuk

# Without CuPy, or without a GPU: one line, and 77 (skipped, as the C++ examples say).
try:
    import cupy as cp
    gpuk.device_info()
except (ImportError, gpuk.NoDeviceError) as e:
    print(f"sort_cupy_stream.py: skipped: {'CuPy is not installed' if isinstance(e, ImportError) else e}")
    sys.exit(77)

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
stream = cp.cuda.Stream(non_blocking=True)
with stream:
    keys = cp.random.randint(0, 2**31 - 1, n, dtype=cp.int32)
    values = cp.arange(n, dtype=cp.uint32)
    out = cp.empty_like(keys)
    gpuk.sort.keys(keys, out=out, stream=stream, order="descending")   # enqueued on `stream`
    sorted_keys, carried = gpuk.sort.pairs(keys, values, stream=stream)  # new CuPy arrays
    expected = cp.sort(keys)[::-1]
stream.synchronize()

ok = bool(cp.array_equal(out, expected)) and bool(cp.array_equal(sorted_keys, cp.sort(keys)))
ok = ok and bool(cp.array_equal(keys[carried], sorted_keys))  # each value is its key's old index
print(f"sorted {n} int32 keys on a CuPy stream: {'ok' if ok else 'WRONG'}")
sys.exit(0 if ok else 1)
