// Verification on the device for a sweep (tune/measure/device_answer.hpp).
#include "tune/measure/device_answer.hpp"

#include <algorithm>
#include <limits>

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

constexpr int kThreads = 256;

}  // namespace

const char* DeviceAnswer::source() { return kSource; }

std::vector<std::string> DeviceAnswer::kernel_names() { return {"gpuk_first_difference", "gpuk_copy_bytes"}; }

CompiledKernels DeviceAnswer::compile(const Jit& jit) {
  KernelFile file;
  file.path = "gpuk_device_answer.cu";
  file.source = kSource;
  return jit.compile(file, kernel_names());
}

DeviceAnswer::DeviceAnswer(const CompiledKernels& compiled, const DeviceInfo& info)
    : blocks_(std::max(1, info.sm_count) * 8), first_(sizeof(std::uint64_t)) {
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
  std::size_t free = 0, all = 0;
  GPUK_CU(driver().cuMemGetInfo(&free, &all), "the sweep's device comparison");
  // Room left for the variants' scratch: as much again as the outputs, and 512 MiB (a variant's
  // scratch is allocated before the one it replaces is freed).
  const std::uint64_t margin = total + (512ull << 20);
  if (total + margin > free) {
    if (why)
      *why = "a copy of the outputs (" + std::to_string(total >> 20) + " MiB) and room for the variants' scratch do "
             "not fit in the free memory (" + std::to_string(free >> 20) + " MiB)";
    return false;
  }
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
  return true;
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

}  // namespace gpuk
