#!/usr/bin/env python3
"""argmax of a PyTorch tensor with gpuk: the fastest verified variant for this GPU and size,
zero-copy on the tensor's memory (DLPack / __cuda_array_interface__), checked against torch.

    python examples/python/argmax_torch.py [N]
"""
import sys

import gpuk

# Without PyTorch on a GPU, or without a GPU: one line, and 77 (skipped, as the C++ examples say).
try:
    import torch
    gpuk.device_info()
except (ImportError, gpuk.NoDeviceError) as e:
    print(f"argmax_torch.py: skipped: {'PyTorch is not installed' if isinstance(e, ImportError) else e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("argmax_torch.py: skipped: this PyTorch sees no CUDA GPU")
    sys.exit(77)

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
x = torch.randn(n, device="cuda")

best = gpuk.reduce.argmax(x)                  # waits for the answer: (value, index)
print(f"argmax of {n} float32: value {best.value:.6f} at index {best.index}")

# What ran, and why (the report's `chosen` line of `gpuk run`):
op = gpuk.default_engine().prepare("reduce", "argmax", "float32", n)
print(f"variant {op.variant}\nchosen  {op.chosen}")

# Asynchronously, on PyTorch's stream, into a tensor of the caller's ({float32 value; int64 index}):
out = torch.empty(2, dtype=torch.int64, device="cuda")
stream = torch.cuda.current_stream()
op(x, out=out, stream=stream)                 # returns at once
index = int(out[1])                           # PyTorch orders this read after gpuk's launch

expected = int(torch.argmax(x))
ok = best.index == expected and index == expected and best.value == float(x[expected])
print("ok" if ok else f"WRONG: torch.argmax says {expected}")
sys.exit(0 if ok else 1)
