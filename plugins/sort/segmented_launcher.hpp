// The sort family's segmented sort Launcher (docs/kernels/sort.md, "Segmented sort").
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "host_segments.hpp"

namespace gpuk::sort {

std::unique_ptr<Launcher> make_segmented_launcher(const Problem& problem);

}  // namespace gpuk::sort
