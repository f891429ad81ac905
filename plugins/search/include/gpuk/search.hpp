// The Searcher family's public interface: its operations (gpuk/search_ops.hpp) and typed calls on
// device pointers for applications, through the library API (gpuk/gpuk.hpp). The CPU semantics
// its plugin implements (Searcher) are in plugins/search/searcher.hpp (not installed). Typed calls:
//
//   gpuk::search::find(engine, d_in, d_index, n, 42, stream);          // asynchronous, into device memory
//   std::int64_t i = gpuk::search::find(engine, d_in, n, 42, stream);  // waits
//
//   std::int64_t j = gpuk::search::find_if(engine, d_in, n, gpuk::search::Compare::lt, 0.5f, stream);
//   std::int64_t k = gpuk::search::find_if_range(engine, d_in, n, 0.25f, 0.5f, stream);  // 0.25 <= x < 0.5
//
// find: the lowest index whose element equals the value, or -1; any: some such index, or -1;
// count: how many. Elements match with ==: a NaN matches nothing, -0.0 matches 0.0. find_if: the
// lowest index whose element x meets `x OP value` (Compare: ==, !=, <, <=, >, >=) as C++
// compares, or -1: a comparison with a NaN is false, except !=, which is true. find_if_range: the
// lowest index whose element x has lo <= x < hi (Range::half_open, as C++ writes a range) or
// lo <= x <= hi (Range::closed), or -1: a NaN is in no range, -0.0 == 0.0, and a range that holds
// nothing (hi <= lo, hi < lo for closed, or a NaN bound) finds nothing.
//
//   gpuk::search::lower_bound(engine, d_keys, n, d_needles, m, d_index, stream);  // asynchronous
//
// lower_bound / upper_bound: for each of m needles, the first index in [0, n] whose key does not
// go before it (lower: key < needle goes before; upper: key <= needle), the keys sorted in the
// sort family's order (-0.0 before +0.0, every NaN equal and last), as std::lower_bound /
// std::upper_bound with that order (docs/kernels/search.md, "Bounds").
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

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
// T itself, in a context that deduces nothing: the value searched for takes the input's type, so
// find(e, d_u32, n, 42, ...) converts 42 to uint32 instead of failing to deduce T.
template <class T> struct same {
  using type = T;
};
template <class T> using same_t = typename same<T>::type;

template <class T> OperationSpec spec(Mode mode, std::uint64_t n, Compare compare = Compare::eq) {
  OperationSpec s;
  s.family = "search";
  s.operation = info(mode).name;
  s.dtype = dtype_of<T>();
  s.n = n;
  if (compare != Compare::eq) s.options["compare"] = info(compare).name;  // eq: the option's default
  return s;
}
// The answer of an empty input: find and any find nothing (-1), count counts 0.
inline std::int64_t empty(Mode mode) { return mode == Mode::count ? 0 : -1; }
inline std::int64_t from_bytes(const std::vector<std::byte>& bytes) {
  std::int64_t r = 0;
  std::memcpy(&r, bytes.data(), sizeof r);
  return r;
}
template <class T> void launch_scalar(const Engine& e, Mode mode, const T* in, std::int64_t* d_out, std::uint64_t n,
                                      const Scalar& v, CUstream s, Compare compare) {
  if (n == 0) return;  // nothing to search: nothing is launched, d_out is not written
  e.launch(spec<T>(mode, n, compare), {in, d_out}, s, &v);
}
template <class T> std::int64_t read_scalar(const Engine& e, Mode mode, const T* in, std::uint64_t n, const Scalar& v,
                                            CUstream s, Compare compare) {
  if (n == 0) return empty(mode);
  return from_bytes(e.launch_and_read(spec<T>(mode, n, compare), {in, nullptr}, s, &v));
}
template <class T> void launch(const Engine& e, Mode mode, const T* in, std::int64_t* d_out, std::uint64_t n, T value,
                               CUstream s, Compare compare = Compare::eq) {
  if (n == 0) return;  // nothing to search: nothing is launched, d_out is not written
  const Scalar v = Scalar::of(value);
  e.launch(spec<T>(mode, n, compare), {in, d_out}, s, &v);
}
template <class T> std::int64_t read(const Engine& e, Mode mode, const T* in, std::uint64_t n, T value, CUstream s,
                                     Compare compare = Compare::eq) {
  if (n == 0) return empty(mode);
  const Scalar v = Scalar::of(value);
  return from_bytes(e.launch_and_read(spec<T>(mode, n, compare), {in, nullptr}, s, &v));
}
}  // namespace detail

// Argument order, as in every family: device arrays (input, then the int64 the answer goes to),
// n, the value searched for (converted to the input's type), the stream. n = 0 launches nothing
// and writes nothing; the host-returning calls then return -1 (find, any) or 0 (count).

// Into device memory (one int64 the caller owns), asynchronously on `stream`.
template <class T>
void find(const Engine& e, const T* d_in, std::int64_t* d_out, std::uint64_t n, detail::same_t<T> value,
          CUstream stream) {
  detail::launch<T>(e, Mode::find, d_in, d_out, n, value, stream);
}
template <class T>
void any(const Engine& e, const T* d_in, std::int64_t* d_out, std::uint64_t n, detail::same_t<T> value,
         CUstream stream) {
  detail::launch<T>(e, Mode::any, d_in, d_out, n, value, stream);
}
template <class T>
void count(const Engine& e, const T* d_in, std::int64_t* d_out, std::uint64_t n, detail::same_t<T> value,
           CUstream stream) {
  detail::launch<T>(e, Mode::count, d_in, d_out, n, value, stream);
}

// find_if: the lowest index whose element x meets `x compare value`, or -1 (into device memory,
// asynchronously; or to the host, waiting).
template <class T>
void find_if(const Engine& e, const T* d_in, std::int64_t* d_out, std::uint64_t n, Compare compare,
             detail::same_t<T> value, CUstream stream) {
  detail::launch<T>(e, Mode::find_if, d_in, d_out, n, value, stream, compare);
}
template <class T>
std::int64_t find_if(const Engine& e, const T* d_in, std::uint64_t n, Compare compare, detail::same_t<T> value,
                     CUstream stream) {
  return detail::read<T>(e, Mode::find_if, d_in, n, value, stream, compare);
}

// find_if_range: the lowest index whose element x is in [lo, hi) (Range::half_open, the default)
// or [lo, hi] (Range::closed), or -1 (into device memory, asynchronously; or to the host, waiting).
enum class Range { half_open, closed };
namespace detail {
inline Compare range_compare(Range r) { return r == Range::closed ? Compare::closed_range : Compare::range; }
}  // namespace detail
template <class T>
void find_if_range(const Engine& e, const T* d_in, std::int64_t* d_out, std::uint64_t n, detail::same_t<T> lo,
                   detail::same_t<T> hi, CUstream stream, Range range = Range::half_open) {
  detail::launch_scalar<T>(e, Mode::find_if, d_in, d_out, n, Scalar::pair<T>(lo, hi), stream,
                           detail::range_compare(range));
}
template <class T>
std::int64_t find_if_range(const Engine& e, const T* d_in, std::uint64_t n, detail::same_t<T> lo, detail::same_t<T> hi,
                           CUstream stream, Range range = Range::half_open) {
  return detail::read_scalar<T>(e, Mode::find_if, d_in, n, Scalar::pair<T>(lo, hi), stream,
                                detail::range_compare(range));
}

// The same with the value and d_out after n (the order of gpuk's first releases), kept.
template <class T>
void find(const Engine& e, const T* d_in, std::uint64_t n, detail::same_t<T> value, std::int64_t* d_out,
          CUstream stream) {
  detail::launch<T>(e, Mode::find, d_in, d_out, n, value, stream);
}
template <class T>
void any(const Engine& e, const T* d_in, std::uint64_t n, detail::same_t<T> value, std::int64_t* d_out,
         CUstream stream) {
  detail::launch<T>(e, Mode::any, d_in, d_out, n, value, stream);
}
template <class T>
void count(const Engine& e, const T* d_in, std::uint64_t n, detail::same_t<T> value, std::int64_t* d_out,
           CUstream stream) {
  detail::launch<T>(e, Mode::count, d_in, d_out, n, value, stream);
}

// To the host: launches, waits for `stream`, returns the index (-1: not found) or the count.
template <class T>
std::int64_t find(const Engine& e, const T* d_in, std::uint64_t n, detail::same_t<T> value, CUstream stream) {
  return detail::read<T>(e, Mode::find, d_in, n, value, stream);
}
template <class T>
std::int64_t any(const Engine& e, const T* d_in, std::uint64_t n, detail::same_t<T> value, CUstream stream) {
  return detail::read<T>(e, Mode::any, d_in, n, value, stream);
}
template <class T>
std::int64_t count(const Engine& e, const T* d_in, std::uint64_t n, detail::same_t<T> value, CUstream stream) {
  return detail::read<T>(e, Mode::count, d_in, n, value, stream);
}

// A prepared search: every size bucket of [1, max_n] chosen, compiled, loaded and given its
// scratch when it is made (no call of it compiles or allocates), freed when it is destroyed.
// Serves one stream at a time (any stream). With Scratch::caller it allocates no scratch:
// use_scratch() first (gpuk::PreparedHandle, docs/api.md).
//
//   auto f = gpuk::search::prepare_find<std::uint32_t>(engine, max_n);
//   f(d_in, d_index, n, 42, stream);                 // asynchronous, into device memory
//   std::int64_t i = f(d_in, n, 42, stream);         // waits
//   auto g = gpuk::search::prepare_find_if<float>(engine, gpuk::search::Compare::ge, max_n);
//   std::int64_t j = g(d_in, n, 0.5f, stream);       // the first x >= 0.5, or -1
//   auto r = gpuk::search::prepare_find_if_range<float>(engine, max_n);
//   std::int64_t k = r(d_in, n, 0.25f, 0.5f, stream);  // the first 0.25 <= x < 0.5, or -1
template <class T> class Prepared : public PreparedHandle {
 public:
  Prepared(const Engine& e, Mode mode, std::uint64_t max_n, Scratch scratch = Scratch::owned,
           Compare compare = Compare::eq)
      : PreparedHandle(e, detail::spec<T>(mode, max_n, compare), scratch), mode_(mode) {}
  void operator()(const T* d_in, std::int64_t* d_out, std::uint64_t n, detail::same_t<T> value, CUstream stream) {
    const Scalar v = Scalar::of(value);
    sizes_.launch({d_in, d_out}, n, stream, &v);
  }
  std::int64_t operator()(const T* d_in, std::uint64_t n, detail::same_t<T> value, CUstream stream) {
    if (n == 0) return detail::empty(mode_);
    const Scalar v = Scalar::of(value);
    return detail::from_bytes(sizes_.launch_and_read({d_in, nullptr}, n, stream, &v));
  }

 private:
  Mode mode_;
};

template <class T> Prepared<T> prepare_find(const Engine& e, std::uint64_t max_n, Scratch s = Scratch::owned) {
  return {e, Mode::find, max_n, s};
}
template <class T> Prepared<T> prepare_any(const Engine& e, std::uint64_t max_n, Scratch s = Scratch::owned) {
  return {e, Mode::any, max_n, s};
}
template <class T> Prepared<T> prepare_count(const Engine& e, std::uint64_t max_n, Scratch s = Scratch::owned) {
  return {e, Mode::count, max_n, s};
}
template <class T>
Prepared<T> prepare_find_if(const Engine& e, Compare compare, std::uint64_t max_n, Scratch s = Scratch::owned) {
  if (info(compare).two_values)
    throw ConfigError(std::string("prepare_find_if: compare ") + info(compare).name + " takes two values: "
                      "prepare_find_if_range");
  return {e, Mode::find_if, max_n, s, compare};
}

// A prepared find_if_range (as Prepared, with lo and hi in place of the value).
template <class T> class PreparedRange : public PreparedHandle {
 public:
  PreparedRange(const Engine& e, Range range, std::uint64_t max_n, Scratch scratch = Scratch::owned)
      : PreparedHandle(e, detail::spec<T>(Mode::find_if, max_n, detail::range_compare(range)), scratch) {}
  void operator()(const T* d_in, std::int64_t* d_out, std::uint64_t n, detail::same_t<T> lo, detail::same_t<T> hi,
                  CUstream stream) {
    const Scalar v = Scalar::pair<T>(lo, hi);
    sizes_.launch({d_in, d_out}, n, stream, &v);
  }
  std::int64_t operator()(const T* d_in, std::uint64_t n, detail::same_t<T> lo, detail::same_t<T> hi, CUstream stream) {
    if (n == 0) return -1;
    const Scalar v = Scalar::pair<T>(lo, hi);
    return detail::from_bytes(sizes_.launch_and_read({d_in, nullptr}, n, stream, &v));
  }
};
template <class T>
PreparedRange<T> prepare_find_if_range(const Engine& e, std::uint64_t max_n, Range range = Range::half_open,
                                       Scratch s = Scratch::owned) {
  return {e, range, max_n, s};
}

// --- lower_bound, upper_bound ---------------------------------------------------------------

// The needles' order: Needles::sorted picks the kernel for sorted needles (bounds_window) above
// 65,536 needles (fewer take one launch, bounds_gather, in any order); every kernel answers
// needles in any order.
namespace detail {
template <class T> OperationSpec bounds_spec(Mode mode, std::uint64_t n, std::uint64_t needles, Needles order) {
  OperationSpec s = spec<T>(mode, n);
  s.options["needle_count"] = std::to_string(needles);
  if (order == Needles::sorted) s.options["needles"] = "sorted";
  return s;
}
// m = 0 has nothing to answer; n = 0 would answer 0 for every needle, which needs no kernel but
// a write this header cannot make: refused (a Python call answers it).
inline bool bounds_to_launch(std::uint64_t n, std::uint64_t m) {
  if (m == 0) return false;
  if (n == 0) throw ConfigError("lower_bound / upper_bound of " + std::to_string(m) + " needles in no keys: every "
                                "answer is 0; fill d_out with zeros instead (a call takes n >= 1)");
  return true;
}
template <class T> void bounds(const Engine& e, Mode mode, const T* d_keys, std::uint64_t n, const T* d_needles,
                               std::uint64_t m, std::int64_t* d_out, CUstream stream, Needles order) {
  if (!bounds_to_launch(n, m)) return;
  const Scalar count = Scalar::of(static_cast<std::int64_t>(m));
  e.launch(bounds_spec<T>(mode, n, m, order), {d_keys, d_needles, d_out}, stream, &count);
}
}  // namespace detail

// Into d_out[0, m) (device memory the caller owns), asynchronously on `stream`. The operation is
// kept per needle count (Engine::launch's cache); a prepared handle serves every count up to its own.
template <class T>
void lower_bound(const Engine& e, const T* d_keys, std::uint64_t n, const T* d_needles, std::uint64_t m,
                 std::int64_t* d_out, CUstream stream, Needles order = Needles::unsorted) {
  detail::bounds<T>(e, Mode::lower_bound, d_keys, n, d_needles, m, d_out, stream, order);
}
template <class T>
void upper_bound(const Engine& e, const T* d_keys, std::uint64_t n, const T* d_needles, std::uint64_t m,
                 std::int64_t* d_out, CUstream stream, Needles order = Needles::unsorted) {
  detail::bounds<T>(e, Mode::upper_bound, d_keys, n, d_needles, m, d_out, stream, order);
}

// A prepared lower_bound / upper_bound: up to max_n keys and up to max_needles needles, every
// size bucket of [1, max_n] chosen, compiled, loaded and given its scratch when it is made.
//
//   auto lb = gpuk::search::prepare_lower_bound<float>(engine, max_n, max_needles);
//   lb(d_keys, n, d_needles, m, d_index, stream);
template <class T> class PreparedBounds : public PreparedHandle {
 public:
  PreparedBounds(const Engine& e, Mode mode, std::uint64_t max_n, std::uint64_t max_needles, Needles order,
                 Scratch scratch = Scratch::owned)
      : PreparedHandle(e, spec(mode, max_n, max_needles, order), scratch), max_needles_(max_needles) {}
  std::uint64_t max_needles() const { return max_needles_; }
  void operator()(const T* d_keys, std::uint64_t n, const T* d_needles, std::uint64_t m, std::int64_t* d_out,
                  CUstream stream) {
    if (m > max_needles_)
      throw ConfigError("this bound was prepared for up to " + std::to_string(max_needles_) + " needles; " +
                        std::to_string(m) + " need a handle prepared for them");
    if (!detail::bounds_to_launch(n, m)) return;
    const Scalar count = Scalar::of(static_cast<std::int64_t>(m));
    sizes_.launch({d_keys, d_needles, d_out}, n, stream, &count);
  }

 private:
  static OperationSpec spec(Mode mode, std::uint64_t max_n, std::uint64_t max_needles, Needles order) {
    // max_needles = 0 serves no needles at all: nothing is prepared (the spec is still checked).
    OperationSpec s = detail::bounds_spec<T>(mode, max_n > 0 ? max_n : 1, max_needles > 0 ? max_needles : 1, order);
    if (max_needles == 0) s.n = 0;
    return s;
  }
  std::uint64_t max_needles_;
};

template <class T>
PreparedBounds<T> prepare_lower_bound(const Engine& e, std::uint64_t max_n, std::uint64_t max_needles,
                                      Needles order = Needles::unsorted, Scratch s = Scratch::owned) {
  return {e, Mode::lower_bound, max_n, max_needles, order, s};
}
template <class T>
PreparedBounds<T> prepare_upper_bound(const Engine& e, std::uint64_t max_n, std::uint64_t max_needles,
                                      Needles order = Needles::unsorted, Scratch s = Scratch::owned) {
  return {e, Mode::upper_bound, max_n, max_needles, order, s};
}

}  // namespace gpuk::search
