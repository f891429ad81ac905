// lower_bound and upper_bound in the search plugin: their options, launches and runs
// (bounds.cpp; the host semantics are bounds_reference.hpp).
#pragma once
#include <memory>
#include <string>

#include "plugin/plugin.hpp"
#include "plugin/problem.hpp"

namespace gpuk::search {

// An option that is absent from a problem while at its default (omitted_at_default, so that the
// other operations keep their tuning keys): its value, or `fallback`.
std::string option_or(const Problem& p, const std::string& name, const char* fallback);

// Throws ConfigError when `needles` / `needle_count` do not fit the problem (the caller adds the
// config's name); for an operation that is not a bound, refuses them unless at their defaults.
void check_bounds_options(const Problem& problem, bool bounds);
std::uint64_t needle_count(const Problem& problem);
bool sorted_needles(const Problem& problem);

std::unique_ptr<Launcher> make_bounds_launcher(const Problem& problem);
std::unique_ptr<Workload> make_bounds_workload(const Problem& problem, InputView input);

}  // namespace gpuk::search
