// The sort family's top-k Workload: a run's keys on the host and the device, its CPU reference
// (host_topk.hpp) and the element-by-element check. No library baseline in the plugin: CUB's
// DeviceTopK is in CCCL 3.3 and later, newer than the toolkit's; tools/bench/bench_topk.sh builds
// it against the newest CCCL's headers.
#pragma once
#include <memory>

#include "topk_launcher.hpp"

namespace gpuk::sort {

std::unique_ptr<Workload> make_topk_workload(InputView keys, const KeyOrder& order, const TopKSpec& spec);

}  // namespace gpuk::sort
