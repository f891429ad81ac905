// argminmax of one contiguous array: the smallest and the largest candidate in one pass (the
// kernels' MinMax: the argmin candidate at byte 0, the argmax candidate at byte 16). Its workload
// (verified against the CPU reference, timed against CUB's ArgMin and ArgMax) and its CPU answer.
// Internal to the plugin.
#pragma once
#include <memory>
#include <utility>

#include "gpuk/reduce.hpp"
#include "plugin/plugin.hpp"

namespace gpuk::reduce {

// The device result of argminmax: two 16-byte candidates.
constexpr std::uint64_t kPairResultBytes = 32;

std::unique_ptr<Workload> make_pair_workload(const Problem& problem, InputView input);

// The CPU reference: what argmin and argmax return apart (ties to the lowest index, a NaN wins).
std::pair<Answer, Answer> pair_on_cpu(const HostArray& input, bool abs);

}  // namespace gpuk::reduce
