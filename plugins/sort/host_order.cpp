// The stable sort on the host: sort_on_cpu's body, in the order the kernels sort.
#include "host_order.hpp"

namespace gpuk::sort {
namespace {

template <class K, class V> void sort_keys_on_cpu(HostArray& keys, HostArray* values, const KeyOrder& order) {
  const auto k = keys.as<K>();
  const auto perm = sorted_order<K, std::uint64_t>(std::span<const K>(k.data(), k.size()), order, false);
  std::vector<K> sorted(k.size());
  for (std::size_t i = 0; i < perm.size(); ++i) sorted[i] = k[perm[i]];
  std::copy(sorted.begin(), sorted.end(), k.begin());
  if (values) {
    auto v = values->as<V>();
    std::vector<V> moved(v.size());
    for (std::size_t i = 0; i < perm.size(); ++i) moved[i] = v[perm[i]];
    std::copy(moved.begin(), moved.end(), v.begin());
  }
}

}  // namespace

void sort_on_host(HostArray& keys, HostArray* values, const KeyOrder& order) {
  visit_dtype(keys.dtype(), [&](auto zero) {
    using K = decltype(zero);
    if (!values) return sort_keys_on_cpu<K, std::uint32_t>(keys, nullptr, order);
    visit_dtype(values->dtype(), [&](auto vzero) {
      using V = decltype(vzero);
      sort_keys_on_cpu<K, V>(keys, values, order);
    });
  });
}

}  // namespace gpuk::sort
