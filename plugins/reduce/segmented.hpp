// Segmented and per-channel reductions (layout.hpp): their launches, their runs' workloads and
// their CPU references. Internal to the plugin.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layout.hpp"
#include "reducer.hpp"

namespace gpuk::reduce {

inline Op op_named(const std::string& name) { return table_parse(kOps, name, "reduce").op; }

// One answer on the device: a sum's 64-bit accumulator, else {value; int64 index at byte 8}.
inline std::uint64_t result_bytes(Op op) { return op == Op::sum ? 8 : 16; }

// The launches of a segmented (arrays: input, begin offsets, end offsets, results) or per-channel
// (arrays: input, results) problem.
std::unique_ptr<Launcher> make_layout_launcher(const Problem& problem, const Layout& layout);

// A run of a segmented or per-channel config: generated offsets, CPU reference per segment or
// channel, cub::DeviceSegmentedReduce as the baseline.
std::unique_ptr<Workload> make_layout_workload(const Problem& problem, const Layout& layout, InputView input);

// The host memory such a run holds at its peak.
std::uint64_t layout_host_bytes(const Problem& problem, const Layout& layout);

// The CPU references (Reducer's).
std::vector<Answer> segments_on_cpu(const HostArray& input, const std::vector<std::int64_t>& begin,
                                    const std::vector<std::int64_t>& end, Op op, bool abs);
std::vector<Answer> channels_on_cpu(const HostArray& input, std::int64_t channels, Op op, bool abs);

}  // namespace gpuk::reduce
