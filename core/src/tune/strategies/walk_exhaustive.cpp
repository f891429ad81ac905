// The exhaustive strategy: every runnable point of the space, in order (up to the budget of
// evaluations, when one is set).
#include "gpuk/error.hpp"
#include "strategies.hpp"

namespace gpuk::detail {

void walk_exhaustive(Sweep& sweep) {
  const Space& space = sweep.space();
  const std::uint64_t size = space.size();
  if (size > 1000000)
    throw ConfigError("the space has " + std::to_string(size) +
                      " points; an exhaustive sweep takes at most 1,000,000: narrow params, or use strategy "
                      "random or anneal with a budget");
  const auto& budget = sweep.options().evaluations;
  std::vector<Candidate> todo;
  for (std::uint64_t i = 0; i < size; ++i) {
    if (budget && todo.size() >= static_cast<std::size_t>(*budget)) break;
    const Candidate c = space.at(i);
    if (sweep.runnable(c)) todo.push_back(c);
  }
  sweep.measure_in_order(todo);
}

}  // namespace gpuk::detail
