// A declared kernel's outputs checked by the caller's function (RunSpec::output_check, from the
// library's tuning call gpuk/tuning.hpp) instead of element by element: the family's Workload
// wrapped, its outputs downloaded once more to the host for the check. Everything else is the
// family's own.
#pragma once
#include <memory>

#include "config/config.hpp"
#include "plugin/plugin.hpp"

namespace gpuk {

// `inner`, with verify() asking spec.output_check; keep_as_reference() keeps the outputs as the
// expected ones where the spec gives none (spec.expected_arrays).
std::unique_ptr<Workload> checked_by(const RunSpec& spec, std::unique_ptr<Workload> inner);

}  // namespace gpuk
