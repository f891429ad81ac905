#include "gpuk/dtype.hpp"

namespace gpuk {

namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view cuda;
  std::size_t size;
  bool is_float;
  bool is_signed;
};
constexpr DTypeInfo kInfo[] = {
    {DType::int32, "int32", "int", 4, false, true},
    {DType::uint32, "uint32", "unsigned int", 4, false, false},
    {DType::int64, "int64", "long long", 8, false, true},
    {DType::uint64, "uint64", "unsigned long long", 8, false, false},
    {DType::float32, "float32", "float", 4, true, true},
    {DType::float64, "float64", "double", 8, true, true},
};
const DTypeInfo& info(DType dtype) { return kInfo[static_cast<int>(dtype)]; }
}  // namespace

std::string_view dtype_name(DType dtype) { return info(dtype).name; }
std::size_t dtype_size(DType dtype) { return info(dtype).size; }
bool dtype_is_float(DType dtype) { return info(dtype).is_float; }
bool dtype_is_signed(DType dtype) { return info(dtype).is_signed; }
std::string_view dtype_cuda_name(DType dtype) { return info(dtype).cuda; }

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all = {DType::int32,  DType::uint32,  DType::int64,
                                         DType::uint64, DType::float32, DType::float64};
  return all;
}

std::optional<DType> parse_dtype(std::string_view name) {
  struct Alias {
    std::string_view alias;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"int32", DType::int32},     {"i32", DType::int32},       {"int", DType::int32},
      {"uint32", DType::uint32},   {"u32", DType::uint32},      {"int64", DType::int64},
      {"i64", DType::int64},       {"uint64", DType::uint64},   {"u64", DType::uint64},
      {"float32", DType::float32}, {"f32", DType::float32},     {"float", DType::float32},
      {"float64", DType::float64}, {"f64", DType::float64},     {"double", DType::float64},
  };
  for (const auto& a : kAliases)
    if (a.alias == name) return a.dtype;
  return std::nullopt;
}

}  // namespace gpuk
