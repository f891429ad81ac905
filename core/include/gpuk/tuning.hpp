// Tuning from an application (docs/api.md, "Tuning from C++"): one sweep of a declared kernel by
// gpuk's tuner, the one `gpuk tune` and Python's tune_kernel use, with the data in memory and the
// result as a value (nothing printed).
//
//   gpuk::TuneRequest request;
//   request.config = "family: kernel\nkernels: [scale2d]\nsizes: {nx: 1000, ny: 300}\n"
//                    "params: {block_size_x: [16, 32, 64], block_size_y: [1, 2, 4]}\n";
//   request.inputs["in"] = gpuk::HostView::of(in.data(), in.size());
//   request.answers["out"] = gpuk::HostView::of(expected.data(), expected.size());
//   gpuk::TuneResults r = gpuk::tune_kernel(engine, request);
//   if (r.best) use(r.results[*r.best].params);
//
// The sweep is gpuk's tuner: NVRTC compile waves, every variant verified on the GPU, the
// strategy of the config, the recheck of the leaders, the journal. The variants run in worker
// processes, one per GPU, forked by this call, so that a variant that faults or hangs ends only
// its worker; where this process has started CUDA already through gpuk (an Engine that prepared
// an Operation), the sweep runs in this process and the first such variant ends it (said in the
// notes).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuk/dtype.hpp"

namespace gpuk {

class Engine;

// Host memory the caller owns and keeps alive during the call: `size` elements of `dtype`.
struct HostView {
  DType dtype = DType::float32;
  std::uint64_t size = 0;
  const void* data = nullptr;
  template <class T> static HostView of(const T* data, std::uint64_t size) { return {dtype_of<T>(), size, data}; }
};

// Says whether a variant's outputs pass: the expected ones (the answers given, or the first
// variant's) and the variant's own, by argument name, on the host. A message, when set, goes in
// the result's reason.
using TuneVerify = std::function<bool(const std::map<std::string, HostView>& expected,
                                      const std::map<std::string, HostView>& got, std::string& message)>;

struct TuneRequest {
  // The tune config as YAML text (JSON is YAML too): the keys of a declared tune config
  // (docs/declared.md) and `points:`, a list of the only parameter points allowed (each a
  // mapping of every parameter), still filtered by the constraints.
  std::string config;
  // Where the config is said to come from: errors name it, relative paths in it are relative to
  // its folder.
  std::filesystem::path config_path = "tune_request.yaml";
  std::map<std::string, HostView> inputs;  // input arrays by argument name (over the config's data:)
  // Expected outputs by name; nullopt: that output is not compared. None at all: every variant is
  // verified against the first variant's outputs (said in the notes).
  std::map<std::string, std::optional<HostView>> answers;
  std::map<std::string, HostView> constants;  // __constant__ symbols' data by name
  TuneVerify verify;                          // replaces the comparison when set
  std::optional<std::filesystem::path> journal;  // a directory: a sweep run again goes on from it
  std::vector<int> devices;                      // GPU ordinals; none: EngineOptions::device
  bool quiet = true;                             // false: a progress line on stderr
};

enum class VariantStatus { ok, wrong_answer, pruned, compile_error, does_not_fit, launch_failed, faulted, timed_out };
const char* variant_status_name(VariantStatus s);  // "ok", "wrong answer", "pruned", "does not fit", ...

struct TunedVariant {
  std::map<std::string, std::int64_t> params;
  std::string kernel;              // the kernel file swept
  VariantStatus status = VariantStatus::ok;
  std::string reason;              // why it failed, or how it was verified
  std::optional<bool> verified;    // nullopt: not run far enough to be verified
  double time_ms = 0;              // median of the timed runs (0 unless ok)
  std::vector<double> times_ms;    // every timed run
  std::map<std::string, double> metrics;  // the declaration's metrics, and GB/s
  int registers = -1;
  // Where its time went, as the sweep saw it, in ms; compile time is the sweep's (its programs
  // compile in waves: TuneResults::compile_seconds), shared out per variant.
  double compile_ms = 0, verification_ms = 0, benchmark_ms = 0;
};

struct TuneResults {
  std::vector<TunedVariant> results;  // in the order evaluated, pruned points included
  std::vector<std::size_t> ranking;   // indices of the ok ones, best first
  std::optional<std::size_t> best;    // ranking.front()
  std::string strategy, objective;
  std::string device_name, arch, nvrtc;  // the GPU ("NVIDIA H200"), "sm_90", NVRTC's version
  std::vector<std::string> devices;     // the GPUs that measured: "GPU 0", ...
  int sm_count = 0;
  double peak_bandwidth_gbs = 0;
  std::vector<std::string> notes;     // "no answer given: verified against the first variant's outputs", ...
  double wall_seconds = 0;
  int programs = 0, programs_from_cache = 0;  // NVRTC programs
  double compile_seconds = 0;                 // NVRTC time summed over the compile threads
  // Where the sweep's time went, in seconds (docs/tuning.md, "Where the time goes"): start, data,
  // reference, compile_wall, compile_summed, compile_wait, measure, verify, scratch, recheck,
  // save, idle, other, total; the compile threads run beside the rest.
  std::map<std::string, double> seconds;
  std::string journal;                        // the journal file ("" without one)
  bool stopped_early = false;                 // the GPU could not go on (stop_reason says why)
  std::string stop_reason;
};

// One sweep of the declared kernel `request.config` names, on `engine`'s plugins, kernel files
// and compile cache. Throws ConfigError for a config or data the sweep cannot take (its
// file:line:col), NoDeviceError without a GPU.
TuneResults tune_kernel(const Engine& engine, const TuneRequest& request);

}  // namespace gpuk
