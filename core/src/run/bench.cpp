// Bench: one uploaded workload that variants are checked and timed on.
#include "run/runner.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/error.hpp"
#include "run/host_memory.hpp"
#include "run/host_side.hpp"
#include "run/timing.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

// Throws DeviceError when `bytes` (every buffer of the run: the input, the family's other
// buffers, scratch, a flush buffer) exceed the device's free memory. The message names the
// input's share and the whole, and who needs it ("the sort run").
void refuse_if_does_not_fit(std::uint64_t input_bytes, std::uint64_t bytes, const std::string& who, Device& device) {
  bytes = std::max(bytes, input_bytes);
  const std::uint64_t free = device.free_memory();
  if (bytes <= free) return;
  std::string what = "the input needs " + std::to_string(input_bytes) + " bytes of device memory";
  if (bytes > input_bytes) what += " (" + std::to_string(bytes) + " with " + who + "'s other buffers)";
  throw DeviceError(what + "; " + device.info().name + " has " + std::to_string(free) + " bytes free");
}

}  // namespace

// Everything a run allocates on the device, counted before any data exists, so that a run
// that cannot fit stops in a second instead of after minutes of generating data. The library
// baseline's buffers are checked when they are allocated (DeviceBuffer's error names the bytes
// asked for and free).
std::uint64_t run_device_bytes(const RunSpec& spec, const FamilyPlugin& plugin) {
  std::uint64_t bytes = 0;
  for (const ArraySlot& a : plugin.make_launcher(problem_of(spec))->arrays()) bytes = add_bytes(bytes, a.bytes);
  return bytes;
}

void refuse_if_run_does_not_fit(const RunSpec& spec, const FamilyPlugin& plugin, std::uint64_t scratch_bytes,
                                bool flush_l2, Device& device) {
  std::uint64_t bytes = add_bytes(run_device_bytes(spec, plugin), scratch_bytes);
  if (flush_l2) bytes = add_bytes(bytes, static_cast<std::uint64_t>(2 * device.info().l2_bytes));
  refuse_if_does_not_fit(bytes_for(spec.size, dtype_size(spec.dtype)), bytes, "the " + spec.family + " run", device);
  // The host arrays too: a size too large for the machine is refused here, not by the OOM killer.
  refuse_if_host_memory_short(spec, plugin);
}

bool input_fits_l2(const RunSpec& spec, const DeviceInfo& info) {
  return static_cast<std::int64_t>(spec.size * dtype_size(spec.dtype)) < 2 * info.l2_bytes;
}

// --- Bench -----------------------------------------------------------------------------------

Bench::Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device)
    : spec_(spec), plugin_(plugin), device_(device) {
  make(nullptr);
}

Bench::Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device, std::unique_ptr<Workload> prepared)
    : spec_(spec), plugin_(plugin), device_(device) {
  if (!prepared) throw Error("internal: a Bench of a prepared workload without one");
  make(std::move(prepared));
}

void Bench::make(std::unique_ptr<Workload> prepared) {
  const RunSpec& spec = spec_;
  if (prepared) {
    workload_ = std::move(prepared);
    pin_note_ = "the input was made before the process's CUDA context (run/host_side.hpp)";
    // Its reference was computed with it; the timings were not kept.
    reference_done_ = true;
    workload_has_reference_ = true;
  } else {
    HostArray input = run_input(spec);
    // Page-locked, the upload runs at the bus's speed (pageable memory goes through the driver's
    // staging buffers at a fraction of it); where locking fails the run goes on, pageable.
    pin_note_ = input.pin();
    workload_ = make_run_workload(spec, plugin_, std::move(input));
    workload_has_reference_ = false;
  }
  launcher_ = plugin_.make_launcher(problem_of(spec));
  bytes_moved_ = workload_->bytes_moved();
  stream_ = std::make_unique<Stream>();
  start_ = std::make_unique<Event>();
  stop_ = std::make_unique<Event>();
  start_->record(*stream_);
  workload_->upload(*stream_);
  stop_->record(*stream_);
  upload_ms_ = stop_->elapsed_since(*start_);
  arrays_ = workload_->device_arrays();
}

void Bench::bind(const LaunchPlan& plan) {
  scratch_ = DeviceBuffer(std::max<std::uint64_t>(1, launcher_->scratch_bytes(plan)));
  launcher_->init_scratch(scratch_.get(), scratch_.bytes(), stream_->get());
  stream_->synchronize();
}

void Bench::launch(const LaunchTarget& target) {
  const DeviceCall call{arrays_.data(), spec_.size, scratch_.get(), scratch_.bytes(), workload_->scalar()};
  launcher_->launch(target, call);
}

std::uint64_t Bench::upload_bytes() const {
  std::uint64_t bytes = 0;
  for (const ArraySlot& a : launcher_->arrays())
    if (!a.output) bytes = add_bytes(bytes, a.bytes);
  return bytes;
}

std::uint64_t Bench::download_bytes() const {
  std::uint64_t bytes = 0;
  for (const ArraySlot& a : launcher_->arrays())
    if (a.output) bytes = add_bytes(bytes, a.bytes);
  return bytes;
}

double Bench::time_limit() const {
  return time_limit_base_ + static_cast<double>(bytes_moved_) / 1e9;
}

Bench::~Bench() = default;

bool Bench::input_fits_l2() const { return gpuk::input_fits_l2(spec_, device_.info()); }

void Bench::synchronize(const std::string& where) const { wait_stream(stream_->get(), time_limit(), where); }

const std::vector<CpuTiming>& Bench::reference(int repeats) {
  if (!reference_done_) {
    reference_ = workload_->cpu_reference(repeats);
    reference_done_ = true;
    workload_has_reference_ = true;
  } else if (!workload_has_reference_) {
    (void)workload_->cpu_reference(1);  // a rebuilt workload needs the answer again, not the timings
    workload_has_reference_ = true;
  }
  return reference_;
}

Verification Bench::check(const LaunchTarget& target) {
  reference(1);
  workload_->poison(*stream_);
  launch(target);
  synchronize(target.where);
  workload_->download(*stream_);
  return workload_->verify();
}

std::vector<double> Bench::time(const LaunchTarget& target, int warmup, int repeats, bool flush_l2) {
  if (flush_l2 && !flush_ && device_.info().l2_bytes > 0)
    flush_.emplace(static_cast<std::size_t>(2 * device_.info().l2_bytes));
  // run/timing.hpp: behind a stream gate, as the library baselines are timed.
  unsigned char fill = 0;
  return time_device(
             stream_->get(), warmup, repeats, [&] { launch(target); },
             [&] {
               workload_->poison(*stream_);
               if (flush_l2 && flush_) flush_->fill_bytes(fill++, *stream_);
             },
             target.where, time_limit())
      .ms;
}

double Bench::download() {
  start_->record(*stream_);
  workload_->download(*stream_);
  stop_->record(*stream_);
  return stop_->elapsed_since(*start_);
}

}  // namespace gpuk
