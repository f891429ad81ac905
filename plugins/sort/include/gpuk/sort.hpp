// The Sorter family's public interface: its operations (gpuk/sort_ops.hpp) and typed calls on
// device pointers for applications, through the library API (gpuk/gpuk.hpp). The CPU semantics
// its plugin implements (Sorter) are in plugins/sort/sorter.hpp (not installed). Typed calls:
//
//   gpuk::sort::keys(engine, d_keys_in, d_keys_out, n, stream);                 // asynchronous
//   gpuk::sort::pairs(engine, d_keys_in, d_keys_out, d_values_in, d_values_out, n, stream);
//
// Every sort is stable, descending too. Floats sort in IEEE total order (-0.0 before +0.0) with
// every NaN after +inf: last ascending, first descending, in input order. The input is never
// written. argsort's indices are uint32 while every n of the Operation's size bucket fits in
// 2^32, uint64 beyond (Operation::arrays() says which).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "gpuk/gpuk.hpp"
#include "gpuk/sort_ops.hpp"

namespace gpuk::sort {

namespace detail {
inline OperationSpec spec(Op op, DType keys, std::uint64_t n, Order order, const char* values = nullptr) {
  OperationSpec s;
  s.family = "sort";
  s.operation = info(op).name;
  s.dtype = keys;
  s.n = n;
  s.options["order"] = order == Order::descending ? "descending" : "ascending";
  if (values) s.options["values"] = values;
  return s;
}
template <class V> constexpr const char* value_name() {
  static_assert(std::is_same_v<V, std::uint32_t> || std::is_same_v<V, std::uint64_t>,
                "sort_pairs carries uint32 or uint64 values");
  return std::is_same_v<V, std::uint32_t> ? "uint32" : "uint64";
}
inline CUdeviceptr ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }
}  // namespace detail

// Sorts n keys from d_in into d_out, asynchronously on `stream`.
template <class K>
void keys(Engine& e, const K* d_in, K* d_out, std::uint64_t n, CUstream stream, Order order = Order::ascending) {
  const CUdeviceptr arrays[] = {detail::ptr(d_in), detail::ptr(d_out)};
  e.launch(detail::spec(Op::sort, dtype_of<K>(), n, order), arrays, stream);
}

// Sorts n keys and carries each key's value along.
template <class K, class V>
void pairs(Engine& e, const K* d_keys_in, K* d_keys_out, const V* d_values_in, V* d_values_out, std::uint64_t n,
           CUstream stream, Order order = Order::ascending) {
  const CUdeviceptr arrays[] = {detail::ptr(d_keys_in), detail::ptr(d_keys_out), detail::ptr(d_values_in),
                                detail::ptr(d_values_out)};
  e.launch(detail::spec(Op::sort_pairs, dtype_of<K>(), n, order, detail::value_name<V>()), arrays, stream);
}

// Sorts n keys and writes each sorted key's original index (I: uint32 or uint64, as
// Operation::arrays() says for this n's bucket).
template <class K, class I>
void argsort(Engine& e, const K* d_keys_in, K* d_keys_out, I* d_indices, std::uint64_t n, CUstream stream,
             Order order = Order::ascending) {
  static_assert(std::is_same_v<I, std::uint32_t> || std::is_same_v<I, std::uint64_t>, "indices are uint32 or uint64");
  const bool wide = n > 0 && bucket_last(n) > (std::uint64_t{1} << 32);
  if (wide != (sizeof(I) == 8))
    throw ConfigError("argsort of n = " + std::to_string(n) + " writes " + (wide ? "uint64" : "uint32") +
                      " indices (uint32 while every n of its size bucket fits in 2^32)");
  const CUdeviceptr arrays[] = {detail::ptr(d_keys_in), detail::ptr(d_keys_out), detail::ptr(d_indices)};
  e.launch(detail::spec(Op::argsort, dtype_of<K>(), n, order), arrays, stream);
}

}  // namespace gpuk::sort
