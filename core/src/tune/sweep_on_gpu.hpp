// One process's part of a sweep on the GPU: what `gpuk tune` runs in a child process, the tuning
// matrix per cell, and the GPU tests.
#pragma once
#include "tune/measure/sweep_options.hpp"
#include "tune/sweep/space.hpp"
#include "tune/sweep/sweep.hpp"

namespace gpuk {

struct RunContext;
class Device;

// One process's part of a sweep of `space` for `t` on `device`: refuses a run that does not fit
// (before any data exists: the data, the family's buffers, the L2 flush buffer), uploads the
// data once, measures with the GPU measurer (bulk compile) and ranks. When a variant took the
// CUDA context down, report.result.context_lost is set: go on in a fresh
// process. With a journal, every measured point is appended to it as it is measured and what it
// has for this sweep is taken instead of measured (report.result.reused counts those of other
// runs).
TuneReport sweep_on_gpu(const TuneSpec& t, const Space& space, const RunContext& context, Device& device,
                        const SweepOptions& options);

}  // namespace gpuk
