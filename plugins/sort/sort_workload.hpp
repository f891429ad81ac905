// The sort family's Workload: a run's keys (and values) on the host and the device, its stable
// CPU reference, the element-by-element check, and CUB's radix sort as the library baseline.
#pragma once
#include <memory>

#include "sort_launcher.hpp"

namespace gpuk::sort {

// For `op` on `keys` (held by the caller while the workload lives) in `order`; `value` is the
// values' (or argsort's indices') dtype.
std::unique_ptr<Workload> make_sort_workload(InputView keys, Op op, const KeyOrder& order, DType value);

}  // namespace gpuk::sort
