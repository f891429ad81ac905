// Element types gpuk moves between files, host and device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuk {

enum class DType { int32, uint32, int64, uint64, float32, float64 };

std::string_view dtype_name(DType dtype);                 // "float32"
std::optional<DType> parse_dtype(std::string_view name);  // accepts "float32", "float", "f32", "int32", ...
std::size_t dtype_size(DType dtype);
bool dtype_is_float(DType dtype);
bool dtype_is_signed(DType dtype);
std::string_view dtype_cuda_name(DType dtype);  // the CUDA C++ spelling: "float", "long long", ...
const std::vector<DType>& all_dtypes();

// Calls f(T{}) with the C++ type of `dtype`.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::int32: return f(std::int32_t{});
    case DType::uint32: return f(std::uint32_t{});
    case DType::int64: return f(std::int64_t{});
    case DType::uint64: return f(std::uint64_t{});
    case DType::float32: return f(float{});
    case DType::float64: return f(double{});
  }
  return f(float{});  // unreachable: every enumerator is handled above
}

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<std::int32_t>() { return DType::int32; }
template <> constexpr DType dtype_of<std::uint32_t>() { return DType::uint32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::int64; }
template <> constexpr DType dtype_of<std::uint64_t>() { return DType::uint64; }
template <> constexpr DType dtype_of<float>() { return DType::float32; }
template <> constexpr DType dtype_of<double>() { return DType::float64; }

}  // namespace gpuk
