// Compiles in a child process, for a process that must never initialise CUDA: NVRTC 13 calls
// cuInit in the process that compiles (even for CUBIN of a named architecture), and a process
// forked after that cannot use the GPU (its cuInit answers CUDA_ERROR_NOT_INITIALIZED). The
// parent of a pooled sweep forks its workers, and forks them again after a fault, while its
// compile wave runs: each of its programs is compiled in a child of its own, which leaves the
// result in the compile cache, and the parent takes it from there (a cache hit calls no NVRTC).
#pragma once
#include <string>
#include <vector>

#include "jit/jit.hpp"

namespace gpuk {

// As jit.compile(file, names), the NVRTC work done in a forked child. `from_cache` says whether
// the child found the program in the cache. A compile error is thrown as the child's CompileError
// (its message cut at 32 KiB); a child that dies is an Error. Needs a Jit with a compile cache.
CompiledKernels compile_in_child(const Jit& jit, const KernelFile& file, const std::vector<std::string>& names);

}  // namespace gpuk
