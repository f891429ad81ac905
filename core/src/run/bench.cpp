// Bench: one uploaded workload that variants are checked and timed on.
#include "gpuk/runner.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/error.hpp"
#include "gpuk/host_memory.hpp"
#include "gpuk/text.hpp"
#include "gpuk/timing.hpp"

namespace gpuk {

LaunchLimits launch_limits(const RunSpec& spec, const DeviceInfo& info) {
  // Dynamic shared memory up to the device's opt-in limit: launch_kernel opts in above 48 KiB.
  return {static_cast<std::int64_t>(spec.size), info.sm_count, static_cast<int>(dtype_size(spec.dtype)),
          info.max_threads_per_block, std::max(kSharedWithoutOptIn, info.max_shared_per_block_optin)};
}


// What the family allocates for the run (FamilyPlugin::device_bytes) must fit in the device's
// free memory; scratch and the library baseline's buffers are checked when they are allocated
// (DeviceBuffer's error names the bytes asked for and free).
void refuse_if_run_does_not_fit(const RunSpec& spec, const FamilyPlugin& plugin, Device& device) {
  const std::uint64_t input_bytes = spec.size * dtype_size(spec.dtype);
  const std::uint64_t bytes = std::max(input_bytes, plugin.device_bytes(spec));
  const std::uint64_t free = device.free_memory();
  if (bytes <= free) return;
  std::string what = "the input needs " + std::to_string(input_bytes) + " bytes of device memory";
  if (bytes > input_bytes) what += " (" + std::to_string(bytes) + " with the " + spec.family + " run's other buffers)";
  throw DeviceError(what + "; " + device.info().name + " has " + std::to_string(free) + " bytes free");
}


// --- Bench -----------------------------------------------------------------------------------

Bench::Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device)
    : spec_(spec), plugin_(plugin), device_(device) {
  make();
}

void Bench::make() {
  const RunSpec& spec = spec_;
  Device& device = device_;
  refuse_if_run_does_not_fit(spec, plugin_, device);
  refuse_if_host_memory_short(spec, plugin_);
  HostArray input = spec.data.file ? load_file(spec.data) : generate(spec.data, spec.dtype, spec.size);
  if (input.dtype() != spec.dtype || input.size() != spec.size)
    throw ConfigError(spec.path.string() + ": the data file holds " + std::to_string(input.size()) + " " +
                      std::string(dtype_name(input.dtype())) + " elements, but the config asks for " +
                      std::to_string(spec.size) + " " + std::string(dtype_name(spec.dtype)));
  workload_ = plugin_.make_workload(spec, std::move(input));
  workload_has_reference_ = false;
  bytes_moved_ = workload_->bytes_moved();
  stream_ = std::make_unique<Stream>();
  start_ = std::make_unique<Event>();
  stop_ = std::make_unique<Event>();
  start_->record(*stream_);
  workload_->upload(*stream_);
  stop_->record(*stream_);
  upload_ms_ = stop_->elapsed_since(*start_);
}

double Bench::time_limit() const {
  return time_limit_base_ + static_cast<double>(bytes_moved_) / 1e9;
}

Bench::~Bench() = default;

bool Bench::input_fits_l2() const {
  return static_cast<std::int64_t>(spec_.size * dtype_size(spec_.dtype)) < 2 * device_.info().l2_bytes;
}

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
  workload_->launch(target);
  synchronize(target.where);
  workload_->download(*stream_);
  return workload_->verify();
}

std::vector<double> Bench::time(const LaunchTarget& target, int warmup, int repeats, bool flush_l2) {
  if (flush_l2 && !flush_ && device_.info().l2_bytes > 0)
    flush_.emplace(static_cast<std::size_t>(2 * device_.info().l2_bytes));
  // gpuk/timing.hpp: behind a stream gate, as the library baselines are timed.
  unsigned char fill = 0;
  return time_device(
             stream_->get(), warmup, repeats, [&] { workload_->launch(target); },
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
