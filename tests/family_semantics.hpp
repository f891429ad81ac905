// Each family's CPU semantics (reduce::Reducer, search::Searcher, sort::Sorter) on its built-in
// plugin: what the families' CPU tests call.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "builtins.hpp"
#include "plugin/plugin.hpp"
#include "reduce/reducer.hpp"
#include "search/searcher.hpp"
#include "sort/sorter.hpp"

namespace gpuk::test {

template <class Semantics> const Semantics& semantics_of(const std::string& family) {
  const auto* s = interface_of<Semantics>(plugins().get(family));
  REQUIRE(s != nullptr);
  return *s;
}
inline const reduce::Reducer& reducer() { return semantics_of<reduce::Reducer>("reduce"); }
inline const search::Searcher& searcher() { return semantics_of<search::Searcher>("search"); }
inline const sort::Sorter& sorter() { return semantics_of<sort::Sorter>("sort"); }

}  // namespace gpuk::test
