// The Reducer family's public interface: its operations (gpuk/reduce_ops.hpp) and typed calls on
// device pointers for applications, through the library API (gpuk/gpuk.hpp). The CPU semantics
// its plugin implements (Reducer) are in plugins/reduce/reducer.hpp (not installed). Typed calls:
//
//   gpuk::reduce::argmax(engine, d_in, d_best, n, stream);      // asynchronous, into device memory
//   gpuk::reduce::Best<float> b = gpuk::reduce::argmax(engine, d_in, n, stream);  // waits
//
// max, min, sum, argmax, argmin, and argminmax (argmin's and argmax's answers from one pass over
// the data); ties go to the lowest index; a NaN wins (README, "Reducer semantics"). The typed calls reduce x itself; `abs: true` goes through OperationSpec.options.
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

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
// The device result of argminmax: what argmin returns, then what argmax returns (32 bytes).
template <class T> struct MinMax {
  Best<T> min;
  Best<T> max;
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
template <class T> void launch(const Engine& e, Op op, const T* in, std::uint64_t n, void* out, CUstream s) {
  if (n == 0) return;  // nothing to reduce: nothing is launched, d_out is not written
  e.launch(spec<T>(op, n), {in, out}, s);
}
template <class R> struct IsMinMax : std::false_type {};
template <class T> struct IsMinMax<MinMax<T>> : std::true_type {};
// The answer of an empty input: no element, so index -1 (and a zero value; a zero sum).
template <class R> R empty() {
  R r{};
  if constexpr (IsMinMax<R>::value) r.min.index = r.max.index = -1;
  else if constexpr (!std::is_arithmetic_v<R>) r.index = -1;
  return r;
}
template <class R> R from_bytes(const std::vector<std::byte>& bytes) {
  R r{};
  std::memcpy(&r, bytes.data(), sizeof r);
  return r;
}
template <class T> OperationSpec layout_spec(Op op, std::uint64_t n, const char* shape, std::uint64_t count) {
  OperationSpec s = spec<T>(op, n);
  s.options[shape] = std::to_string(count);
  return s;
}
template <class T>
void segmented(const Engine& e, Op op, const T* in, const std::int64_t* begin, const std::int64_t* end, void* out,
               std::uint64_t n, std::uint64_t segments, CUstream s) {
  if (segments == 0) return;  // nothing to answer: nothing is launched
  // An input of n = 0 has only empty segments; they are still answered (n counts 1 for the bucket).
  const Scalar count = Scalar::of(static_cast<std::int64_t>(segments));
  e.launch(layout_spec<T>(op, n > 0 ? n : 1, "segments", segments), {in, begin, end, out}, s, &count);
}
template <class T>
void per_channel(const Engine& e, Op op, const T* in, void* out, std::uint64_t pixels, std::uint64_t channels,
                 CUstream s) {
  if (pixels == 0 || channels == 0) return;  // nothing to reduce: nothing is launched, d_out is not written
  e.launch(layout_spec<T>(op, pixels * channels, "channels", channels), {in, out}, s);
}
// The answers of `count` channels from launch_and_read's bytes; none launched: each channel's
// empty answer.
template <class R> std::vector<R> channel_answers(const std::vector<std::byte>& bytes, std::uint64_t count) {
  std::vector<R> out(count, empty<R>());
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), count * sizeof(R));
  return out;
}
template <class R, class T>
std::vector<R> read_channels(const Engine& e, Op op, const T* in, std::uint64_t pixels, std::uint64_t channels,
                             CUstream s) {
  if (pixels == 0 || channels == 0) return channel_answers<R>({}, channels);
  return channel_answers<R>(
      e.launch_and_read(layout_spec<T>(op, pixels * channels, "channels", channels), {in, nullptr}, s), channels);
}
template <class R, class T> R read(const Engine& e, Op op, const T* in, std::uint64_t n, CUstream s) {
  if (n == 0) return empty<R>();
  return from_bytes<R>(e.launch_and_read(spec<T>(op, n), {in, nullptr}, s));  // null: the Operation's own buffer
}
}  // namespace detail

// Argument order, as in every family: device arrays (inputs, then outputs), n, the stream.
// n = 0 launches nothing and writes nothing; the host-returning calls then return an index of -1
// (argmax, argmin, max, min) or a zero sum.

// Into device memory, asynchronously on `stream` (d_out: device memory the caller owns).
template <class T> void argmax(const Engine& e, const T* d_in, Best<T>* d_out, std::uint64_t n, CUstream stream) {
  detail::launch(e, Op::argmax, d_in, n, d_out, stream);
}
template <class T> void argmin(const Engine& e, const T* d_in, Best<T>* d_out, std::uint64_t n, CUstream stream) {
  detail::launch(e, Op::argmin, d_in, n, d_out, stream);
}
template <class T> void max(const Engine& e, const T* d_in, Best<T>* d_out, std::uint64_t n, CUstream stream) {
  detail::launch(e, Op::max, d_in, n, d_out, stream);
}
template <class T> void min(const Engine& e, const T* d_in, Best<T>* d_out, std::uint64_t n, CUstream stream) {
  detail::launch(e, Op::min, d_in, n, d_out, stream);
}
template <class T> void sum(const Engine& e, const T* d_in, Sum<T>* d_out, std::uint64_t n, CUstream stream) {
  detail::launch(e, Op::sum, d_in, n, d_out, stream);
}

// argmin and argmax in one pass: d_out->min is argmin's answer, d_out->max argmax's (the same ties
// and NaN rules, so each equals what the single call returns).
template <class T>
void argminmax(const Engine& e, const T* d_in, MinMax<T>* d_out, std::uint64_t n, CUstream stream) {
  detail::launch(e, Op::argminmax, d_in, n, d_out, stream);
}

// The same with n before d_out (the order of gpuk's first releases), kept.
template <class T> void argmax(const Engine& e, const T* d_in, std::uint64_t n, Best<T>* d_out, CUstream stream) {
  detail::launch(e, Op::argmax, d_in, n, d_out, stream);
}
template <class T> void argmin(const Engine& e, const T* d_in, std::uint64_t n, Best<T>* d_out, CUstream stream) {
  detail::launch(e, Op::argmin, d_in, n, d_out, stream);
}
template <class T> void max(const Engine& e, const T* d_in, std::uint64_t n, Best<T>* d_out, CUstream stream) {
  detail::launch(e, Op::max, d_in, n, d_out, stream);
}
template <class T> void min(const Engine& e, const T* d_in, std::uint64_t n, Best<T>* d_out, CUstream stream) {
  detail::launch(e, Op::min, d_in, n, d_out, stream);
}
template <class T> void sum(const Engine& e, const T* d_in, std::uint64_t n, Sum<T>* d_out, CUstream stream) {
  detail::launch(e, Op::sum, d_in, n, d_out, stream);
}

// To the host: launches, waits for `stream`, returns the answer.
template <class T> Best<T> argmax(const Engine& e, const T* d_in, std::uint64_t n, CUstream stream) {
  return detail::read<Best<T>>(e, Op::argmax, d_in, n, stream);
}
template <class T> Best<T> argmin(const Engine& e, const T* d_in, std::uint64_t n, CUstream stream) {
  return detail::read<Best<T>>(e, Op::argmin, d_in, n, stream);
}
template <class T> MinMax<T> argminmax(const Engine& e, const T* d_in, std::uint64_t n, CUstream stream) {
  return detail::read<MinMax<T>>(e, Op::argminmax, d_in, n, stream);
}
template <class T> Best<T> max(const Engine& e, const T* d_in, std::uint64_t n, CUstream stream) {
  return detail::read<Best<T>>(e, Op::max, d_in, n, stream);
}
template <class T> Best<T> min(const Engine& e, const T* d_in, std::uint64_t n, CUstream stream) {
  return detail::read<Best<T>>(e, Op::min, d_in, n, stream);
}
template <class T> Sum<T> sum(const Engine& e, const T* d_in, std::uint64_t n, CUstream stream) {
  return detail::read<Sum<T>>(e, Op::sum, d_in, n, stream);
}

// Segmented reductions, as cub::DeviceSegmentedReduce: segment s is d_in[d_begin[s], d_end[s])
// (empty when d_end[s] <= d_begin[s]); d_out[s] receives its answer, argmax/argmin's index
// relative to d_begin[s]. An empty segment gets CUB's initial value (lowest() for max/argmax,
// max() for min/argmin, 0 for sum) and index -1 (where CUB writes 1). The offsets are int64
// device arrays; with one array of segments + 1 offsets, pass d_offsets (end = d_offsets + 1).
// n: the input's length (every offset within [0, n]); it sizes the prepared Operation, which is
// kept per segment count (Engine::launch's cache). segments = 0 launches nothing. Asynchronous.
//
//   gpuk::reduce::segmented_argmax(engine, d_x, d_offsets, d_best, n, segments, stream);
template <class T>
void segmented_argmax(const Engine& e, const T* d_in, const std::int64_t* d_offsets, Best<T>* d_out, std::uint64_t n,
                      std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::argmax, d_in, d_offsets, d_offsets + 1, d_out, n, segments, stream);
}
template <class T>
void segmented_argmax(const Engine& e, const T* d_in, const std::int64_t* d_begin, const std::int64_t* d_end,
                      Best<T>* d_out, std::uint64_t n, std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::argmax, d_in, d_begin, d_end, d_out, n, segments, stream);
}
template <class T>
void segmented_argmin(const Engine& e, const T* d_in, const std::int64_t* d_offsets, Best<T>* d_out, std::uint64_t n,
                      std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::argmin, d_in, d_offsets, d_offsets + 1, d_out, n, segments, stream);
}
template <class T>
void segmented_argmin(const Engine& e, const T* d_in, const std::int64_t* d_begin, const std::int64_t* d_end,
                      Best<T>* d_out, std::uint64_t n, std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::argmin, d_in, d_begin, d_end, d_out, n, segments, stream);
}
template <class T>
void segmented_max(const Engine& e, const T* d_in, const std::int64_t* d_offsets, Best<T>* d_out, std::uint64_t n,
                   std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::max, d_in, d_offsets, d_offsets + 1, d_out, n, segments, stream);
}
template <class T>
void segmented_max(const Engine& e, const T* d_in, const std::int64_t* d_begin, const std::int64_t* d_end,
                   Best<T>* d_out, std::uint64_t n, std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::max, d_in, d_begin, d_end, d_out, n, segments, stream);
}
template <class T>
void segmented_min(const Engine& e, const T* d_in, const std::int64_t* d_offsets, Best<T>* d_out, std::uint64_t n,
                   std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::min, d_in, d_offsets, d_offsets + 1, d_out, n, segments, stream);
}
template <class T>
void segmented_min(const Engine& e, const T* d_in, const std::int64_t* d_begin, const std::int64_t* d_end,
                   Best<T>* d_out, std::uint64_t n, std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::min, d_in, d_begin, d_end, d_out, n, segments, stream);
}
template <class T>
void segmented_sum(const Engine& e, const T* d_in, const std::int64_t* d_offsets, Sum<T>* d_out, std::uint64_t n,
                   std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::sum, d_in, d_offsets, d_offsets + 1, d_out, n, segments, stream);
}
template <class T>
void segmented_sum(const Engine& e, const T* d_in, const std::int64_t* d_begin, const std::int64_t* d_end,
                   Sum<T>* d_out, std::uint64_t n, std::uint64_t segments, CUstream stream) {
  detail::segmented(e, Op::sum, d_in, d_begin, d_end, d_out, n, segments, stream);
}

// Per channel of interleaved data (HWC: element p * channels + c is pixel p of channel c), one
// launch, no transpose: d_out[c] receives channel c's answer, argmax/argmin's index the pixel.
// channels: 1 to 1024. pixels = 0 launches nothing. Asynchronous.
//
//   gpuk::reduce::per_channel_argmax(engine, d_image, d_best, 480 * 640, 17, stream);
template <class T>
void per_channel_argmax(const Engine& e, const T* d_in, Best<T>* d_out, std::uint64_t pixels, std::uint64_t channels,
                        CUstream stream) {
  detail::per_channel(e, Op::argmax, d_in, d_out, pixels, channels, stream);
}
template <class T>
void per_channel_argmin(const Engine& e, const T* d_in, Best<T>* d_out, std::uint64_t pixels, std::uint64_t channels,
                        CUstream stream) {
  detail::per_channel(e, Op::argmin, d_in, d_out, pixels, channels, stream);
}
template <class T>
void per_channel_max(const Engine& e, const T* d_in, Best<T>* d_out, std::uint64_t pixels, std::uint64_t channels,
                     CUstream stream) {
  detail::per_channel(e, Op::max, d_in, d_out, pixels, channels, stream);
}
template <class T>
void per_channel_min(const Engine& e, const T* d_in, Best<T>* d_out, std::uint64_t pixels, std::uint64_t channels,
                     CUstream stream) {
  detail::per_channel(e, Op::min, d_in, d_out, pixels, channels, stream);
}
template <class T>
void per_channel_sum(const Engine& e, const T* d_in, Sum<T>* d_out, std::uint64_t pixels, std::uint64_t channels,
                     CUstream stream) {
  detail::per_channel(e, Op::sum, d_in, d_out, pixels, channels, stream);
}

// To the host: launches, waits for `stream`, returns one answer per channel (pixels = 0: each
// channel's empty answer, index -1, nothing launched).
//
//   std::vector<gpuk::reduce::Best<float>> top = gpuk::reduce::per_channel_argmax(engine, d_image, 480 * 640, 17, stream);
template <class T>
std::vector<Best<T>> per_channel_argmax(const Engine& e, const T* d_in, std::uint64_t pixels, std::uint64_t channels,
                                        CUstream stream) {
  return detail::read_channels<Best<T>>(e, Op::argmax, d_in, pixels, channels, stream);
}
template <class T>
std::vector<Best<T>> per_channel_argmin(const Engine& e, const T* d_in, std::uint64_t pixels, std::uint64_t channels,
                                        CUstream stream) {
  return detail::read_channels<Best<T>>(e, Op::argmin, d_in, pixels, channels, stream);
}
template <class T>
std::vector<Best<T>> per_channel_max(const Engine& e, const T* d_in, std::uint64_t pixels, std::uint64_t channels,
                                     CUstream stream) {
  return detail::read_channels<Best<T>>(e, Op::max, d_in, pixels, channels, stream);
}
template <class T>
std::vector<Best<T>> per_channel_min(const Engine& e, const T* d_in, std::uint64_t pixels, std::uint64_t channels,
                                     CUstream stream) {
  return detail::read_channels<Best<T>>(e, Op::min, d_in, pixels, channels, stream);
}
template <class T>
std::vector<Sum<T>> per_channel_sum(const Engine& e, const T* d_in, std::uint64_t pixels, std::uint64_t channels,
                                    CUstream stream) {
  return detail::read_channels<Sum<T>>(e, Op::sum, d_in, pixels, channels, stream);
}

// A prepared reduction: every size bucket of [1, max_n] chosen, compiled, loaded and given its
// scratch when it is made (no call of it compiles or allocates), freed when it is destroyed.
// Serves one stream at a time (any stream). R: Best<T>, MinMax<T> for argminmax, Sum<T> for sum. With Scratch::caller
// it allocates no scratch: use_scratch() first (gpuk::PreparedHandle, docs/api.md).
//
//   auto amax = gpuk::reduce::prepare_argmax<float>(engine, max_n);
//   amax(d_in, d_best, n, stream);                  // asynchronous, into device memory
//   gpuk::reduce::Best<float> b = amax(d_in, n, stream);  // waits
template <class T, class R> class Prepared : public PreparedHandle {
 public:
  Prepared(const Engine& e, Op op, std::uint64_t max_n, Scratch scratch = Scratch::owned)
      : PreparedHandle(e, detail::spec<T>(op, max_n), scratch) {}
  void operator()(const T* d_in, R* d_out, std::uint64_t n, CUstream stream) { sizes_.launch({d_in, d_out}, n, stream); }
  R operator()(const T* d_in, std::uint64_t n, CUstream stream) {
    if (n == 0) return detail::empty<R>();
    return detail::from_bytes<R>(sizes_.launch_and_read({d_in, nullptr}, n, stream));
  }
};

template <class T> Prepared<T, Best<T>> prepare_argmax(const Engine& e, std::uint64_t max_n, Scratch s = Scratch::owned) {
  return {e, Op::argmax, max_n, s};
}
template <class T> Prepared<T, Best<T>> prepare_argmin(const Engine& e, std::uint64_t max_n, Scratch s = Scratch::owned) {
  return {e, Op::argmin, max_n, s};
}
template <class T>
Prepared<T, MinMax<T>> prepare_argminmax(const Engine& e, std::uint64_t max_n, Scratch s = Scratch::owned) {
  return {e, Op::argminmax, max_n, s};
}
template <class T> Prepared<T, Best<T>> prepare_max(const Engine& e, std::uint64_t max_n, Scratch s = Scratch::owned) {
  return {e, Op::max, max_n, s};
}
template <class T> Prepared<T, Best<T>> prepare_min(const Engine& e, std::uint64_t max_n, Scratch s = Scratch::owned) {
  return {e, Op::min, max_n, s};
}
template <class T> Prepared<T, Sum<T>> prepare_sum(const Engine& e, std::uint64_t max_n, Scratch s = Scratch::owned) {
  return {e, Op::sum, max_n, s};
}

// A prepared segmented reduction: up to max_n elements in up to max_segments segments, every
// size bucket of [1, max_n] chosen, compiled, loaded and given its scratch when it is made (the
// variant of each bucket chosen for max_segments segments), so that no call compiles or
// allocates. A call passes the segment count (0 to max_segments; 0 launches nothing) and the
// offsets as the typed calls do; an input of n = 0 still answers its (empty) segments.
//
//   auto h = gpuk::reduce::prepare_segmented_argmax<float>(engine, max_n, max_segments);
//   h(d_in, d_offsets, d_best, n, segments, stream);     // or d_begin, d_end
template <class T, class R> class PreparedSegmented : public PreparedHandle {
 public:
  PreparedSegmented(const Engine& e, Op op, std::uint64_t max_n, std::uint64_t max_segments,
                    Scratch scratch = Scratch::owned)
      : PreparedHandle(e, spec(op, max_n, max_segments), scratch), max_segments_(max_segments) {}
  std::uint64_t max_segments() const { return max_segments_; }

  void operator()(const T* d_in, const std::int64_t* d_offsets, R* d_out, std::uint64_t n, std::uint64_t segments,
                  CUstream stream) {
    (*this)(d_in, d_offsets, d_offsets + 1, d_out, n, segments, stream);
  }
  void operator()(const T* d_in, const std::int64_t* d_begin, const std::int64_t* d_end, R* d_out, std::uint64_t n,
                  std::uint64_t segments, CUstream stream) {
    if (segments == 0) return;  // nothing to answer: nothing is launched
    if (segments > max_segments_)
      throw ConfigError("this segmented reduction was prepared for up to " + std::to_string(max_segments_) +
                        " segments; " + std::to_string(segments) + " need a handle prepared for them");
    const Scalar count = Scalar::of(static_cast<std::int64_t>(segments));
    sizes_.launch({d_in, d_begin, d_end, d_out}, n > 0 ? n : 1, stream, &count);
  }

 private:
  static OperationSpec spec(Op op, std::uint64_t max_n, std::uint64_t max_segments) {
    // max_segments = 0 serves no segments at all: nothing is prepared (the spec is still checked).
    OperationSpec s = detail::layout_spec<T>(op, max_n > 0 ? max_n : 1, "segments", max_segments > 0 ? max_segments : 1);
    if (max_segments == 0) s.n = 0;
    return s;
  }
  std::uint64_t max_segments_;
};

// A prepared per-channel reduction of interleaved data with `channels` channels (1 to 1024) and
// up to max_pixels pixels: prepared as PreparedSegmented is. pixels = 0 launches nothing.
//
//   auto h = gpuk::reduce::prepare_per_channel_argmax<float>(engine, 480 * 640, 17);
//   h(d_image, d_best, pixels, stream);
template <class T, class R> class PreparedPerChannel : public PreparedHandle {
 public:
  PreparedPerChannel(const Engine& e, Op op, std::uint64_t max_pixels, std::uint64_t channels,
                     Scratch scratch = Scratch::owned)
      : PreparedHandle(e, spec(op, max_pixels, channels), scratch, channels), channels_(channels) {}
  std::uint64_t channels() const { return channels_; }
  std::uint64_t max_pixels() const { return channels_ ? sizes_.max_n() / channels_ : 0; }

  void operator()(const T* d_in, R* d_out, std::uint64_t pixels, CUstream stream) {
    check(pixels);
    sizes_.launch({d_in, d_out}, pixels * channels_, stream);
  }
  // Waits; one answer per channel (pixels = 0: each channel's empty answer, index -1).
  std::vector<R> operator()(const T* d_in, std::uint64_t pixels, CUstream stream) {
    check(pixels);
    return detail::channel_answers<R>(sizes_.launch_and_read({d_in, nullptr}, pixels * channels_, stream), channels_);
  }

 private:
  void check(std::uint64_t pixels) const {
    if (pixels > max_pixels())
      throw ConfigError("this per-channel reduction was prepared for up to " + std::to_string(max_pixels()) +
                        " pixels; " + std::to_string(pixels) + " need a handle prepared for them");
  }
  static OperationSpec spec(Op op, std::uint64_t max_pixels, std::uint64_t channels) {
    if (channels > 0 && max_pixels > ~std::uint64_t{0} / channels)
      throw ConfigError("max_pixels * channels overflows 64 bits");
    return detail::layout_spec<T>(op, max_pixels * channels, "channels", channels);
  }
  std::uint64_t channels_;
};

template <class T>
PreparedSegmented<T, Best<T>> prepare_segmented_argmax(const Engine& e, std::uint64_t max_n, std::uint64_t max_segments,
                                                       Scratch s = Scratch::owned) {
  return {e, Op::argmax, max_n, max_segments, s};
}
template <class T>
PreparedSegmented<T, Best<T>> prepare_segmented_argmin(const Engine& e, std::uint64_t max_n, std::uint64_t max_segments,
                                                       Scratch s = Scratch::owned) {
  return {e, Op::argmin, max_n, max_segments, s};
}
template <class T>
PreparedSegmented<T, Best<T>> prepare_segmented_max(const Engine& e, std::uint64_t max_n, std::uint64_t max_segments,
                                                    Scratch s = Scratch::owned) {
  return {e, Op::max, max_n, max_segments, s};
}
template <class T>
PreparedSegmented<T, Best<T>> prepare_segmented_min(const Engine& e, std::uint64_t max_n, std::uint64_t max_segments,
                                                    Scratch s = Scratch::owned) {
  return {e, Op::min, max_n, max_segments, s};
}
template <class T>
PreparedSegmented<T, Sum<T>> prepare_segmented_sum(const Engine& e, std::uint64_t max_n, std::uint64_t max_segments,
                                                   Scratch s = Scratch::owned) {
  return {e, Op::sum, max_n, max_segments, s};
}
template <class T>
PreparedPerChannel<T, Best<T>> prepare_per_channel_argmax(const Engine& e, std::uint64_t max_pixels,
                                                          std::uint64_t channels, Scratch s = Scratch::owned) {
  return {e, Op::argmax, max_pixels, channels, s};
}
template <class T>
PreparedPerChannel<T, Best<T>> prepare_per_channel_argmin(const Engine& e, std::uint64_t max_pixels,
                                                          std::uint64_t channels, Scratch s = Scratch::owned) {
  return {e, Op::argmin, max_pixels, channels, s};
}
template <class T>
PreparedPerChannel<T, Best<T>> prepare_per_channel_max(const Engine& e, std::uint64_t max_pixels,
                                                       std::uint64_t channels, Scratch s = Scratch::owned) {
  return {e, Op::max, max_pixels, channels, s};
}
template <class T>
PreparedPerChannel<T, Best<T>> prepare_per_channel_min(const Engine& e, std::uint64_t max_pixels,
                                                       std::uint64_t channels, Scratch s = Scratch::owned) {
  return {e, Op::min, max_pixels, channels, s};
}
template <class T>
PreparedPerChannel<T, Sum<T>> prepare_per_channel_sum(const Engine& e, std::uint64_t max_pixels,
                                                      std::uint64_t channels, Scratch s = Scratch::owned) {
  return {e, Op::sum, max_pixels, channels, s};
}

}  // namespace gpuk::reduce
