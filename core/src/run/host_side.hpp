// The host side of a run, made before any GPU is touched: the input generated (or read), the
// family's workload and its CPU reference answer. A sweep over several GPUs makes it once, in the
// parent before it forks its workers; each worker inherits it (copy-on-write) and only uploads,
// instead of generating the input and computing the reference again (tune/workers/pool.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "data/data.hpp"
#include "plugin/plugin.hpp"

namespace gpuk {

struct RunSpec;

// The run's input as its spec says: read from its data file or generated, checked against the
// spec's dtype and size (ConfigError naming the file otherwise). Bench::make reads it so too.
HostArray run_input(const RunSpec& spec);

// The family's workload of a run on its input (run_input): the
// plugin sees the run's Problem and a view of the input, which the workload shares; a ConfigError
// it throws gains the config's name. With `pin_note`, the input is page-locked first, so that its
// upload runs at the bus's speed (pageable memory goes through the driver's staging buffers at a
// fraction of it); where locking fails the run goes on, pageable, and `pin_note` says why
// (HostArray::pin; empty when it was locked).
std::unique_ptr<Workload> make_run_workload(const RunSpec& spec, const FamilyPlugin& plugin,
                                            std::string* pin_note = nullptr);

struct HostSide {
  std::unique_ptr<Workload> workload;  // made from the input, its CPU reference computed; not uploaded
  double data_seconds = 0;             // the input generated (or read) and the workload made
  double reference_seconds = 0;        // its CPU reference (one repeat)
};

// Refuses a run whose host arrays do not fit (refuse_if_host_memory_short), then makes its host
// side. The work runs on a thread of its own, joined before this returns: the input generators
// and some references use OpenMP, whose thread pool (GNU libgomp) does not survive fork(), so a
// process that forks afterwards must not have used OpenMP on its own thread (the child's first
// parallel region would wait forever for threads that were not copied).
HostSide make_host_side(const RunSpec& spec, const FamilyPlugin& plugin);

// Throws Error with the bytes needed and the bytes available when the family's host arrays for
// `spec` (FamilyPlugin::host_bytes) do not fit in available_host_memory().
void refuse_if_host_memory_short(const RunSpec& spec, const FamilyPlugin& plugin);
// The same with the family's host bytes asked already (FamilyParts::host_bytes, plugin/edge.hpp).
void refuse_if_host_memory_short(const RunSpec& spec, std::uint64_t needed);

}  // namespace gpuk
