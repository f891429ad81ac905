// The sort family's segmented sort Workload: the keys (and values) on the host and the device,
// the segments' offsets (segmented_launcher.hpp's segment_offsets), the CPU reference
// (host_segmented.hpp) and the element-by-element check. No library baseline in the plugin yet.
#pragma once
#include <memory>

#include "segmented_launcher.hpp"

namespace gpuk::sort {

std::unique_ptr<Workload> make_segmented_workload(InputView keys, Op op, const KeyOrder& order, DType values,
                                                  const SegmentSpec& spec);

}  // namespace gpuk::sort
