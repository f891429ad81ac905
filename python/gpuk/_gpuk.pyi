# Type stubs of gpuk._gpuk, the native module: its tuning call (the rest of the module is reached
# through the gpuk package, whose stubs are __init__.pyi).
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypedDict, Union

import numpy as np

HostArray = Any  # a NumPy array or scalar, anything numpy.ascontiguousarray reads, or a device array
                 # with __cuda_array_interface__ (copied to the host)

class TunedVariant(TypedDict):
    params: Dict[str, int]
    kernel: str
    time: float                # ms: the median of the timed runs (0 unless status is "ok")
    times: List[float]         # ms: every timed run
    metrics: Dict[str, float]  # the declaration's metrics and "GB/s"
    status: str                # "ok", "wrong answer", "pruned", "compile error", "does not fit",
                               # "launch failed", "faulted", "timed out"
    reason: str                # why it failed, or how it was verified
    verified: Optional[bool]   # None: it did not run far enough to be verified
    registers: int             # per thread, -1 when not known
    compile_time: float        # ms, the sweep's compile wall time shared out per compiled variant
    verification_time: float   # ms, the sweep's verification time shared out per verified variant
    benchmark_time: float      # ms, the timed runs summed

class TuneDevice(TypedDict):
    name: str
    arch: str
    sm_count: int
    peak_bandwidth_gbs: float
    nvrtc: str
    devices: List[str]         # "GPU 0", ...: the GPUs that measured

class TuneCompile(TypedDict):
    programs: int
    from_cache: int
    seconds: float             # NVRTC time summed over the compile threads

class TuneResult(TypedDict):
    results: List[TunedVariant]   # in the order evaluated, pruned points included
    ranking: List[int]            # indices of the ok results, best first
    best: Optional[int]           # ranking[0], None when no variant passed
    device: TuneDevice
    notes: List[str]              # "no answer given: verified against the first variant's outputs (...)", ...
    strategy: str
    objective: str
    wall_seconds: float
    compile: TuneCompile
    journal: Optional[str]        # the journal file
    stop_reason: Optional[str]    # why the GPU could not go on, when it could not

def tune_kernel(config: Dict[str, Any], arrays: Mapping[str, HostArray], answers: Mapping[str, Optional[HostArray]],
                constants: Mapping[str, HostArray],
                verify: Optional[Callable[[Dict[str, np.ndarray], Dict[str, np.ndarray]], Union[bool, Tuple[bool, str]]]],
                journal: Optional[str], devices: Optional[Sequence[int]], quiet: bool) -> TuneResult:
    """One sweep of a declared kernel by gpuk's tuner (gpuk/tuning.hpp, docs/api.md "Tuning from C++").

    config: a declared tune config's keys (docs/declared.md), `points:` (the only parameter points
    allowed, each a dict of every parameter; the constraints still apply), and `kernel_dirs` (folders
    of kernel files besides the built-in ones; not a config key). arrays: input arrays by argument
    name (over the config's data:). answers: expected outputs by name, None for an output not
    compared; {} with no reference in the config: every variant is verified against the first
    variant's outputs (said in notes). constants: __constant__ data by symbol name. verify(expected,
    got): dicts of read-only NumPy arrays by output name; returns a bool or (bool, message); it
    replaces the comparison and runs in the worker process that measured the variant (a variant
    whose outputs are byte for byte those of the first one it passed is passed without a call). journal: a
    directory; a sweep run again with the same data goes on from it. devices: GPU ordinals (None:
    GPU 0). The GIL is released while tuning. Raises gpuk.ConfigError for a config or data the sweep
    cannot take, gpuk.NoDeviceError without a GPU."""
