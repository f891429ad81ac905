// Element types gpuk moves between files, host and device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
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

// The C++ types gpuk computes on: 4- and 8-byte integers (int, long, long long, their unsigned
// kinds), float and double. Anything else (bool, char, short, half, a struct) is refused where it
// is named, at compile time.
template <class T>
inline constexpr bool is_dtype_v =
    (std::is_integral_v<std::remove_cv_t<T>> && !std::is_same_v<std::remove_cv_t<T>, bool> &&
     (sizeof(T) == 4 || sizeof(T) == 8)) ||
    std::is_same_v<std::remove_cv_t<T>, float> || std::is_same_v<std::remove_cv_t<T>, double>;

// The dtype of the C++ type T (int32 for int, uint64 for unsigned long long, ...).
template <class T> constexpr DType dtype_of() {
  static_assert(is_dtype_v<T>,
                "gpuk: unsupported element type: use a 4- or 8-byte integer, float or double "
                "(int32, uint32, int64, uint64, float32, float64)");
  if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? DType::float32 : DType::float64;
  else if constexpr (std::is_signed_v<T>) return sizeof(T) == 4 ? DType::int32 : DType::int64;
  else return sizeof(T) == 4 ? DType::uint32 : DType::uint64;
}

}  // namespace gpuk
