// The sort family's device side (its Launcher) and the helpers the plugin shares with it.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "plugin/plugin.hpp"
#include "sorter.hpp"

namespace gpuk::sort {

// Scratch regions start on 256-byte boundaries.
constexpr std::uint64_t aligned(std::uint64_t bytes) { return (bytes + 255) / 256 * 256; }

inline Op parse_op(const std::string& name) { return table_parse(kOps, name, "sort").op; }

// argsort's index type: uint32 while every index fits, uint64 beyond.
inline DType index_dtype(std::uint64_t n) { return n <= (std::uint64_t{1} << 32) ? DType::uint32 : DType::uint64; }

// The values' dtype; argsort's indices are sized for the largest n the variant serves, so that
// one prepared argsort writes one index type across its size bucket.
inline DType value_dtype_of(const Problem& p, Op op) {
  if (op == Op::argsort) return index_dtype(p.max_n);
  if (op == Op::topk) return DType::int64;  // the indices in the row
  return *parse_dtype(p.option("values"));
}

// What orders the keys (docs/kernels/sort.md, "Orders and bit windows"): the direction, the
// float order, and the bits [begin_bit, end_bit) of the ordered key that count. From a problem's
// options (begin_bit, end_bit, float_order are left out while at their defaults).
struct KeyOrder {
  bool descending = false;
  bool cub = false;  // float_order: cub
  int begin_bit = 0;
  int end_bit = 0;  // the key's width when not given
  int sort_bits() const { return end_bit - begin_bit; }
};
KeyOrder key_order_of(const std::map<std::string, std::string>& options, DType keys);

// Whether the device ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte (an empty one
// shares none).
inline bool ranges_overlap(CUdeviceptr a, std::uint64_t a_bytes, CUdeviceptr b, std::uint64_t b_bytes) {
  return a_bytes > 0 && b_bytes > 0 && a < b + b_bytes && b < a + a_bytes;
}

// The launcher of docs/kernels/sort.md, "How the host runs a file".
std::unique_ptr<Launcher> make_sort_launcher(const Problem& problem);

}  // namespace gpuk::sort
