// What a run of a declared kernel (docs/declared.md) adds to the road of the three families,
// all on the run's Bench: the reference kernel run once on the same inputs (its outputs become
// the expected answer), a baseline kernel timed on them, and the declaration's metrics.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run/runner.hpp"

namespace gpuk {

// A kernel of the run's family as a variant ready on `bench`'s device: named by `kernel`
// (`params`, else its defaults), planned for the run's problem, compiled with the Runtime's JIT.
// Its arrays must be the run's kernel's, in order, by name, dtype and length.
PreparedRun prepare_other_kernel(const RunSpec& spec, const std::string& kernel,
                                 const std::map<std::string, std::int64_t>& params, const Runtime& runtime,
                                 Device& device);

// The reference kernel run once on the bench (outputs poisoned, in-out arrays restored first),
// its outputs downloaded and kept by the workload as the expected answer. Where its params do not
// compile, each of spec.reference_fallbacks is tried in turn (the first's error if none does).
void run_reference_kernel(const RunSpec& spec, const Runtime& runtime, Device& device, Bench& bench);

// The reference kernel compiled into the Runtime's on-disk cache for a GPU described by `info`,
// without a device, by a compile process (NVRTC starts CUDA in the process that calls it): what a
// sweep's parent does while its worker starts CUDA, so that the worker's run_reference_kernel
// finds it compiled. Nothing without a reference, a cache or compile processes; an error is left
// for the worker to meet and report.
class NvrtcProcesses;
void compile_reference_ahead(const RunSpec& spec, const Runtime& runtime, const DeviceInfo& info,
                             NvrtcProcesses* processes);

// The baseline kernel timed on the bench, as the run's kernel is (a sweep's variants with the
// L2 flushed before each timed run: `flush_l2`): each repeat's time, or their statistics. The
// Bench is left bound to the baseline's scratch.
BaselineTiming baseline_kernel_times(const RunSpec& spec, const Runtime& runtime, Device& device, Bench& bench,
                                     bool flush_l2 = false);
NamedStats time_baseline_kernel(const RunSpec& spec, const Runtime& runtime, Device& device, Bench& bench);

// The report's data line: for a declared kernel, every input array's data by name (each has its
// own: the config's data: sets it), the first's in the summary's own fields; else the run's data.
DataSummary run_data_summary(const RunSpec& spec);

// The declaration's metrics for a kernel median of `median_ms`, in order.
std::vector<std::pair<std::string, double>> declared_metrics(const RunSpec& spec, const Variant& variant,
                                                             double median_ms);

}  // namespace gpuk
