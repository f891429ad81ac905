"""The CUDA toolkit's CCCL headers (cub, thrust, cuda/std, nv) for a kernel that includes them, as
Kernel Tuner's CUDA backends see them (nvcc finds them itself; its NVRTC backend adds
CUDA_HOME/include). gpuk compiles with NVRTC, which reads only the include folder of the kernels
directory: the headers are linked there. `<cub/cub.cuh>` includes CUB's device-wide algorithms,
which are host code NVRTC cannot compile ("A function explicitly marked as a __host__ function is
not allowed in JIT mode"); it is given as the block, warp and thread levels of the toolkit's own
cub.cuh, which is what a kernel can use (Kernel Tuner's expdist example: cub::BlockReduce)."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import List, Optional

CCCL_LIBRARIES = ("cub", "thrust", "cuda", "nv")
_INCLUDES_CCCL = re.compile(r"(?m)^\s*#\s*include\s*[<\"](?:" + "|".join(CCCL_LIBRARIES) + r")/")
_DEVICE_CODE = ("/block/", "/warp/", "/thread/")


def includes_cccl(codes: List[str]) -> bool:
    return any(_INCLUDES_CCCL.search(c) for c in codes)


def _nvrtc_toolkit() -> Optional[Path]:
    """The toolkit of the NVRTC this process loaded (gpuk's), from its library's folder."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "/libnvrtc.so" in path:
                    return Path(path).resolve().parent.parent
    except OSError:
        pass
    return None


def cccl_dir() -> Optional[Path]:
    """The folder holding cub/, thrust/ and cuda/: CUDA_HOME, CUDA_PATH or CUDA_ROOT's include
    (Kernel Tuner's rule), else the toolkit of gpuk's NVRTC; include/cccl where CUDA 13 keeps
    them. None when none has cub."""
    homes = [Path(os.environ[v]) for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT") if os.environ.get(v)]
    toolkit = _nvrtc_toolkit()
    if toolkit is not None:
        homes.append(toolkit)
    for home in homes:
        for include in (home / "include" / "cccl", home / "include"):
            if (include / "cub" / "cub.cuh").is_file():
                return include
    return None


def link_cccl(include: Path) -> bool:
    """`include/` made to hold the toolkit's CCCL libraries (links) and cub/cub.cuh's device-code
    part; False when no toolkit with CCCL is found."""
    source = cccl_dir()
    if source is None:
        return False
    include.mkdir(exist_ok=True)
    for library in CCCL_LIBRARIES:
        if library != "cub" and (source / library).is_dir():
            (include / library).symlink_to(source / library, target_is_directory=True)
    cub = include / "cub"
    cub.mkdir()
    for entry in (source / "cub").iterdir():
        if entry.name != "cub.cuh":
            (cub / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    umbrella = (source / "cub" / "cub.cuh").read_text().splitlines()
    lines = [line for line in umbrella if line.startswith("#include") and any(d in line for d in _DEVICE_CODE)]
    (cub / "cub.cuh").write_text("// the device-code part of the toolkit's cub/cub.cuh (NVRTC compiles no host code)\n"
                                 "#pragma once\n" + "\n".join(lines) + "\n")
    return True
