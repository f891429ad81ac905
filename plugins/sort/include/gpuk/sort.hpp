// The Sorter family's public interface: its operations (gpuk/sort_ops.hpp) and typed calls on
// device pointers for applications, through the library API (gpuk/gpuk.hpp). The CPU semantics
// its plugin implements (Sorter) are in plugins/sort/sorter.hpp (not installed). Typed calls:
//
//   gpuk::sort::keys(engine, d_keys_in, d_keys_out, n, stream);                 // asynchronous
//   gpuk::sort::pairs(engine, d_keys_in, d_keys_out, d_values_in, d_values_out, n, stream);
//   gpuk::sort::topk(engine, d_keys, d_values, d_indices, n, k, stream);        // the k largest
//   gpuk::sort::segmented_keys(engine, d_keys_in, d_keys_out, n, segments, d_begin, d_end, stream);
//
// Every sort is stable, descending too. Floats sort in IEEE total order (-0.0 before +0.0) with
// every NaN after +inf: last ascending, first descending, in input order; or, with
// Options::floats = FloatOrder::cub, as cub::DeviceRadixSort orders them. Options::begin_bit and
// end_bit sort on those bits of the key alone, as CUB's do. A sort may be in place (d_in ==
// d_out, d_values_in == d_values_out); outputs that overlap inputs otherwise are refused.
// argsort's indices are uint32 while every n of the Operation's size bucket fits in 2^32, uint64
// beyond (Operation::arrays() says which).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>

#include "gpuk/gpuk.hpp"
#include "gpuk/sort_ops.hpp"

namespace gpuk::sort {

namespace detail {
// The options as a config gives them; defaults are left out (begin_bit 0 and end_bit at the key's
// width, the float order of integer keys), so that equal sorts share one cached Operation.
inline OperationSpec spec(Op op, DType keys, std::uint64_t n, const Options& o, const char* values = nullptr) {
  OperationSpec s;
  s.family = "sort";
  s.operation = info(op).name;
  s.dtype = keys;
  s.n = n;
  s.options["order"] = o.order == Order::descending ? "descending" : "ascending";
  const bool is_float = keys == DType::float32 || keys == DType::float64;
  const int key_bits = keys == DType::float32 || keys == DType::int32 || keys == DType::uint32 ? 32 : 64;
  if (o.begin_bit != 0) s.options["begin_bit"] = std::to_string(o.begin_bit);
  if (o.end_bit != -1 && o.end_bit != key_bits) s.options["end_bit"] = std::to_string(o.end_bit);
  if (o.floats == FloatOrder::cub && is_float) s.options["float_order"] = "cub";
  if (values) s.options["values"] = values;
  return s;
}
// A pair's value is carried as its bits: any trivially copyable 4- or 8-byte type (an int, a
// float, a struct of two shorts) moves as uint32 or uint64.
template <class V> constexpr const char* value_name() {
  static_assert(std::is_trivially_copyable_v<V> && (sizeof(V) == 4 || sizeof(V) == 8),
                "gpuk: sort pairs carry trivially copyable 4- or 8-byte values");
  return sizeof(V) == 4 ? "uint32" : "uint64";
}
inline OperationSpec topk_spec(DType keys, std::uint64_t n, std::uint64_t k, const TopKOptions& o) {
  OperationSpec s;
  s.family = "sort";
  s.operation = info(Op::topk).name;
  s.dtype = keys;
  s.n = n;
  s.options["order"] = o.largest ? "descending" : "ascending";
  if (k != 1) s.options["k"] = std::to_string(k);
  if (o.rows != 1) s.options["rows"] = std::to_string(o.rows);
  if (!o.sorted) s.options["sorted"] = "false";
  if (o.floats == FloatOrder::cub && (keys == DType::float32 || keys == DType::float64)) s.options["float_order"] = "cub";
  return s;
}
// A segmented sort's spec: `segments` is the most a call sorts (each call's count is its launch's
// scalar); no segments are spelled as one, and launch nothing.
inline OperationSpec segmented_spec(Op op, DType keys, std::uint64_t n, std::uint64_t segments, const Options& o,
                                    const char* values = nullptr) {
  OperationSpec s = spec(op, keys, n, o, values);
  s.options["segments"] = std::to_string(segments > 0 ? segments : 1);
  return s;
}
// The offsets are int64 device arrays, as CUB's are most often (std::int64_t or long long).
template <class O> constexpr void check_offsets() {
  static_assert(std::is_integral_v<O> && std::is_signed_v<O> && sizeof(O) == 8,
                "gpuk: segmented sort offsets are int64 (std::int64_t)");
}
template <class I> void check_indices(std::uint64_t n) {
  static_assert(std::is_same_v<I, std::uint32_t> || std::is_same_v<I, std::uint64_t>,
                "gpuk: argsort's indices are uint32 or uint64");
  const bool wide = n > 0 && bucket_last(n) > (std::uint64_t{1} << 32);
  if (wide != (sizeof(I) == 8))
    throw ConfigError("argsort of n = " + std::to_string(n) + " writes " + (wide ? "uint64" : "uint32") +
                      " indices (uint32 while every n of its size bucket fits in 2^32)");
}
}  // namespace detail

// Argument order, as in every family: device arrays (inputs, then outputs), n, the stream, the
// order. n = 0 launches nothing.

// Sorts n keys from d_in into d_out, asynchronously on `stream`.
template <class K>
void keys(const Engine& e, const K* d_in, K* d_out, std::uint64_t n, CUstream stream, const Options& options = {}) {
  const OperationSpec spec = detail::spec(Op::sort, dtype_of<K>(), n, options);
  if (n == 0) return;
  e.launch(spec, {d_in, d_out}, stream);
}

// Sorts n keys and carries each key's value along.
template <class K, class V>
void pairs(const Engine& e, const K* d_keys_in, K* d_keys_out, const V* d_values_in, V* d_values_out, std::uint64_t n,
           CUstream stream, const Options& options = {}) {
  const OperationSpec spec = detail::spec(Op::sort_pairs, dtype_of<K>(), n, options, detail::value_name<V>());
  if (n == 0) return;
  e.launch(spec, {d_keys_in, d_keys_out, d_values_in, d_values_out}, stream);
}

// Sorts n keys and writes each sorted key's original index (I: uint32 or uint64, as
// Operation::arrays() says for this n's bucket).
template <class K, class I>
void argsort(const Engine& e, const K* d_keys_in, K* d_keys_out, I* d_indices, std::uint64_t n, CUstream stream,
             const Options& options = {}) {
  const OperationSpec spec = detail::spec(Op::argsort, dtype_of<K>(), n, options);
  if (n == 0) return;
  detail::check_indices<I>(n);
  e.launch(spec, {d_keys_in, d_keys_out, d_indices}, stream);
}

// Top-k: of each of options.rows rows of n / rows keys (row after row in d_keys), the first k keys
// of the row's stable sort (largest: the k largest; ties by the lower index) into d_values and
// their indices in the row into d_indices, rows * k of each. sorted (k <= kTopKSortedMax): in
// the sort's order; else in input order. k = 0 or n = 0 launches nothing; k above a row's length
// is a ConfigError.
template <class K>
void topk(const Engine& e, const K* d_keys, K* d_values, std::int64_t* d_indices, std::uint64_t n, std::uint64_t k,
          CUstream stream, const TopKOptions& options = {}) {
  const OperationSpec spec = detail::topk_spec(dtype_of<K>(), n, k, options);
  if (n == 0 || k == 0) return;
  e.launch(spec, {d_keys, d_values, d_indices}, stream);
}

// Segmented sorts, as cub::DeviceSegmentedSort::SortKeys / SortPairs (argument order and
// meaning): segment s is [d_begin_offsets[s], d_end_offsets[s]) of the n keys, empty when end <=
// begin, sorted on its own, stably, in the options' order and float order (begin_bit and end_bit
// are sort's: a ConfigError here). The offsets are int64 device arrays (one per segment; with
// segments + 1 offsets d_off, pass d_off and d_off + 1), every one within [0, n], segments not
// overlapping: not checked (the offsets stay on the device): an offset outside [0, n] reads and
// writes outside the arrays, as in CUB. Keys outside every segment are not written. Out of place:
// an output that overlaps an input is a ConfigError. Fewer than 2^31 segments, fewer than
// 2^32 - 1 keys. n = 0 or segments = 0 launches nothing. Each segment count is its own cached
// Operation (Engine::launch's cache); a prepared handle serves every count up to its max.
template <class K, class O>
void segmented_keys(const Engine& e, const K* d_keys_in, K* d_keys_out, std::uint64_t n, std::uint64_t segments,
                    const O* d_begin_offsets, const O* d_end_offsets, CUstream stream, const Options& options = {}) {
  detail::check_offsets<O>();
  const OperationSpec spec = detail::segmented_spec(Op::segmented_sort, dtype_of<K>(), n, segments, options);
  if (n == 0 || segments == 0) return;
  const Scalar count = Scalar::of(static_cast<std::int64_t>(segments));
  e.launch(spec, {d_keys_in, d_keys_out, d_begin_offsets, d_end_offsets}, stream, &count);
}

// The same, carrying each key's value along (V: any trivially copyable 4- or 8-byte type).
template <class K, class V, class O>
void segmented_pairs(const Engine& e, const K* d_keys_in, K* d_keys_out, const V* d_values_in, V* d_values_out,
                     std::uint64_t n, std::uint64_t segments, const O* d_begin_offsets, const O* d_end_offsets,
                     CUstream stream, const Options& options = {}) {
  detail::check_offsets<O>();
  const OperationSpec spec =
      detail::segmented_spec(Op::segmented_sort_pairs, dtype_of<K>(), n, segments, options, detail::value_name<V>());
  if (n == 0 || segments == 0) return;
  const Scalar count = Scalar::of(static_cast<std::int64_t>(segments));
  e.launch(spec, {d_keys_in, d_keys_out, d_values_in, d_values_out, d_begin_offsets, d_end_offsets}, stream, &count);
}

// Prepared sorts: every size bucket of [1, max_n] chosen, compiled, loaded and given its scratch
// (the radix sorts' spare buffers) when it is made, so that no call compiles or allocates; all
// freed when it is destroyed. Each serves one stream at a time (any stream). With
// Scratch::caller the handle allocates nothing: pass it scratch_bytes() of device memory with
// use_scratch() before the first call (docs/api.md, "Caller-owned scratch").
//
//   auto s = gpuk::sort::prepare_pairs<float, std::uint32_t>(engine, max_n);
//   s(d_keys, d_keys_out, d_values, d_values_out, n, stream);   // any n <= max_n; 0: nothing

template <class K> class PreparedKeys : public PreparedHandle {
 public:
  PreparedKeys(const Engine& e, std::uint64_t max_n, const Options& options, Scratch scratch = Scratch::owned)
      : PreparedHandle(e, detail::spec(Op::sort, dtype_of<K>(), max_n, options), scratch) {}
  void operator()(const K* d_in, K* d_out, std::uint64_t n, CUstream stream) { sizes_.launch({d_in, d_out}, n, stream); }
};

template <class K, class V> class PreparedPairs : public PreparedHandle {
 public:
  PreparedPairs(const Engine& e, std::uint64_t max_n, const Options& options, Scratch scratch = Scratch::owned)
      : PreparedHandle(e, detail::spec(Op::sort_pairs, dtype_of<K>(), max_n, options, detail::value_name<V>()), scratch) {}
  void operator()(const K* d_keys_in, K* d_keys_out, const V* d_values_in, V* d_values_out, std::uint64_t n,
                  CUstream stream) {
    sizes_.launch({d_keys_in, d_keys_out, d_values_in, d_values_out}, n, stream);
  }
};

// argsort: the sorted keys and each one's original index, uint32 (every n up to max_n must have
// its size bucket within 2^32: max_n < 2^31 is always fine; larger argsorts: the typed call).
template <class K> class PreparedArgsort : public PreparedHandle {
 public:
  PreparedArgsort(const Engine& e, std::uint64_t max_n, const Options& options, Scratch scratch = Scratch::owned)
      : PreparedHandle(e, checked(max_n, options), scratch) {}
  void operator()(const K* d_keys_in, K* d_keys_out, std::uint32_t* d_indices, std::uint64_t n, CUstream stream) {
    sizes_.launch({d_keys_in, d_keys_out, d_indices}, n, stream);
  }

 private:
  static OperationSpec checked(std::uint64_t max_n, const Options& options) {
    detail::check_indices<std::uint32_t>(max_n);
    return detail::spec(Op::argsort, dtype_of<K>(), max_n, options);
  }
};

// Prepared top-k: k and the options fixed, any n <= max_n that is a multiple of options.rows
// (and at least k * rows).
//
//   auto t = gpuk::sort::prepare_topk<float>(engine, max_n, k);
//   t(d_keys, d_values, d_indices, n, stream);
template <class K> class PreparedTopK : public PreparedHandle {
 public:
  PreparedTopK(const Engine& e, std::uint64_t max_n, std::uint64_t k, const TopKOptions& options,
               Scratch scratch = Scratch::owned)
      : PreparedHandle(e, detail::topk_spec(dtype_of<K>(), max_n, k, options), scratch, options.rows) {}
  void operator()(const K* d_keys, K* d_values, std::int64_t* d_indices, std::uint64_t n, CUstream stream) {
    sizes_.launch({d_keys, d_values, d_indices}, n, stream);
  }
};

// Prepared segmented sorts: up to max_n keys in up to max_segments segments, every size bucket
// of [1, max_n] prepared for max_segments (so that no call compiles or allocates); a call takes
// any count from 0 to max_segments (more: a ConfigError before anything is enqueued) and int64
// offsets as the typed calls do. n = 0 or segments = 0 launches nothing.
//
//   auto s = gpuk::sort::prepare_segmented_pairs<float, std::uint32_t>(engine, max_n, max_segments);
//   s(d_keys, d_keys_out, d_values, d_values_out, n, segments, d_begin, d_end, stream);
class PreparedSegmented : public PreparedHandle {
 public:
  std::uint64_t max_segments() const { return max_segments_; }

 protected:
  PreparedSegmented(const Engine& e, OperationSpec spec, std::uint64_t max_n, std::uint64_t max_segments,
                    Scratch scratch)
      : PreparedHandle(e, serving(std::move(spec), max_n, max_segments), scratch), max_segments_(max_segments) {}
  void launch(std::initializer_list<DeviceAddress> arrays, std::uint64_t n, std::uint64_t segments, CUstream stream) {
    if (n == 0 || segments == 0) return;  // nothing to sort: nothing is launched
    if (segments > max_segments_)
      throw ConfigError("this segmented sort was prepared for up to " + std::to_string(max_segments_) +
                        " segments; " + std::to_string(segments) + " need a handle prepared for them");
    const Scalar count = Scalar::of(static_cast<std::int64_t>(segments));
    sizes_.launch(arrays, n, stream, &count);
  }

 private:
  // max_segments = 0 serves no segments at all: nothing is prepared (the spec is still checked).
  static OperationSpec serving(OperationSpec spec, std::uint64_t max_n, std::uint64_t max_segments) {
    spec.n = max_segments > 0 ? max_n : 0;
    return spec;
  }
  std::uint64_t max_segments_;
};

template <class K> class PreparedSegmentedKeys : public PreparedSegmented {
 public:
  PreparedSegmentedKeys(const Engine& e, std::uint64_t max_n, std::uint64_t max_segments, const Options& options,
                        Scratch scratch = Scratch::owned)
      : PreparedSegmented(e, detail::segmented_spec(Op::segmented_sort, dtype_of<K>(), max_n, max_segments, options),
                          max_n, max_segments, scratch) {}
  template <class O>
  void operator()(const K* d_keys_in, K* d_keys_out, std::uint64_t n, std::uint64_t segments,
                  const O* d_begin_offsets, const O* d_end_offsets, CUstream stream) {
    detail::check_offsets<O>();
    launch({d_keys_in, d_keys_out, d_begin_offsets, d_end_offsets}, n, segments, stream);
  }
};

template <class K, class V> class PreparedSegmentedPairs : public PreparedSegmented {
 public:
  PreparedSegmentedPairs(const Engine& e, std::uint64_t max_n, std::uint64_t max_segments, const Options& options,
                         Scratch scratch = Scratch::owned)
      : PreparedSegmented(e,
                          detail::segmented_spec(Op::segmented_sort_pairs, dtype_of<K>(), max_n, max_segments, options,
                                                 detail::value_name<V>()),
                          max_n, max_segments, scratch) {}
  template <class O>
  void operator()(const K* d_keys_in, K* d_keys_out, const V* d_values_in, V* d_values_out, std::uint64_t n,
                  std::uint64_t segments, const O* d_begin_offsets, const O* d_end_offsets, CUstream stream) {
    detail::check_offsets<O>();
    launch({d_keys_in, d_keys_out, d_values_in, d_values_out, d_begin_offsets, d_end_offsets}, n, segments, stream);
  }
};

template <class K>
PreparedKeys<K> prepare_keys(const Engine& e, std::uint64_t max_n, const Options& options = {},
                             Scratch scratch = Scratch::owned) {
  return {e, max_n, options, scratch};
}
template <class K, class V>
PreparedPairs<K, V> prepare_pairs(const Engine& e, std::uint64_t max_n, const Options& options = {},
                                  Scratch scratch = Scratch::owned) {
  return {e, max_n, options, scratch};
}
template <class K>
PreparedArgsort<K> prepare_argsort(const Engine& e, std::uint64_t max_n, const Options& options = {},
                                   Scratch scratch = Scratch::owned) {
  return {e, max_n, options, scratch};
}

template <class K>
PreparedTopK<K> prepare_topk(const Engine& e, std::uint64_t max_n, std::uint64_t k, const TopKOptions& options = {},
                             Scratch scratch = Scratch::owned) {
  return {e, max_n, k, options, scratch};
}

template <class K>
PreparedSegmentedKeys<K> prepare_segmented_keys(const Engine& e, std::uint64_t max_n, std::uint64_t max_segments,
                                                const Options& options = {}, Scratch scratch = Scratch::owned) {
  return {e, max_n, max_segments, options, scratch};
}
template <class K, class V>
PreparedSegmentedPairs<K, V> prepare_segmented_pairs(const Engine& e, std::uint64_t max_n, std::uint64_t max_segments,
                                                     const Options& options = {}, Scratch scratch = Scratch::owned) {
  return {e, max_n, max_segments, options, scratch};
}

}  // namespace gpuk::sort
