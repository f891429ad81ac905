// The Searcher family's public interface: its operations (gpuk/search_ops.hpp) and typed calls on
// device pointers for applications, through the library API (gpuk/gpuk.hpp). The CPU semantics
// its plugin implements (Searcher) are in plugins/search/searcher.hpp (not installed). Typed calls:
//
//   gpuk::search::find(engine, d_in, n, 42, d_index, stream);          // asynchronous, into device memory
//   std::int64_t i = gpuk::search::find(engine, d_in, n, 42, stream);  // waits
//
// find: the lowest index whose element equals the value, or -1; any: some such index, or -1;
// count: how many. Elements match with ==: a NaN matches nothing, -0.0 matches 0.0.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpuk/gpuk.hpp"
#include "gpuk/search_ops.hpp"

namespace gpuk::search {

// The value searched for, exact in the input's own dtype (int64 values above 2^53 included).
struct Value {
  DType dtype = DType::int32;
  std::int64_t int_value = 0;    // int32, int64
  std::uint64_t uint_value = 0;  // uint32, uint64
  double float_value = 0;        // float32 (exact in double), float64

  template <class T> static Value of(T v) {
    Value s;
    s.dtype = dtype_of<T>();
    if constexpr (std::is_floating_point_v<T>) s.float_value = static_cast<double>(v);
    else if constexpr (std::is_signed_v<T>) s.int_value = static_cast<std::int64_t>(v);
    else s.uint_value = static_cast<std::uint64_t>(v);
    return s;
  }
  template <class T> T as() const {
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(float_value);
    else if constexpr (std::is_signed_v<T>) return static_cast<T>(int_value);
    else return static_cast<T>(uint_value);
  }
};

namespace detail {
template <class T> std::int64_t run(Engine& e, Mode mode, const T* in, std::uint64_t n, T value,
                                    std::int64_t* d_out, CUstream s, bool read) {
  OperationSpec spec;
  spec.family = "search";
  spec.operation = info(mode).name;
  spec.dtype = dtype_of<T>();
  spec.n = n;
  const CUdeviceptr arrays[] = {reinterpret_cast<CUdeviceptr>(in), reinterpret_cast<CUdeviceptr>(d_out)};
  const Scalar v = Scalar::of(value);
  if (!read) {
    e.launch(spec, arrays, s, &v);
    return 0;
  }
  const auto bytes = e.launch_and_read(spec, arrays, s, &v);
  std::int64_t r = 0;
  std::memcpy(&r, bytes.data(), sizeof r);
  return r;
}
}  // namespace detail

// Into device memory (one int64 the caller owns), asynchronously on `stream`.
template <class T> void find(Engine& e, const T* d_in, std::uint64_t n, T value, std::int64_t* d_out, CUstream stream) {
  detail::run(e, Mode::find, d_in, n, value, d_out, stream, false);
}
template <class T> void any(Engine& e, const T* d_in, std::uint64_t n, T value, std::int64_t* d_out, CUstream stream) {
  detail::run(e, Mode::any, d_in, n, value, d_out, stream, false);
}
template <class T> void count(Engine& e, const T* d_in, std::uint64_t n, T value, std::int64_t* d_out, CUstream stream) {
  detail::run(e, Mode::count, d_in, n, value, d_out, stream, false);
}

// To the host: launches, waits for `stream`, returns the index (-1: not found) or the count.
template <class T> std::int64_t find(Engine& e, const T* d_in, std::uint64_t n, T value, CUstream stream) {
  return detail::run<T>(e, Mode::find, d_in, n, value, nullptr, stream, true);
}
template <class T> std::int64_t any(Engine& e, const T* d_in, std::uint64_t n, T value, CUstream stream) {
  return detail::run<T>(e, Mode::any, d_in, n, value, nullptr, stream, true);
}
template <class T> std::int64_t count(Engine& e, const T* d_in, std::uint64_t n, T value, CUstream stream) {
  return detail::run<T>(e, Mode::count, d_in, n, value, nullptr, stream, true);
}

}  // namespace gpuk::search
