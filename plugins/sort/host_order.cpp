// The stable sort on the host: sort_on_cpu's body, in the order the kernels sort (the radix sort
// of host_radix_sort.hpp on cpu_threads() threads).
#include "host_order.hpp"
#include "host_radix_sort.hpp"
#include "util/host.hpp"

namespace gpuk::sort {
namespace {

template <class K, class V> void sort_keys_on_cpu(HostArray& keys, HostArray* values, const KeyOrder& order) {
  const auto k = keys.as<K>();
  const std::vector<K> input(k.begin(), k.end());
  const auto threads = static_cast<unsigned>(cpu_threads());
  if (!values) {
    radix_sort<K>(std::span<const K>(input), nullptr, k.data(), nullptr, order, threads);
    return;
  }
  auto v = values->as<V>();
  const std::vector<V> given(v.begin(), v.end());
  radix_sort<K, V>(std::span<const K>(input), given.data(), k.data(), v.data(), order, threads);
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
