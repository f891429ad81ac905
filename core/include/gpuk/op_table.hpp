// Reading a family's operation table (each plugin's gpuk/<family>_ops.hpp): an array of entries,
// each with an enumerator `op` and the `name` configs use. Plain C++17, so that a plugin's
// nvcc-compiled baseline reads the same table.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpuk/error.hpp"

namespace gpuk {

// The entry of `op`.
template <class Entry, std::size_t N, class Op>
constexpr const Entry& table_entry(const Entry (&table)[N], Op op) {
  for (const Entry& e : table)
    if (e.op == op) return e;
  return table[0];  // unreachable when every enumerator is in the table
}

// The entry named `name`, or nullptr.
template <class Entry, std::size_t N>
constexpr const Entry* table_find(const Entry (&table)[N], std::string_view name) {
  for (const Entry& e : table)
    if (name == e.name) return &e;
  return nullptr;
}

// The entry named `name`; ConfigError "the <family> family has no operation '<name>'".
template <class Entry, std::size_t N>
const Entry& table_parse(const Entry (&table)[N], const std::string& name, const std::string& family) {
  if (const Entry* e = table_find(table, name)) return *e;
  throw ConfigError("the " + family + " family has no operation '" + name + "'");
}

// Every name, in table order: the family's operations.
template <class Entry, std::size_t N>
std::vector<std::string> table_names(const Entry (&table)[N]) {
  std::vector<std::string> out;
  for (const Entry& e : table) out.emplace_back(e.name);
  return out;
}

}  // namespace gpuk
