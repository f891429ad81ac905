// Segmented and per-channel reductions on the GPU: every kernel file of the layouts (each
// parameter at its smallest and largest value, the others at their defaults; every operation and
// several dtypes at the defaults) against the CPU reference, on odd sizes, empty and one-element
// segments, misaligned starts, overlapping segments, NaN, ties and -0.0, into poisoned outputs;
// then the typed calls of gpuk/reduce.hpp, and the per-channel call timed beside the 17 argmax
// launches it replaces. Without a GPU it exits 77 (skipped).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "api/engine_internals.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "helpers.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "reduce/reducer.hpp"

using namespace gpuk;

namespace {

Engine& engine() {
  static Engine e;
  return e;
}

const reduce::Reducer& reducer() {
  const auto* r = interface_of<reduce::Reducer>(EngineInternals::plugins(engine()).get("reduce"));
  REQUIRE(r != nullptr);
  return *r;
}

template <class T> HostArray host(const std::vector<T>& v) {
  HostArray a(dtype_of<T>(), v.size());
  std::copy(v.begin(), v.end(), a.as<T>().begin());
  return a;
}

template <class T> DeviceBuffer upload(const std::vector<T>& v, const Stream& s) {
  DeviceBuffer d(std::max<std::size_t>(16, v.size() * sizeof(T)));
  if (!v.empty()) d.upload(v.data(), v.size() * sizeof(T), s);
  return d;
}

constexpr unsigned char kPoison = 0xA5;

// Compares the device answers (16 bytes each, sum: 8) with the CPU reference; the mismatches.
template <class T>
std::vector<std::string> compare(const std::vector<reduce::Answer>& want, const std::vector<unsigned char>& got, reduce::Op op,
                                 bool abs, const std::vector<std::int64_t>& lengths) {
  std::vector<std::string> bad;
  const std::size_t each = op == reduce::Op::sum ? 8 : 16;
  const DType v = abs && dtype_of<T>() == DType::int32   ? DType::uint32
                  : abs && dtype_of<T>() == DType::int64 ? DType::uint64
                                                         : dtype_of<T>();
  for (std::size_t s = 0; s < want.size(); ++s) {
    const unsigned char* p = got.data() + s * each;
    std::ostringstream why;
    why << "result " << s << " (length " << lengths[s] << "): ";
    double got_f = 0, want_f = want[s].float_value;
    bool ok = true;
    if (op == reduce::Op::sum) {
      if (dtype_is_float(v)) {
        double g;
        std::memcpy(&g, p, 8);
        const double tol = 1e-9 * (std::fabs(want_f) + static_cast<double>(lengths[s]));
        ok = (std::isnan(g) && std::isnan(want_f)) || std::fabs(g - want_f) <= tol;
        why << "sum " << g << ", want " << want_f;
      } else if (dtype_is_signed(v)) {
        std::int64_t g;
        std::memcpy(&g, p, 8);
        ok = g == want[s].int_value;
        why << "sum " << g << ", want " << want[s].int_value;
      } else {
        std::uint64_t g;
        std::memcpy(&g, p, 8);
        ok = g == want[s].uint_value;
        why << "sum " << g << ", want " << want[s].uint_value;
      }
    } else {
      std::int64_t index;
      std::memcpy(&index, p + 8, 8);
      visit_dtype(v, [&](auto zero) {
        using V = decltype(zero);
        V g;
        std::memcpy(&g, p, sizeof g);
        if constexpr (std::is_floating_point_v<V>) {
          got_f = static_cast<double>(g);
          ok = (std::isnan(got_f) && std::isnan(want_f)) ||
               (got_f == want_f && std::signbit(got_f) == std::signbit(want_f));
          why << "value " << got_f << ", want " << want_f;
        } else if constexpr (std::is_signed_v<V>) {
          ok = static_cast<std::int64_t>(g) == want[s].int_value;
          why << "value " << +g << ", want " << want[s].int_value;
        } else {
          ok = static_cast<std::uint64_t>(g) == want[s].uint_value;
          why << "value " << +g << ", want " << want[s].uint_value;
        }
      });
      if (want[s].index) {
        ok = ok && index == *want[s].index;
        why << ", index " << index << ", want " << *want[s].index;
      }
    }
    if (!ok) bad.push_back(why.str());
  }
  return bad;
}

struct Pick {
  std::string kernel;
  std::map<std::string, std::int64_t> params;
  std::string text() const {
    std::string t = kernel;
    for (const auto& [k, v] : params) t += " " + k + "=" + std::to_string(v);
    return t;
  }
};

// The file's defaults, then each parameter at its smallest and at its largest value.
std::vector<Pick> extremes(const std::string& kernel, std::int64_t min_block = 0) {
  const auto file = EngineInternals::kernels(engine()).find("reduce", kernel);
  std::vector<Pick> out = {{kernel, {}}};
  for (const ParamSpec& p : file->params)
    for (std::int64_t v : {p.values.front(), p.values.back()}) {
      if (v == p.default_value) continue;
      if (p.name == "BLOCK" && v < min_block) continue;
      Pick x{kernel, {{p.name, v}}};
      // BLOCK * BLOCKS_PER_SM <= 2048: the other one lowered where the defaults would break it.
      const ParamSpec* block = file->param("BLOCK");
      const ParamSpec* per_sm = file->param("BLOCKS_PER_SM");
      if (p.name == "BLOCK" && per_sm && v * per_sm->default_value > 2048) x.params["BLOCKS_PER_SM"] = 2048 / v;
      if (p.name == "BLOCKS_PER_SM" && block && v * block->default_value > 2048) x.params["BLOCK"] = 2048 / v;
      out.push_back(x);
    }
  return out;
}

struct Segments {
  std::vector<std::int64_t> begin, end;
  std::vector<std::int64_t> lengths() const {
    std::vector<std::int64_t> l(begin.size());
    for (std::size_t s = 0; s < l.size(); ++s) l[s] = std::max<std::int64_t>(0, end[s] - begin[s]);
    return l;
  }
};

// Runs one variant of a segmented reduction into a poisoned output; the mismatches.
template <class T>
std::vector<std::string> run_segments(const Pick& v, reduce::Op op, bool abs, const std::vector<T>& x,
                                      const Segments& seg, const Stream& stream) {
  OperationSpec spec;
  spec.family = "reduce";
  spec.operation = reduce::info(op).name;
  spec.dtype = dtype_of<T>();
  spec.n = x.size();
  spec.options = {{"segments", std::to_string(seg.begin.size())}, {"abs", abs ? "true" : "false"}};
  spec.kernel = v.kernel;
  spec.params = v.params;
  Operation operation = engine().prepare(spec);
  const DeviceBuffer d_x = upload(x, stream), d_b = upload(seg.begin, stream), d_e = upload(seg.end, stream);
  const std::size_t each = op == reduce::Op::sum ? 8 : 16;
  DeviceBuffer d_out(seg.begin.size() * each);
  std::vector<unsigned char> got(seg.begin.size() * each);
  std::vector<std::string> bad;
  const auto want = reducer().reduce_segments_on_cpu(host(x), seg.begin, seg.end, op, abs);
  for (int round = 0; round < 2; ++round) {  // twice: the counters the kernels leave must be zero again
    d_out.fill_bytes(kPoison, stream);
    const Scalar segments = Scalar::of(static_cast<std::int64_t>(seg.begin.size()));
    operation.launch({d_x.get(), d_b.get(), d_e.get(), d_out.get()}, x.size(), stream.get(), &segments);
    d_out.download(got.data(), got.size(), stream);
    stream.synchronize();
    for (auto& b : compare<T>(want, got, op, abs, seg.lengths())) bad.push_back("round " + std::to_string(round) + ": " + b);
  }
  return bad;
}

template <class T>
std::vector<std::string> run_channels(const Pick& v, reduce::Op op, bool abs, const std::vector<T>& x,
                                      std::int64_t channels, const Stream& stream) {
  OperationSpec spec;
  spec.family = "reduce";
  spec.operation = reduce::info(op).name;
  spec.dtype = dtype_of<T>();
  spec.n = x.size();
  spec.options = {{"channels", std::to_string(channels)}, {"abs", abs ? "true" : "false"}};
  spec.kernel = v.kernel;
  spec.params = v.params;
  Operation operation = engine().prepare(spec);
  const DeviceBuffer d_x = upload(x, stream);
  const std::size_t each = op == reduce::Op::sum ? 8 : 16;
  DeviceBuffer d_out(static_cast<std::size_t>(channels) * each);
  std::vector<unsigned char> got(static_cast<std::size_t>(channels) * each);
  std::vector<std::string> bad;
  const auto want = reducer().reduce_channels_on_cpu(host(x), channels, op, abs);
  const std::vector<std::int64_t> lengths(static_cast<std::size_t>(channels), static_cast<std::int64_t>(x.size()) / channels);
  for (int round = 0; round < 2; ++round) {
    d_out.fill_bytes(kPoison, stream);
    operation.launch({d_x.get(), d_out.get()}, x.size(), stream.get());
    d_out.download(got.data(), got.size(), stream);
    stream.synchronize();
    for (auto& b : compare<T>(want, got, op, abs, lengths)) bad.push_back("round " + std::to_string(round) + ": " + b);
  }
  return bad;
}

// Values in [-1, 1) (integers: a small range, so that ties are common), with planted cases.
template <class T> std::vector<T> values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  for (auto& v : x) {
    if constexpr (std::is_floating_point_v<T>) v = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(rng));
    else if constexpr (std::is_signed_v<T>) v = static_cast<T>(static_cast<std::int64_t>(rng() % 2001) - 1000);
    else v = static_cast<T>(rng() % 2001);
  }
  return x;
}

// Lengths 0, 1, 1, 2, 3, 5, 0, 7, 31, ... (misaligned starts), then two long ones; n odd.
Segments mixed_segments(std::int64_t n) {
  const std::vector<std::int64_t> lengths = {0, 1, 1, 2, 3, 5, 0, 7, 31, 32, 33, 100, 1000, 4097, 65537, 300001, 0, 1};
  Segments s;
  std::int64_t at = 0;
  for (auto l : lengths) {
    s.begin.push_back(at);
    s.end.push_back(at + l);
    at += l;
  }
  const std::int64_t half = (n - at) / 2;
  s.begin.push_back(at);
  s.end.push_back(at + half);
  s.begin.push_back(at + half);
  s.end.push_back(n);
  s.begin.push_back(n);  // empty, at the very end
  s.end.push_back(n);
  s.begin.push_back(5);  // end before begin: empty
  s.end.push_back(2);
  return s;
}

// Ties, NaNs and signed zeros in the mixed segments (floats).
template <class T> void plant(std::vector<T>& x, const Segments& s) {
  if constexpr (std::is_floating_point_v<T>) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (std::int64_t i = s.begin[5]; i < s.end[5]; ++i) x[i] = (i % 2) ? T(-0.0) : T(0.0);  // zeros only
    x[s.begin[3]] = T(-0.0);  // -0.0 then +0.0
    x[s.begin[3] + 1] = T(0.0);
    x[s.begin[12] + 10] = nan;  // two NaNs
    x[s.begin[12] + 900] = nan;
    x[s.begin[15] + 7] = T(5);  // a tie of the largest, then of the smallest
    x[s.begin[15] + 200000] = T(5);
    x[s.begin[15] + 11] = T(-5);
    x[s.begin[15] + 250000] = T(-5);
    x[s.begin[18] + 12345] = T(7);  // far into a long segment: many chunks
    x[s.begin[18] + 99999] = T(7);
  }
}

std::string list(const std::vector<std::string>& bad) {
  std::string s;
  for (std::size_t i = 0; i < std::min<std::size_t>(bad.size(), 5); ++i) s += "\n  " + bad[i];
  return s;
}

}  // namespace

TEST_CASE("segmented_chunks and segmented_warps: every operation, odd sizes, empty and one-element segments, NaN, ties, -0.0") {
  const Device device(0);
  const Stream stream;
  const std::int64_t n = 1000003;
  const Segments seg = mixed_segments(n);
  auto xf = values<float>(static_cast<std::size_t>(n), 1);
  plant(xf, seg);
  auto xd = values<double>(static_cast<std::size_t>(n), 2);
  plant(xd, seg);
  const auto xi = values<std::int32_t>(static_cast<std::size_t>(n), 3);
  const auto xu = values<std::uint64_t>(static_cast<std::size_t>(n), 4);
  for (const char* kernel : {"segmented_chunks", "segmented_warps"}) {
    const Pick def{kernel, {}};
    // Every operation of float32 and int32; |x| and the 8-byte types on a few (one compile each).
    for (const reduce::OpInfo& op : reduce::kOps) {
      if (op.pair) continue;  // argminmax: one contiguous array only
      const auto f = run_segments(def, op.op, false, xf, seg, stream);
      CHECK_MESSAGE(f.empty(), def.text() << " " << op.name << " float32:" << list(f));
      const auto i = run_segments(def, op.op, false, xi, seg, stream);
      CHECK_MESSAGE(i.empty(), def.text() << " " << op.name << " int32:" << list(i));
    }
    for (reduce::Op op : {reduce::Op::argmax, reduce::Op::argmin}) {
      const auto f = run_segments(def, op, true, xf, seg, stream);
      CHECK_MESSAGE(f.empty(), def.text() << " " << reduce::info(op).name << " float32 |x|:" << list(f));
    }
    const auto i = run_segments(def, reduce::Op::max, true, xi, seg, stream);
    CHECK_MESSAGE(i.empty(), def.text() << " max int32 |x|:" << list(i));
    for (reduce::Op op : {reduce::Op::argmax, reduce::Op::sum}) {
      const auto d = run_segments(def, op, false, xd, seg, stream);
      CHECK_MESSAGE(d.empty(), def.text() << " " << reduce::info(op).name << " float64:" << list(d));
    }
    for (reduce::Op op : {reduce::Op::argmin, reduce::Op::sum}) {
      const auto u = run_segments(def, op, false, xu, seg, stream);
      CHECK_MESSAGE(u.empty(), def.text() << " " << reduce::info(op).name << " uint64:" << list(u));
    }
    for (const Pick& v : extremes(kernel)) {
      if (v.params.empty()) continue;  // the defaults: above
      const auto f = run_segments(v, reduce::Op::argmax, false, xf, seg, stream);
      CHECK_MESSAGE(f.empty(), v.text() << " argmax:" << list(f));
    }
  }
  // Sums of many chunks, combined in order.
  const Pick small_chunks{"segmented_chunks", {{"CHUNK", 8192}}};
  const auto sums = run_segments(small_chunks, reduce::Op::sum, false, xf, seg, stream);
  CHECK_MESSAGE(sums.empty(), small_chunks.text() << " sum:" << list(sums));
}

TEST_CASE("segments that overlap, and many short segments: chunks grow to fit, warps keep up") {
  const Device device(0);
  const Stream stream;
  const std::int64_t n = 300007;
  const auto x = values<float>(static_cast<std::size_t>(n), 5);
  // Eight segments over the whole input and three overlapping others: more chunks than n alone.
  Segments over;
  for (int k = 0; k < 8; ++k) {
    over.begin.push_back(k);
    over.end.push_back(n - k);
  }
  over.begin.insert(over.begin.end(), {10, 5, n - 1});
  over.end.insert(over.end.end(), {200000, 20, n});
  for (const Pick& v : {Pick{"segmented_chunks", {{"CHUNK", 8192}}}, Pick{"segmented_warps", {}}}) {
    const auto bad = run_segments(v, reduce::Op::argmin, false, x, over, stream);
    CHECK_MESSAGE(bad.empty(), v.text() << " overlapping:" << list(bad));
  }
  // 5,001 segments of 0 to 299 elements.
  std::mt19937_64 rng(6);
  Segments small;
  std::int64_t at = 0;
  for (int s = 0; s < 5001 && at < n; ++s) {
    const std::int64_t l = std::min<std::int64_t>(static_cast<std::int64_t>(rng() % 300), n - at);
    small.begin.push_back(at);
    small.end.push_back(at + l);
    at += l;
  }
  for (const Pick& v : extremes("segmented_warps")) {
    const auto bad = run_segments(v, reduce::Op::argmax, true, x, small, stream);
    CHECK_MESSAGE(bad.empty(), v.text() << " short segments:" << list(bad));
  }
  const auto chunks = run_segments(Pick{"segmented_chunks", {}}, reduce::Op::max, false, x, small, stream);
  CHECK_MESSAGE(chunks.empty(), "segmented_chunks short segments:" << list(chunks));
}

TEST_CASE("per_channel: every operation, 1 to 128 channels, odd pixel counts, NaN and ties") {
  const Device device(0);
  const Stream stream;
  const std::int64_t pixels = 97 * 101;
  for (std::int64_t channels : {1, 3, 17, 128}) {
    auto xf = values<float>(static_cast<std::size_t>(pixels * channels), 7 + channels);
    if (channels >= 3) {
      xf[5 * channels + 2] = std::numeric_limits<float>::quiet_NaN();  // channel 2: NaN at pixel 5
      xf[9000 * channels + 2] = std::numeric_limits<float>::quiet_NaN();
      xf[10 * channels + 1] = 3;  // channel 1: a tie of the largest
      xf[7000 * channels + 1] = 3;
    }
    const auto xi = values<std::int32_t>(static_cast<std::size_t>(pixels * channels), 8 + channels);
    const Pick def{"per_channel", {}};
    for (const reduce::OpInfo& op : reduce::kOps) {
      if (op.pair) continue;  // argminmax: one contiguous array only
      const auto f = run_channels(def, op.op, false, xf, channels, stream);
      CHECK_MESSAGE(f.empty(), "per_channel " << op.name << " float32, channels " << channels << ":" << list(f));
    }
    for (reduce::Op op : {reduce::Op::argmax, reduce::Op::sum}) {
      const auto i = run_channels(def, op, true, xi, channels, stream);
      CHECK_MESSAGE(i.empty(), "per_channel " << reduce::info(op).name << " |int32|, channels " << channels << ":" << list(i));
    }
    if (channels != 17) continue;
    for (const Pick& v : extremes("per_channel", channels)) {
      if (v.params.empty()) continue;
      const auto f = run_channels(v, reduce::Op::argmax, false, xf, channels, stream);
      CHECK_MESSAGE(f.empty(), v.text() << " channels 17:" << list(f));
    }
  }
}

TEST_CASE("the typed calls: segmented_* with one offsets array or begin/end, per_channel_*; zero counts launch nothing") {
  const Device device(0);
  const Stream stream;
  const std::int64_t n = 100001;
  const auto x = values<float>(static_cast<std::size_t>(n), 9);
  std::vector<std::int64_t> offsets = {0, 0, 1, 4000, 4001, 77777, n};
  const DeviceBuffer d_x = upload(x, stream), d_off = upload(offsets, stream);
  const std::size_t segments = offsets.size() - 1;
  const std::vector<std::int64_t> begin(offsets.begin(), offsets.end() - 1), end(offsets.begin() + 1, offsets.end());
  const auto want = reducer().reduce_segments_on_cpu(host(x), begin, end, reduce::Op::argmax, false);
  DeviceBuffer d_best(segments * sizeof(reduce::Best<float>));
  d_best.fill_bytes(kPoison, stream);
  const auto* px = reinterpret_cast<const float*>(d_x.get());
  const auto* po = reinterpret_cast<const std::int64_t*>(d_off.get());
  auto* pb = reinterpret_cast<reduce::Best<float>*>(d_best.get());
  reduce::segmented_argmax(engine(), px, po, pb, n, segments, stream.get());
  std::vector<reduce::Best<float>> got(segments);
  d_best.download(got.data(), segments * sizeof got[0], stream);
  stream.synchronize();
  for (std::size_t s = 0; s < segments; ++s) {
    CAPTURE(s);
    CHECK(got[s].index == *want[s].index);
    CHECK(static_cast<double>(got[s].value) == want[s].float_value);
  }
  // Separate begin and end arrays; sums.
  const DeviceBuffer d_b = upload(begin, stream), d_e = upload(end, stream);
  DeviceBuffer d_sum(segments * sizeof(double));
  reduce::segmented_sum(engine(), px, reinterpret_cast<const std::int64_t*>(d_b.get()),
                        reinterpret_cast<const std::int64_t*>(d_e.get()), reinterpret_cast<double*>(d_sum.get()), n,
                        segments, stream.get());
  std::vector<double> sums(segments);
  d_sum.download(sums.data(), segments * sizeof(double), stream);
  stream.synchronize();
  const auto want_sum = reducer().reduce_segments_on_cpu(host(x), begin, end, reduce::Op::sum, false);
  for (std::size_t s = 0; s < segments; ++s) CHECK(std::fabs(sums[s] - want_sum[s].float_value) <= 1e-9 * (1 + std::fabs(want_sum[s].float_value)));
  // Zero segments or pixels: nothing is written.
  d_best.fill_bytes(kPoison, stream);
  reduce::segmented_argmax(engine(), px, po, pb, n, 0, stream.get());
  reduce::per_channel_argmax(engine(), px, pb, 0, 17, stream.get());
  unsigned char first = 0;
  d_best.download(&first, 1, stream);
  stream.synchronize();
  CHECK(first == kPoison);
  // Per channel: 3 channels of 33,333 pixels (n - 2 elements).
  reduce::per_channel_argmin(engine(), px, pb, 33333, 3, stream.get());
  d_best.download(got.data(), 3 * sizeof got[0], stream);
  stream.synchronize();
  std::vector<float> head(x.begin(), x.begin() + 99999);
  const auto want_c = reducer().reduce_channels_on_cpu(host(head), 3, reduce::Op::argmin, false);
  for (int c = 0; c < 3; ++c) CHECK(got[c].index == *want_c[c].index);
}

TEST_CASE("per-channel argmax of a 480x640x17 float32 image: one launch, timed beside 17 argmax launches on planes") {
  // The path it replaces transposes the image into 17 planes, then runs 17 argmax launches. Here
  // the planes are made on the host, untimed: the 17 launches alone are a lower bound of that
  // path's time (a transpose adds at least a read and a write of the image).
  const Device device(0);
  const Stream stream;
  const std::uint64_t pixels = 480 * 640, channels = 17;
  const auto x = values<float>(pixels * channels, 10);
  std::vector<float> planes(x.size());
  for (std::uint64_t p = 0; p < pixels; ++p)
    for (std::uint64_t c = 0; c < channels; ++c) planes[c * pixels + p] = x[p * channels + c];
  const DeviceBuffer d_x = upload(x, stream), d_planes = upload(planes, stream);
  DeviceBuffer d_best(channels * sizeof(reduce::Best<float>)), d_each(channels * sizeof(reduce::Best<float>));
  const auto* px = reinterpret_cast<const float*>(d_x.get());
  const auto* pp = reinterpret_cast<const float*>(d_planes.get());
  auto* pb = reinterpret_cast<reduce::Best<float>*>(d_best.get());
  auto* pe = reinterpret_cast<reduce::Best<float>*>(d_each.get());
  const auto one_launch = [&] { reduce::per_channel_argmax(engine(), px, pb, pixels, channels, stream.get()); };
  const auto per_plane = [&] {
    for (std::uint64_t c = 0; c < channels; ++c) reduce::argmax(engine(), pp + c * pixels, pe + c, pixels, stream.get());
  };
  const auto time = [&](const auto& f) {
    for (int i = 0; i < 5; ++i) f();  // warm: prepared, compiled, loaded
    Event start, stop;
    start.record(stream);
    constexpr int kRepeats = 100;
    for (int i = 0; i < kRepeats; ++i) f();
    stop.record(stream);
    stream.synchronize();
    return stop.elapsed_since(start) * 1000.0 / kRepeats;  // microseconds per call, back to back
  };
  const double us_one = time(one_launch), us_planes = time(per_plane), us_one_again = time(one_launch);
  MESSAGE("per_channel_argmax, 480x640x17 float32: " << us_one << " us per call (again: " << us_one_again
          << " us); 17 argmax launches on planes (no transpose): " << us_planes << " us; ratio "
          << us_planes / std::max(us_one, us_one_again));
  std::vector<reduce::Best<float>> a(channels), b(channels);
  d_best.download(a.data(), channels * sizeof a[0], stream);
  d_each.download(b.data(), channels * sizeof b[0], stream);
  stream.synchronize();
  const auto want = reducer().reduce_channels_on_cpu(host(x), static_cast<std::int64_t>(channels), reduce::Op::argmax, false);
  for (std::uint64_t c = 0; c < channels; ++c) {
    CAPTURE(c);
    CHECK(a[c].index == *want[c].index);
    CHECK(b[c].index == *want[c].index);
  }
}
