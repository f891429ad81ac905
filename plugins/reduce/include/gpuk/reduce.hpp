// The Reducer family's public interface: its operations (gpuk/reduce_ops.hpp) and typed calls on
// device pointers for applications, through the library API (gpuk/gpuk.hpp). The CPU semantics
// its plugin implements (Reducer) are in plugins/reduce/reducer.hpp (not installed). Typed calls:
//
//   gpuk::reduce::argmax(engine, d_in, n, d_best, stream);      // asynchronous, into device memory
//   gpuk::reduce::Best<float> b = gpuk::reduce::argmax(engine, d_in, n, stream);  // waits
//
// max, min, sum, argmax, argmin; ties go to the lowest index; a NaN wins (README, "Reducer
// semantics"). The typed calls reduce x itself; `abs: true` goes through OperationSpec.options.
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

#include "gpuk/gpuk.hpp"
#include "gpuk/reduce_ops.hpp"

namespace gpuk::reduce {

struct Answer {
  // The reduced value: max/min/argmax/argmin give the element (|x| when abs), sum the sum in its
  // 64-bit accumulator. Exactly one of these is meaningful, by the input's dtype.
  double float_value = 0;
  std::int64_t int_value = 0;
  std::uint64_t uint_value = 0;
  std::optional<std::int64_t> index;  // argmax / argmin: the lowest index of the best value
};

// The device result of max, min, argmax and argmin (16 bytes: the value, the index at byte 8;
// max and min leave the index unspecified).
template <class T> struct Best {
  T value;
  std::int64_t index;
};
// The device result of sum: float32 and float64 sum in double, integers in 64 bits.
template <class T>
using Sum = std::conditional_t<std::is_floating_point_v<T>, double,
                               std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

namespace detail {
template <class T> OperationSpec spec(Op op, std::uint64_t n) {
  OperationSpec s;
  s.family = "reduce";
  s.operation = info(op).name;
  s.dtype = dtype_of<T>();
  s.n = n;
  return s;
}
template <class T> void launch(Engine& e, Op op, const T* in, std::uint64_t n, void* out, CUstream s) {
  const CUdeviceptr arrays[] = {reinterpret_cast<CUdeviceptr>(in), reinterpret_cast<CUdeviceptr>(out)};
  e.launch(spec<T>(op, n), arrays, s);
}
template <class R, class T> R read(Engine& e, Op op, const T* in, std::uint64_t n, CUstream s) {
  const CUdeviceptr arrays[] = {reinterpret_cast<CUdeviceptr>(in), 0};  // 0: the Operation's own result buffer
  const auto bytes = e.launch_and_read(spec<T>(op, n), arrays, s);
  R r{};
  std::memcpy(&r, bytes.data(), sizeof r);
  return r;
}
}  // namespace detail

// Into device memory, asynchronously on `stream` (d_out: device memory the caller owns).
template <class T> void argmax(Engine& e, const T* d_in, std::uint64_t n, Best<T>* d_out, CUstream stream) {
  detail::launch(e, Op::argmax, d_in, n, d_out, stream);
}
template <class T> void argmin(Engine& e, const T* d_in, std::uint64_t n, Best<T>* d_out, CUstream stream) {
  detail::launch(e, Op::argmin, d_in, n, d_out, stream);
}
template <class T> void max(Engine& e, const T* d_in, std::uint64_t n, Best<T>* d_out, CUstream stream) {
  detail::launch(e, Op::max, d_in, n, d_out, stream);
}
template <class T> void min(Engine& e, const T* d_in, std::uint64_t n, Best<T>* d_out, CUstream stream) {
  detail::launch(e, Op::min, d_in, n, d_out, stream);
}
template <class T> void sum(Engine& e, const T* d_in, std::uint64_t n, Sum<T>* d_out, CUstream stream) {
  detail::launch(e, Op::sum, d_in, n, d_out, stream);
}

// To the host: launches, waits for `stream`, returns the answer.
template <class T> Best<T> argmax(Engine& e, const T* d_in, std::uint64_t n, CUstream stream) {
  return detail::read<Best<T>>(e, Op::argmax, d_in, n, stream);
}
template <class T> Best<T> argmin(Engine& e, const T* d_in, std::uint64_t n, CUstream stream) {
  return detail::read<Best<T>>(e, Op::argmin, d_in, n, stream);
}
template <class T> Sum<T> sum(Engine& e, const T* d_in, std::uint64_t n, CUstream stream) {
  return detail::read<Sum<T>>(e, Op::sum, d_in, n, stream);
}

}  // namespace gpuk::reduce
