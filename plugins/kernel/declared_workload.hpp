// The declared-kernel family's device and host sides (docs/declared.md): a Launcher that passes
// each launch the arguments its plan resolved, and a Workload over the data of each argument.
#pragma once
#include <memory>

#include "kernel/declaration.hpp"
#include "plugin/plugin.hpp"

namespace gpuk::declared {

// The sizes of a declared problem's arrays: elements of each, by the declaration's lengths.
std::uint64_t array_length(const Problem& problem, const DeclaredArg& arg);

std::unique_ptr<Workload> make_declared_workload(const Problem& problem, InputView input);

}  // namespace gpuk::declared
