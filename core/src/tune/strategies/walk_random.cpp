// The random strategy: a budget of runnable points drawn without repetition (32 by default).
#include <unordered_map>

#include "strategies.hpp"

namespace gpuk::detail {

void walk_random(Sweep& sweep) {
  const Space& space = sweep.space();
  const std::uint64_t size = space.size();
  // A partial Fisher-Yates shuffle of [0, size), sparse: the draw depends on the seed only.
  const std::size_t budget = static_cast<std::size_t>(sweep.options().evaluations.value_or(32));
  std::unordered_map<std::uint64_t, std::uint64_t> swapped;
  const auto slot = [&](std::uint64_t i) {
    const auto it = swapped.find(i);
    return it == swapped.end() ? i : it->second;
  };
  std::vector<Candidate> todo;
  for (std::uint64_t i = 0; i < size && todo.size() < budget; ++i) {
    const std::uint64_t j = i + std::uniform_int_distribution<std::uint64_t>(0, size - 1 - i)(sweep.rng());
    const std::uint64_t pick = slot(j);
    swapped[j] = slot(i);
    const Candidate c = space.at(pick);
    if (sweep.runnable(c)) todo.push_back(c);
  }
  sweep.measure_in_order(todo);
}

}  // namespace gpuk::detail
