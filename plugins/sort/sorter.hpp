// The Sorter family's CPU semantics, what its plugin implements: the interface tests reach on the
// loaded plugin. Beside the plugin, not installed: applications use gpuk/sort.hpp.
#pragma once
#include <cstdint>

#include "gpuk/sort.hpp"
#include "plugin/plugin.hpp"

namespace gpuk::sort {

class Sorter : public FamilyPlugin {
 public:
  // interface_of<Sorter>(plugin): the loaded plugin's Sorter, without RTTI across dlopen.
  static constexpr const char* kInterface = "gpuk::sort::Sorter";
  const void* interface(std::string_view name) const override {
    return name == kInterface ? static_cast<const Sorter*>(this) : nullptr;
  }

  // Stable sort of keys, in place; values (any dtype, as many as keys) follow their keys when
  // given. In the order, float order and bit window of `options` (an Order converts), exactly as
  // the kernels order keys. Throws gpuk::Error on a size mismatch, ConfigError on a bit window
  // outside the key.
  virtual void sort_on_cpu(HostArray& keys, HostArray* values, const Options& options) const = 0;

  // Top-k of each of options.rows rows of `keys` (docs/api.md, "Top-k"): the k keys and their
  // int64 indices in the row, rows * k of each, exactly as the kernels select and order them.
  // Throws ConfigError on a k or rows that does not fit the keys (as a config would).
  struct TopKAnswer {
    HostArray values;
    HostArray indices;
  };
  virtual TopKAnswer topk_on_cpu(const HostArray& keys, std::uint64_t k, const TopKOptions& options) const = 0;
};

}  // namespace gpuk::sort
