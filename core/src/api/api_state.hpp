// What an Engine and an Operation hold (gpuk/gpuk.hpp); shared by engine.cpp and operation.cpp.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/operation_cache.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "run/choose.hpp"
#include "run/prepare.hpp"
#include "run/runtime.hpp"

namespace gpuk {

struct Engine::State {
  explicit State(EngineOptions o);

  EngineOptions options;
  Runtime runtime;  // the plugins, kernel files, compile cache and a JIT per architecture
  const PluginRegistry& plugins;  // runtime's
  const KernelLibrary& kernels;   // runtime's
  std::filesystem::path tuning_db;

  void warn(const std::string& message) const;

  // The GPU, opened by the first call that needs it, current on the calling thread afterwards.
  Device& device();

  // What the lookup reads (the user's database, the shipped files for the device's
  // architecture), read once; its warnings are given once.
  const TuningSources& tuning();

  // Engine::launch's Operations, one per spec, size bucket and stream.
  OperationCache operations;
  // Frees entries taken out of it: waits for their calls in progress (their mutexes), then for
  // the device (a context synchronisation), then drops their Operations.
  void free_cached(std::vector<std::shared_ptr<OperationCache::Entry>> entries);
  // Drops them without waiting (each holds the State: the Engine's destructor breaks that cycle).
  void drop_cached();

 private:
  std::mutex device_mutex_;
  std::unique_ptr<Device> device_;
  std::mutex tuning_mutex_;
  std::optional<TuningSources> tuning_;
};

struct Operation::State {
  ~State();  // with the context current, so that its buffers and modules go with it

  std::shared_ptr<Engine::State> engine;  // keeps the context (and the plugins) alive
  CUcontext context = nullptr;
  const FamilyPlugin* plugin = nullptr;
  Problem problem;  // n: the size prepared for; max_n: the end of its bucket
  std::string what;  // "reduce argmax": for messages
  std::unique_ptr<Launcher> launcher;
  std::vector<ArraySlot> slots;
  std::optional<ScalarSlot> scalar;
  Choice choice;
  std::shared_ptr<const Variant> variant;
  std::string label, where;
  DeviceInfo info;
  LoadedKernels kernels;  // every launch entry of the variant: any may run for some n of the bucket
  std::uint64_t min_n = 0, max_n = 0;
  std::uint64_t scratch_needed = 0;
  DeviceBuffer own_scratch;
  CUdeviceptr scratch = 0;
  std::uint64_t scratch_bytes = 0;
  DeviceBuffer own_result;  // launch_and_read's, when the caller passes none
  // The plan of the last n launched: the hot path evaluates no expression while n repeats.
  std::uint64_t planned_n = 0;
  LaunchPlan plan;
  std::vector<CUfunction> functions;
  // The plans of the few n launched before it, so that calls alternating between a few sizes (a
  // batch and its tail, two frame sizes) plan each once: swapped in and out, never copied.
  struct EarlierPlan {
    std::uint64_t n = 0;  // 0: empty
    LaunchPlan plan;
    std::vector<CUfunction> functions;
  };
  static constexpr std::size_t kEarlierPlans = 4;
  EarlierPlan earlier[kEarlierPlans];
  std::size_t next_earlier = 0;  // the slot the next new plan's predecessor goes to

  // Makes n's plan the current one: an earlier plan of n if one is kept, else a new one (then the
  // current plan is kept among the earlier ones, in place of the oldest).
  void plan_for(std::uint64_t n);
  // A new plan for n, checked against the kernels, the device and the scratch; throws (changing
  // nothing) when n cannot run.
  EarlierPlan new_plan(std::uint64_t n) const;
};

// Checks a call's arrays against the slots (count, null pointers; `result_may_be_null`: the
// host_result slot may be 0), before anything touches the GPU. ConfigError with `what`.
void check_arrays(const std::string& what, const std::vector<ArraySlot>& slots, DeviceArrays arrays,
                  bool result_may_be_null);

}  // namespace gpuk
