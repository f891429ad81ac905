// Bench: one uploaded workload that variants are checked and timed on.
#include "run/runner.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "device/host_memory.hpp"
#include "device/timing.hpp"
#include "gpuk/error.hpp"
#include "run/host_side.hpp"
#include "util/text.hpp"

namespace gpuk {

bool input_fits_l2(const RunSpec& spec, const DeviceInfo& info) {
  return static_cast<std::int64_t>(spec.size * dtype_size(spec.dtype)) < 2 * info.l2_bytes;
}

// --- Bench -----------------------------------------------------------------------------------

Bench::Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device, PreparedRun prepared)
    : spec_(spec), plugin_(plugin), prepared_(std::make_unique<PreparedRun>(std::move(prepared))), device_(device) {
  make(std::move(prepared_->launcher), nullptr);
  bind(prepared_->planned.plan);
}

Bench::Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device)
    : spec_(spec), plugin_(plugin), device_(device) {
  make(plugin.make_launcher(problem_of(spec)), nullptr);
}

Bench::Bench(const RunSpec& spec, const FamilyPlugin& plugin, Device& device, std::unique_ptr<Workload> prepared)
    : spec_(spec), plugin_(plugin), device_(device) {
  if (!prepared) throw Error("internal: a Bench of a prepared workload without one");
  make(plugin.make_launcher(problem_of(spec)), std::move(prepared));
}

void Bench::make(std::unique_ptr<Launcher> launcher, std::unique_ptr<Workload> prepared) {
  launcher_ = std::move(launcher);
  if (prepared) {
    workload_ = std::move(prepared);
    pin_note_ = "the input was made before the process's CUDA context (run/host_side.hpp)";
    // Its reference was computed with it; the timings were not kept.
    reference_done_ = true;
    workload_has_reference_ = true;
  } else {
    workload_ = make_run_workload(spec_, plugin_, &pin_note_);
    workload_has_reference_ = false;
  }
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

const PreparedRun& Bench::prepared() const {
  if (!prepared_) throw Error("internal: a Bench made without a prepared variant has none");
  return *prepared_;
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

std::vector<double> Bench::time(int warmup, int repeats, bool flush_l2) {
  const PreparedRun& p = prepared();
  return time(LaunchTarget{p.planned.plan, p.ready.functions.data(), stream_->get(), p.planned.where}, warmup,
              repeats, flush_l2);
}

std::vector<double> Bench::time(const LaunchTarget& target, int warmup, int repeats, bool flush_l2) {
  if (flush_l2 && !flush_ && device_.info().l2_bytes > 0)
    flush_.emplace(static_cast<std::size_t>(2 * device_.info().l2_bytes));
  // device/timing.hpp: behind a stream gate, as the library baselines are timed.
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
