// The library API's Engine: the CLI's directories and defaults, the GPU opened on first use,
// prepare() along core's one road (run/prepare.hpp), and the Operations Engine::launch keeps.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iostream>

#include "kernel/default_kernel.hpp"
#include "api/api_state.hpp"
#include "api/engine_internals.hpp"
#include "gpuk/error.hpp"
#include "plugin/problem.hpp"
#include "tuning/tuning_db.hpp"
#include "util/install_dirs.hpp"
#include "util/text.hpp"
#include "util/timeline.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

RuntimeOptions runtime_options(const EngineOptions& o) {
  RuntimeOptions r;
  r.kernel_dirs = o.kernel_dirs;
  r.plugin_dirs = o.plugin_dirs;
  r.cache_dir = o.cache_dir;
  r.no_cache = o.no_cache;
  r.tuning_db = o.tuning_db;
  return r;
}

}  // namespace

fs::path library_dir() { return core_library_dir(); }

std::uint64_t bucket_first(std::uint64_t n) { return std::uint64_t{1} << size_bucket(n); }

std::uint64_t bucket_last(std::uint64_t n) {
  const int k = size_bucket(n);
  return k >= 63 ? ~std::uint64_t{0} : (std::uint64_t{1} << (k + 1)) - 1;
}

void check_arrays(const std::string& what, const std::vector<ArraySlot>& slots, DeviceArrays arrays,
                  bool result_may_be_null) {
  if (arrays.size() != slots.size()) {
    std::vector<std::string> names;
    for (const auto& s : slots) names.push_back(s.name);
    throw ConfigError(what + " takes " + std::to_string(slots.size()) + " arrays (" + join(names) + "), not " +
                      std::to_string(arrays.size()));
  }
  for (std::size_t i = 0; i < slots.size(); ++i)
    if (arrays[i] == 0 && !(result_may_be_null && slots[i].host_result))
      throw ConfigError(what + ": array '" + slots[i].name + "' is a null device pointer");
}

// --- Engine::State ---------------------------------------------------------------------------

Engine::State::State(EngineOptions o)
    : options(std::move(o)),
      runtime(runtime_options(options)),
      plugins(runtime.plugins()),
      kernels(runtime.kernels()),
      tuning_db(runtime.tuning_db_path()),
      operations(OperationCache::Limits{options.cache_max_operations, options.cache_max_bytes}) {
  if (options.tuning.source == TuningPolicy::Source::file) {
    // Read now, so that a missing or damaged file is an error before the GPU (and again when
    // the GPU's lookup reads it: the same words).
    TuningSources check;
    add_user_tuning(check, options.tuning.file, true);
  }
  for (const auto& e : runtime.load_problems()) warn(e);
  (void)runtime.cache();  // opened with the Engine, as before: its warning, if any, comes now
}

void Engine::State::warn(const std::string& message) const {
  if (options.on_warning) options.on_warning(message);
  else std::cerr << "gpuk: warning: " << message << "\n";
}

Device& Engine::State::device() {
  std::lock_guard lock(device_mutex_);
  if (!device_) device_ = std::make_unique<Device>(options.device);
  device_->make_current();
  return *device_;
}

const TuningSources& Engine::State::tuning() {
  const std::string arch = device().info().arch();
  std::lock_guard lock(tuning_mutex_);
  if (!tuning_) {
    TuningSources t;
    switch (options.tuning.source) {
      case TuningPolicy::Source::user_database:
        add_user_tuning(t, tuning_db, false);
        add_shipped_tuning(t, kernels, arch);
        break;
      case TuningPolicy::Source::file:
        add_user_tuning(t, options.tuning.file, true);
        add_shipped_tuning(t, kernels, arch);
        break;
      case TuningPolicy::Source::shipped_only:
        t.user_off = true;
        add_shipped_tuning(t, kernels, arch);
        break;
      case TuningPolicy::Source::none:
        t.user_off = t.shipped_off = true;
        break;
    }
    for (const auto& w : t.warnings) warn(w);
    tuning_ = std::move(t);
  }
  return *tuning_;
}

void Engine::State::free_cached(std::vector<std::shared_ptr<OperationCache::Entry>> entries) {
  if (entries.empty()) return;
  // One lock at a time is all any caller holds, and these entries are no longer in the cache:
  // taking them all cannot deadlock.
  std::vector<std::unique_lock<std::mutex>> locks;
  bool any = false;
  for (const auto& e : entries) {
    locks.emplace_back(e->mutex);
    any = any || e->operation.has_value();
  }
  std::optional<DeviceError> failed;
  if (any && !device_hung()) {
    try {
      device();  // current on this thread
      GPUK_CU(driver().cuCtxSynchronize(), "before freeing cached operations");
    } catch (const DeviceError& e) {
      failed = e;
    }
  }
  for (const auto& e : entries) {
    e->free_operation();
    e->released = true;
  }
  if (failed) throw *failed;
}

void Engine::State::drop_cached() { (void)operations.take_all(); }

// --- Engine ----------------------------------------------------------------------------------

Engine::Engine(EngineOptions options) {
  timeline("engine: start");
  state_ = std::make_shared<State>(std::move(options));
  timeline("engine: plugins and kernel files loaded");
}
Engine::~Engine() {
  if (state_) state_->drop_cached();
}
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&& other) noexcept {
  if (this != &other) {
    if (state_) state_->drop_cached();
    state_ = std::move(other.state_);
  }
  return *this;
}

std::size_t Engine::cached_operations() const { return state_->operations.operations(); }
std::uint64_t Engine::cached_bytes() const { return state_->operations.bytes(); }
void Engine::release_cached() const { state_->free_cached(state_->operations.take_all()); }

std::vector<std::string> Engine::families() const { return state_->plugins.names(); }
fs::path Engine::plugin_path(const std::string& family) const { return state_->plugins.path_of(family); }
std::vector<fs::path> Engine::kernel_files(const std::string& family) const {
  std::vector<fs::path> paths;
  for (const auto& file : state_->kernels.family(family)) paths.push_back(file->path);
  return paths;
}
std::string Engine::device_name() const { return state_->device().info().name; }

DeviceDescription Engine::device() const {
  const DeviceInfo& info = state_->device().info();
  DeviceDescription d;
  d.ordinal = info.ordinal;
  d.name = info.name;
  d.arch = info.arch();
  d.cc_major = info.cc_major;
  d.cc_minor = info.cc_minor;
  d.sm_count = info.sm_count;
  d.total_memory = static_cast<std::uint64_t>(info.total_memory);
  d.l2_bytes = static_cast<std::uint64_t>(info.l2_bytes);
  d.peak_bandwidth_gbs = info.peak_bandwidth_gbs;
  d.pci_bus_id = info.pci_bus_id;
  d.driver_version = info.driver_version;
  d.nvrtc_version = nvrtc_version();
  return d;
}

const PluginRegistry& EngineInternals::plugins(const Engine& engine) { return engine.state_->plugins; }
const KernelLibrary& EngineInternals::kernels(const Engine& engine) { return engine.state_->kernels; }
const DeviceInfo& EngineInternals::device(const Engine& engine) { return engine.state_->device().info(); }
Device& EngineInternals::open_device(const Engine& engine) { return engine.state_->device(); }
const Runtime& EngineInternals::runtime(const Engine& engine) { return engine.state_->runtime; }
const EngineOptions& EngineInternals::options(const Engine& engine) { return engine.state_->options; }

Operation Engine::prepare(const OperationSpec& spec) const {
  State& engine = *state_;
  // Everything that needs no GPU is checked first, with the config's words.
  const FamilyPlugin& plugin = engine.plugins.get(spec.family);
  const bool declared = !spec.sizes.empty();
  Problem problem =
      declared ? make_declared_problem(plugin, engine.kernels.find(spec.family, spec.kernel.value_or(spec.operation)), spec.sizes)
               : make_problem(plugin, spec.operation, spec.dtype, spec.options, spec.n);
  if (!declared) problem.max_n = bucket_last(spec.n);
  VariantRequest request;
  if (spec.kernel || !spec.params.empty()) {
    request.mode = VariantRequest::Mode::named;
    request.kernel = spec.kernel.value_or(
        declared ? problem.operation : default_kernel_for(engine.kernels, problem.family, problem.operation, plugin.default_kernel()));
    request.params = spec.params;
    (void)choose_variant(problem, request, plugin, engine.kernels, DeviceInfo{}, {}, false);
  }
  // A declared kernel's plan at its sizes: its errors without a GPU too, not "no GPU".
  if (declared) check_declared_before_gpu(problem, request, plugin, engine.kernels);
  auto s = std::make_unique<Operation::State>();
  s->engine = state_;
  s->plugin = &plugin;
  s->problem = problem;
  s->what = problem.family + " " + problem.operation;
  s->launcher = plugin.make_launcher(problem);
  s->slots = s->launcher->arrays();
  s->scalar = s->launcher->scalar();
  s->min_n = declared ? problem.n : bucket_first(spec.n);
  s->max_n = problem.max_n;

  // The GPU: choose, plan, compile, load, check, as `gpuk run` does.
  Device& device = engine.device();
  s->context = device.context();
  s->info = device.info();
  const TuningSources no_tuning;
  const TuningSources& tuning = request.mode == VariantRequest::Mode::lookup ? engine.tuning() : no_tuning;
  // The one prepare chain (run/prepare.hpp): planned for n, then compiled, loaded, checked and
  // bound; every launch entry is loaded, since any may run for some n of the bucket.
  PlannedVariant planned = plan_variant(problem, request, plugin, engine.kernels, s->info, tuning);
  for (const auto& w : planned.choice.warnings) engine.warn(w);
  ReadyVariant ready =
      ready_variant(planned, engine.runtime.jit(s->info.arch()), s->info, nullptr, kernel_names(*planned.variant));
  s->choice = std::move(planned.choice);
  s->variant = std::move(planned.variant);
  s->label = s->variant->label();
  s->where = std::move(planned.where);
  s->kernels = std::move(ready.kernels);
  s->plan = std::move(planned.plan);
  s->functions = std::move(ready.functions);
  s->planned_n = problem.n;

  // Scratch for the whole bucket: the plans at both of its ends (a named variant may not plan at
  // the bucket's end; then its calls are bounded by its constraints).
  s->scratch_needed = s->launcher->scratch_bytes(s->plan);
  Problem last = problem;
  last.n = problem.max_n;
  try {
    const LaunchPlan at_end = plan_launches(*s->variant, launch_limits(last, s->info));
    s->scratch_needed = std::max(s->scratch_needed, s->launcher->scratch_bytes(at_end));
  } catch (const ConfigError&) {
    if (request.mode != VariantRequest::Mode::named) throw;
  }
  if (spec.allocate_scratch) {
    s->own_scratch = DeviceBuffer(std::max<std::uint64_t>(1, s->scratch_needed));
    const Stream stream;
    s->launcher->init_scratch(s->own_scratch.get(), s->own_scratch.bytes(), stream.get());
    stream.synchronize();
    s->scratch = s->own_scratch.get();
    s->scratch_bytes = s->own_scratch.bytes();
    // launch_and_read's buffer for an answer the caller does not place: allocated now, so that
    // no call allocates.
    for (const ArraySlot& slot : s->slots)
      if (slot.host_result) s->own_result = DeviceBuffer(slot.bytes);
  }
  return Operation(std::move(s));
}

namespace {

// One key per spec, size bucket and stream: Engine::launch's Operations. Built on every typed
// call, into this thread's buffer (no allocation once it has grown), by plain appends.
const std::string& cache_key(const OperationSpec& spec, CUstream stream) {
  thread_local std::string key;
  key.clear();
  key.append(spec.family).append(1, '|').append(spec.operation).append(1, '|');
  key.append(dtype_name(spec.dtype)).append(1, '|');
  for (const auto& [k, v] : spec.options) key.append(k).append(1, '=').append(v).append(1, ',');
  key.append(1, '|').append(spec.kernel.value_or("")).append(1, '|');
  char number[24];
  const auto append_number = [&](std::uint64_t v) {
    const auto end = std::to_chars(number, number + sizeof number, v).ptr;
    key.append(number, end);
  };
  for (const auto& [k, v] : spec.params) {
    key.append(k).append(1, '=');
    if (v < 0) key.append(1, '-');
    append_number(v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v));
    key.append(1, ',');
  }
  key.append(1, '|');
  append_number(static_cast<std::uint64_t>(size_bucket(spec.n)));
  key.append(1, '|');
  append_number(reinterpret_cast<std::uintptr_t>(stream));
  key.append(spec.allocate_scratch ? "|1" : "|0");
  return key;
}
}  // namespace

namespace {

// The cached Operation of spec's key, prepared if it is not yet (then the least recently used
// others beyond the cache's limits are freed), and `call` on it under its entry's lock.
template <class Call>
decltype(auto) with_cached(Engine::State& engine, const Engine& self, const OperationSpec& spec, DeviceArrays arrays,
                           CUstream stream, bool read, Call&& call) {
  if (spec.n == 0) throw ConfigError("size must be at least 1, not 0");
  for (;;) {
    const auto entry = engine.operations.get(cache_key(spec, stream));
    std::unique_lock lock(entry->mutex);
    if (entry->released) continue;  // freed by another thread after we found it: look again
    if (entry->operation) return call(*entry->operation);
    // Preparing: the key of our own, as what follows may make calls of its own on this thread
    // (an application's scratch allocator) and so reuse the thread's buffer.
    const std::string key = cache_key(spec, stream);
    // Checked before anything is prepared, so that a wrong call needs no GPU to be told so.
    const FamilyPlugin& plugin = engine.plugins.get(spec.family);
    const Problem problem = make_problem(plugin, spec.operation, spec.dtype, spec.options, spec.n);
    check_arrays(problem.family + " " + problem.operation, plugin.make_launcher(problem)->arrays(), arrays, read);
    const std::optional<ScratchAllocator>& pool = engine.options.scratch_allocator;
    if (!pool) {
      entry->operation.emplace(self.prepare(spec));
    } else {
      // The application's memory: prepared without scratch, given the allocator's, and given
      // back to it when the entry is freed.
      OperationSpec without = spec;
      without.allocate_scratch = false;
      entry->operation.emplace(self.prepare(without));
      const std::uint64_t want = std::max<std::uint64_t>(1, entry->operation->scratch_bytes());
      const CUdeviceptr scratch = pool->allocate ? pool->allocate(want, stream) : 0;
      if (!scratch || scratch % 256 != 0) {
        entry->operation.reset();
        if (scratch && pool->free) pool->free(scratch, want);
        throw ConfigError(problem.family + " " + problem.operation + ": the scratch allocator gave " +
                          (scratch ? "memory that is not 256-byte aligned" : "no memory") + " for " +
                          std::to_string(want) + " bytes");
      }
      entry->release_scratch = [free = pool->free, scratch, want] {
        if (free) free(scratch, want);
      };
      try {
        entry->operation->use_scratch(scratch, want, stream);
      } catch (...) {
        entry->free_operation();
        throw;
      }
    }
    const std::uint64_t bytes =
        entry->operation->held_bytes() + (pool ? std::max<std::uint64_t>(1, entry->operation->scratch_bytes()) : 0);
    lock.unlock();
    engine.free_cached(engine.operations.settle(key, bytes));
  }
}

}  // namespace

void Engine::launch(const OperationSpec& spec, DeviceArrays arrays, CUstream stream,
                    const Scalar* scalar) const {
  with_cached(*state_, *this, spec, arrays, stream, false,
              [&](Operation& op) { op.launch(arrays, spec.n, stream, scalar); });
}

std::vector<std::byte> Engine::launch_and_read(const OperationSpec& spec, DeviceArrays arrays,
                                               CUstream stream, const Scalar* scalar) const {
  return with_cached(*state_, *this, spec, arrays, stream, true,
                     [&](Operation& op) { return op.launch_and_read(arrays, spec.n, stream, scalar); });
}

}  // namespace gpuk
