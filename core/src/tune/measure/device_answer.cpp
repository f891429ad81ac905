// Verification on the device for a sweep (tune/measure/device_answer.hpp).
#include "tune/measure/device_answer.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "data/compare_arrays.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

namespace gpuk {

namespace {

constexpr const char* kSource = R"(// gpuk's device-side comparison of a sweep's outputs (core/src/tune/measure/device_answer.cpp).
typedef unsigned long long u64;

// The first byte offset where a and b differ, into *first (atomicMin; the caller sets it to
// ~0 first). Whole 8-byte words, then the tail byte by byte; a, b: 8-byte aligned.
__global__ void gpuk_first_difference(const unsigned char* a, const unsigned char* b, u64 bytes, u64* first) {
  const u64 words = bytes / 8;
  const u64* wa = reinterpret_cast<const u64*>(a);
  const u64* wb = reinterpret_cast<const u64*>(b);
  const u64 stride = static_cast<u64>(blockDim.x) * gridDim.x;
  const u64 id = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (u64 i = id; i < words; i += stride)
    if (wa[i] != wb[i]) {
      const u64 x = wa[i] ^ wb[i];
      atomicMin(first, i * 8 + static_cast<u64>(__ffsll(static_cast<long long>(x)) - 1) / 8);  // little endian
      break;
    }
  for (u64 i = words * 8 + id; i < bytes; i += stride)
    if (a[i] != b[i]) {
      atomicMin(first, i);
      break;
    }
}

// to[0, bytes) = from[0, bytes); 8-byte aligned.
__global__ void gpuk_copy_bytes(unsigned char* to, const unsigned char* from, u64 bytes) {
  const u64 words = bytes / 8;
  const u64 stride = static_cast<u64>(blockDim.x) * gridDim.x;
  const u64 id = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (u64 i = id; i < words; i += stride) reinterpret_cast<u64*>(to)[i] = reinterpret_cast<const u64*>(from)[i];
  for (u64 i = words * 8 + id; i < bytes; i += stride) to[i] = from[i];
}
)";

constexpr const char* kWithinSource = R"(// gpuk's device-side comparison of a sweep's outputs by a compare rule
// (core/src/tune/measure/device_answer.cpp).
typedef unsigned long long u64;

// gpuk's compare_arrays (core/src/data/compare_arrays.cpp) on the device, element by element:
// got against want by the rule (exact: integers without a tolerance; ulps >= 0: floats within
// that many units in the last place; else |got - want| <= atol + rtol * |want|), the same
// operations in double, rounded to nearest and never contracted. Into out: [0] mismatches,
// [1] the largest finite absolute error, [2] the largest relative error (non-negative doubles
// as their bits, whose order is theirs; NaN errors left out, as std::max leaves them).
__device__ long long gpuk_ordered(float v) { int i = __float_as_int(v); return i < 0 ? -2147483648LL - i : i; }
__device__ long long gpuk_ordered(double v) {
  long long i = __double_as_longlong(v);
  return i < 0 ? (-9223372036854775807LL - 1) - i : i;
}
template <class T> struct gpuk_float { static constexpr bool value = false; };
template <> struct gpuk_float<float> { static constexpr bool value = true; };
template <> struct gpuk_float<double> { static constexpr bool value = true; };

template <class T>
__global__ void gpuk_within(const T* got, const T* want, u64 n, int exact, double atol, double rtol, long long ulps,
                            u64* out) {
  const u64 stride = static_cast<u64>(blockDim.x) * gridDim.x;
  u64 bad = 0;
  double max_abs = 0, max_rel = 0;
  for (u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T gt = got[i], wt = want[i];
    const double g = static_cast<double>(gt), w = static_cast<double>(wt);
    bool ok = false;
    if (gpuk_float<T>::value && (isnan(w) || isnan(g))) {
      ok = isnan(w) && isnan(g);
    } else {
      const double abs_err = fabs(__dsub_rn(g, w));
      const double rel_err = w != 0 ? __ddiv_rn(abs_err, fabs(w)) : (abs_err == 0 ? 0.0 : __longlong_as_double(0x7ff0000000000000LL));
      if (isfinite(abs_err) && abs_err > max_abs) max_abs = abs_err;
      if (rel_err > max_rel) max_rel = rel_err;
      const bool within = abs_err <= __dadd_rn(atol, __dmul_rn(rtol, fabs(w)));
      if constexpr (!gpuk_float<T>::value) {
        ok = exact ? gt == wt : within;
      } else {
        if (isinf(w) || isinf(g)) {
          ok = g == w;
        } else if (ulps >= 0) {
          const long long a = gpuk_ordered(gt), b = gpuk_ordered(wt);
          ok = (a > b ? static_cast<u64>(a) - static_cast<u64>(b) : static_cast<u64>(b) - static_cast<u64>(a)) <=
               static_cast<u64>(ulps);
        } else {
          ok = within;
        }
      }
    }
    bad += ok ? 0 : 1;
  }
  for (int d = 16; d > 0; d /= 2) {
    bad += __shfl_xor_sync(0xffffffffu, bad, d);
    max_abs = fmax(max_abs, __shfl_xor_sync(0xffffffffu, max_abs, d));
    max_rel = fmax(max_rel, __shfl_xor_sync(0xffffffffu, max_rel, d));
  }
  if ((threadIdx.x & 31) == 0) {
    if (bad) atomicAdd(&out[0], bad);
    if (max_abs > 0) atomicMax(&out[1], static_cast<u64>(__double_as_longlong(max_abs)));
    if (max_rel > 0) atomicMax(&out[2], static_cast<u64>(__double_as_longlong(max_rel)));
  }
}
)";

constexpr int kThreads = 256;

// Whether `bytes` more fit in the device's free memory with room left for the variants' scratch:
// as much again, and 512 MiB (a variant's scratch is allocated before the one it replaces is freed).
bool fits_with_room(std::uint64_t bytes, const std::string& what, std::string* why) {
  std::size_t free = 0, all = 0;
  GPUK_CU(driver().cuMemGetInfo(&free, &all), "the sweep's device comparison");
  if (2 * bytes + (512ull << 20) <= free) return true;
  if (why)
    *why = what + " (" + std::to_string(bytes >> 20) + " MiB) and room for the variants' scratch do not fit in the "
           "free memory (" + std::to_string(free >> 20) + " MiB)";
  return false;
}

// The device type of each dtype, for gpuk_within's instances.
std::string within_name(DType dtype) {
  switch (dtype) {
    case DType::int32: return "gpuk_within<int>";
    case DType::uint32: return "gpuk_within<unsigned int>";
    case DType::int64: return "gpuk_within<long long>";
    case DType::uint64: return "gpuk_within<unsigned long long>";
    case DType::float32: return "gpuk_within<float>";
    case DType::float64: return "gpuk_within<double>";
  }
  return "";
}

constexpr DType kDTypes[] = {DType::int32, DType::uint32, DType::int64, DType::uint64, DType::float32, DType::float64};

}  // namespace

const char* DeviceAnswer::source() { return kSource; }

std::vector<std::string> DeviceAnswer::kernel_names() { return {"gpuk_first_difference", "gpuk_copy_bytes"}; }

const char* DeviceAnswer::within_source() { return kWithinSource; }

std::vector<std::string> DeviceAnswer::within_kernel_names() {
  std::vector<std::string> names;
  for (const DType d : kDTypes) names.push_back(within_name(d));
  return names;
}

CompiledKernels DeviceAnswer::compile(const Jit& jit, NvrtcProcesses* processes) {
  KernelFile file;
  file.path = "gpuk_device_answer.cu";
  file.source = kSource;
  return jit.compile(file, kernel_names(), processes);
}

CompiledKernels DeviceAnswer::compile_within(const Jit& jit, NvrtcProcesses* processes) {
  KernelFile file;
  file.path = "gpuk_device_within.cu";
  file.source = kWithinSource;
  return jit.compile(file, within_kernel_names(), processes);
}

void DeviceAnswer::load_within(const CompiledKernels& compiled) {
  within_kernels_ = load_kernels(compiled, within_kernel_names(), "the sweep's device comparison by a rule");
  for (const DType d : kDTypes) within_[static_cast<std::size_t>(d)] = within_kernels_.get(within_name(d)).function;
}

DeviceAnswer::DeviceAnswer(const CompiledKernels& compiled, const DeviceInfo& info)
    : blocks_(std::max(1, info.sm_count) * 8), first_(sizeof(std::uint64_t)), counts_(3 * sizeof(std::uint64_t)) {
  kernels_ = load_kernels(compiled, kernel_names(), "the sweep's device comparison");
  compare_ = kernels_.get("gpuk_first_difference").function;
  copy_ = kernels_.get("gpuk_copy_bytes").function;
}

std::vector<DeviceAnswer::Output> DeviceAnswer::outputs(const Workload& workload, const Launcher& launcher) {
  std::vector<Output> out;
  const auto arrays = workload.device_arrays();
  const auto& slots = launcher.arrays();
  for (std::size_t i = 0; i < slots.size() && i < arrays.size(); ++i)
    if (slots[i].output && slots[i].bytes > 0) out.push_back({arrays[i], slots[i].bytes, i});
  return out;
}

void DeviceAnswer::launch(CUfunction f, void** args, const Stream& stream) {
  GPUK_CU(driver().cuLaunchKernel(f, static_cast<unsigned>(blocks_), 1, 1, kThreads, 1, 1, 0, stream.get(), args,
                                  nullptr),
          "the sweep's device comparison");
}

std::uint64_t DeviceAnswer::first_difference(CUdeviceptr a, CUdeviceptr b, std::uint64_t bytes, const Stream& stream) {
  first_.fill_bytes(0xff, stream);
  CUdeviceptr first = first_.get();
  void* args[] = {&a, &b, &bytes, &first};
  launch(compare_, args, stream);
  std::uint64_t at = 0;
  first_.download(&at, sizeof at, stream);
  stream.synchronize();
  return at;
}

void DeviceAnswer::copy(CUdeviceptr to, CUdeviceptr from, std::uint64_t bytes, const Stream& stream) {
  void* args[] = {&to, &from, &bytes};
  launch(copy_, args, stream);
}

bool DeviceAnswer::keep(Workload& workload, const Launcher& launcher, const Stream& stream, std::string* why) {
  copies_.clear();
  const auto outs = outputs(workload, launcher);
  if (outs.empty()) {
    if (why) *why = "the operation has no output array";
    return false;
  }
  std::uint64_t total = 0;
  for (const auto& o : outs) total += o.bytes;
  if (!fits_with_room(total, "a copy of the outputs", why)) return false;
  std::vector<DeviceBuffer> copies;
  for (const auto& o : outs) {
    copies.emplace_back(static_cast<std::size_t>(o.bytes));
    copy(copies.back().get(), o.ptr, o.bytes, stream);
  }
  // The compare kernel checked on this device, on these arrays: equal to the copy, then poisoned
  // and different from it.
  for (std::size_t i = 0; i < outs.size(); ++i)
    if (first_difference(outs[i].ptr, copies[i].get(), outs[i].bytes, stream) !=
        std::numeric_limits<std::uint64_t>::max()) {
      if (why) *why = "the device comparison found the copy of a verified answer different from it";
      return false;
    }
  // The in-out arrays the verified answer left as it found them (before the poisoning below).
  const auto sources = workload.restore_sources();
  std::vector<bool> leaves_input(workload.device_arrays().size(), false);
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const std::size_t a = outs[i].array;
    if (a < sources.size() && sources[a] != 0 && a < leaves_input.size())
      leaves_input[a] = first_difference(copies[i].get(), sources[a], outs[i].bytes, stream) ==
                        std::numeric_limits<std::uint64_t>::max();
  }
  workload.poison(stream);
  bool differs = false;
  for (std::size_t i = 0; i < outs.size(); ++i)
    differs = differs || first_difference(outs[i].ptr, copies[i].get(), outs[i].bytes, stream) <
                             std::numeric_limits<std::uint64_t>::max();
  if (!differs) {
    if (why) *why = "the verified answer cannot be told from the poisoned outputs";
    return false;
  }
  copies_ = std::move(copies);
  leaves_input_ = std::move(leaves_input);
  copy_arrays_.clear();
  for (const auto& o : outs) copy_arrays_.push_back(o.array);
  return true;
}

std::vector<bool> DeviceAnswer::unchanged_inputs() const {
  std::vector<bool> out(identical_.size(), false);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = identical_[i] && i < leaves_input_.size() && leaves_input_[i];
  return out;
}

bool DeviceAnswer::same(const Workload& workload, const Launcher& launcher, const Stream& stream) {
  const auto outs = outputs(workload, launcher);
  identical_.assign(workload.device_arrays().size(), false);
  if (outs.size() != copies_.size()) return false;
  bool all = true;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const bool same_bytes = outs[i].bytes == copies_[i].bytes() &&
                            first_difference(outs[i].ptr, copies_[i].get(), outs[i].bytes, stream) ==
                                std::numeric_limits<std::uint64_t>::max();
    identical_[outs[i].array] = same_bytes;
    all = all && same_bytes;
  }
  return all;
}

bool DeviceAnswer::keep_expected(Workload& workload, const std::vector<ExpectedOutput>& expected,
                                 const Stream& stream, std::string* why) {
  expected_.clear();
  if (within_[0] == nullptr) {
    if (why) *why = "the rule's kernels are not loaded";
    return false;
  }
  std::uint64_t total = 0;
  for (const ExpectedOutput& e : expected) total += e.length * dtype_size(e.dtype);
  if (expected.empty()) {
    if (why) *why = "no output is compared";
    return false;
  }
  if (!fits_with_room(total, "the expected outputs", why)) return false;
  std::vector<Expected> kept;
  for (const ExpectedOutput& e : expected) {
    if (e.rule.sum || e.rule.skip || e.expected == nullptr || (e.rule.ulps && *e.rule.ulps < 0)) {
      if (why) *why = e.name + " is not compared element by element";
      return false;
    }
    const std::size_t bytes = std::max<std::size_t>(1, e.length * dtype_size(e.dtype));
    Expected x{e, DeviceBuffer(bytes)};
    x.values.upload(e.expected, e.length * dtype_size(e.dtype), stream);
    x.output.expected = nullptr;
    kept.push_back(std::move(x));
  }
  stream.synchronize();  // the host's arrays may go once this returns
  expected_ = std::move(kept);
  // The rule's kernel checked on this device, on these arrays: the kept answer (verified on the
  // host against these expected outputs) passes, and the outputs poisoned do not.
  const auto kept_answer = [this](std::size_t array) -> CUdeviceptr {
    for (std::size_t i = 0; i < copy_arrays_.size(); ++i)
      if (copy_arrays_[i] == array) return copies_[i].get();
    return 0;
  };
  workload.poison(stream);  // a variant's runs since keep() wrote its answer there
  const auto arrays = workload.device_arrays();
  const auto poisoned = [&arrays](std::size_t array) -> CUdeviceptr { return array < arrays.size() ? arrays[array] : 0; };
  const char* failed = !within_at(kept_answer, stream) ? "the kept answer fails the compare rule on the GPU"
                       : within_at(poisoned, stream)   ? "the poisoned outputs pass the compare rule on the GPU"
                                                       : nullptr;
  if (failed != nullptr) {
    expected_.clear();
    if (why) *why = failed;
    return false;
  }
  return true;
}

std::optional<Verification> DeviceAnswer::within(const Workload& workload, const Stream& stream) {
  const auto arrays = workload.device_arrays();
  return within_at([&arrays](std::size_t array) -> CUdeviceptr { return array < arrays.size() ? arrays[array] : 0; },
                   stream);
}

std::optional<Verification> DeviceAnswer::within_at(const std::function<CUdeviceptr(std::size_t)>& array_at,
                                                    const Stream& stream) {
  std::string passed;
  for (const Expected& x : expected_) {
    const ExpectedOutput& e = x.output;
    CUdeviceptr got = array_at(e.array);
    if (got == 0) return std::nullopt;
    const ElementRule rule = element_rule(e.dtype, e.rule);
    counts_.fill_bytes(0, stream);
    CUdeviceptr want = x.values.get(), out = counts_.get();
    std::uint64_t n = e.length;
    int exact = rule.exact ? 1 : 0;
    double atol = rule.atol, rtol = rule.rtol;
    long long ulps = rule.ulps ? static_cast<long long>(*rule.ulps) : -1;
    void* args[] = {&got, &want, &n, &exact, &atol, &rtol, &ulps, &out};
    launch(within_[static_cast<std::size_t>(e.dtype)], args, stream);
    std::uint64_t answer[3] = {};
    counts_.download(answer, sizeof answer, stream);
    stream.synchronize();
    if (answer[0] != 0) return std::nullopt;
    ArrayComparison c;
    c.size = e.length;
    c.rule = rule.text;
    std::memcpy(&c.max_abs, &answer[1], sizeof c.max_abs);
    std::memcpy(&c.max_rel, &answer[2], sizeof c.max_rel);
    passed += (passed.empty() ? "" : "; ") + c.text(e.name) + " (compared on the GPU)";
  }
  Verification v;
  v.passed = true;
  v.detail = passed.empty() ? "every output is left uncompared (skip: true)" : passed;
  return v;
}

}  // namespace gpuk
