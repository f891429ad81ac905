// Tuning from an application (gpuk/tuning.hpp): the request made into a tune config with its data
// in memory, swept on worker processes (tune/sweep_on_workers.hpp) or, where this process has
// started CUDA already, in it (tune/sweep_on_gpu.hpp), and the report made into a value.
#include "gpuk/tuning.hpp"

#include <cuda.h>
#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <set>

#include <yaml-cpp/yaml.h>

#include "api/engine_internals.hpp"
#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "kernel/constants.hpp"
#include "kernel/declaration.hpp"
#include "run/choose.hpp"
#include "run/declared_run.hpp"
#include "run/runner.hpp"
#include "tune/report/journal.hpp"
#include "tune/report/progress_bar.hpp"
#include "tune/sweep_on_gpu.hpp"
#include "tune/sweep_on_workers.hpp"
#include "util/text.hpp"
#include "util/timeline.hpp"

namespace gpuk {

const char* variant_status_name(VariantStatus s) {
  switch (s) {
    case VariantStatus::ok: return "ok";
    case VariantStatus::wrong_answer: return "wrong answer";
    case VariantStatus::pruned: return "pruned";
    case VariantStatus::compile_error: return "compile error";
    case VariantStatus::does_not_fit: return "does not fit";
    case VariantStatus::launch_failed: return "launch failed";
    case VariantStatus::faulted: return "faulted";
    case VariantStatus::timed_out: return "timed out";
  }
  return "?";
}

namespace {

std::shared_ptr<const HostArray> host_copy(const HostView& v, const std::string& what) {
  if (v.size > 0 && !v.data) throw ConfigError(what + ": no data (a null pointer for " + std::to_string(v.size) + " elements)");
  auto a = std::make_shared<HostArray>(v.dtype, v.size);
  if (a->bytes() > 0) std::memcpy(a->data(), v.data, a->bytes());
  return a;
}

HostView view_of(const HostArray& a) { return {a.dtype(), a.size(), a.data()}; }

std::string names_of(const Declaration& d, bool outputs) {
  std::vector<std::string> names;
  for (const DeclaredArg* a : d.arrays())
    if ((a->role != ArgRole::in) == outputs || a->role == ArgRole::inout) names.push_back(a->name);
  return names.empty() ? "none" : join(names);
}

const DeclaredArg* array_arg(const Declaration& d, const std::string& name) {
  for (const DeclaredArg* a : d.arrays())
    if (a->name == name) return a;
  return nullptr;
}

// The first point of the space, in its order, that its constraints and points allow on a block of
// 1024 threads and 48 KiB: without an answer, every variant is verified against its outputs.
// The space's first `most` points that pass its constraints and limits, in order.
std::vector<Candidate> first_points(const Space& space, const TuneSpec& t, const FamilyPlugin& plugin,
                                    std::size_t most) {
  const Problem problem = problem_of(t.run);
  DeviceInfo generous;
  generous.sm_count = 1;
  generous.max_threads_per_block = 1024;
  const LaunchLimits limits = launch_limits(problem, generous);
  const std::vector<std::string> leading = plugin.template_args(problem);
  constexpr std::uint64_t kMostTried = 1000000;
  std::vector<Candidate> out;
  for (std::uint64_t i = 0; i < space.size() && i < kMostTried && out.size() < most; ++i)
    if (!space.prune(space.at(i), leading, limits)) out.push_back(space.at(i));
  return out;
}

// The request's data and checks on the spec of its config.
void apply_request(TuneSpec& t, const TuneRequest& r, const Space& space, const FamilyPlugin& plugin,
                   std::vector<std::string>& notes) {
  RunSpec& spec = t.run;
  const std::string where = r.config_path.string();
  if (!spec.declared)
    throw ConfigError(where + ": tune_kernel tunes a declared kernel (family: kernel, docs/declared.md)");
  const Declaration& d = *spec.declared->declaration;
  if (!r.constants.empty()) {
    // The caller's bytes of each __constant__ symbol, checked against its declaration
    // (kernel/constants.hpp); the others from the config's or the declaration's data.
    ConstantValues given;
    for (const auto& [name, view] : r.constants) given[name] = host_copy(view, "constant " + name);
    try {
      spec.constants = constant_values(d, spec.sizes, spec.constant_data, given);
    } catch (const ConfigError& e) {
      throw ConfigError(where + ": " + e.what());
    }
  }
  for (const auto& [name, view] : r.inputs) {
    const DeclaredArg* a = array_arg(d, name);
    if (!a || a->role == ArgRole::out)
      throw ConfigError(where + ": '" + name + "' is not an input array of " + spec.kernel + " (its inputs: " +
                        names_of(d, false) + ")");
    spec.input_arrays[name] = host_copy(view, "input " + name);
  }
  bool any_answer = false;
  for (const auto& [name, view] : r.answers) {
    const DeclaredArg* a = array_arg(d, name);
    if (!a || a->role == ArgRole::in)
      throw ConfigError(where + ": '" + name + "' is not an output array of " + spec.kernel + " (its outputs: " +
                        names_of(d, true) + ")");
    if (view) {
      spec.expected_arrays[name] = host_copy(*view, "answer " + name);
      any_answer = true;
    }
  }
  if (any_answer) {
    // The answers replace the config's reference; an output without one is not compared.
    spec.reference_kernel.clear();
    spec.expected.clear();
    for (const DeclaredArg* a : d.arrays())
      if (a->role != ArgRole::in && !spec.expected_arrays.count(a->name)) spec.compare[a->name].skip = true;
    spec.verify = true;
  } else if (!r.answers.empty() && !r.verify) {
    notes.push_back("no output is compared (every answer given is None): the variants are not verified");
    for (const DeclaredArg* a : d.arrays())
      if (a->role != ArgRole::in) spec.compare[a->name].skip = true;
    spec.verify = false;
    spec.reference_kernel.clear();
    spec.expected.clear();
  } else if (spec.reference_kernel.empty() && spec.expected.empty()) {
    // The first point, or where it does not compile (too much shared memory) the next of the
    // same file that does: a point that fails to compile fails alone, as in the sweep.
    constexpr std::size_t kReferencesTried = 16;
    const std::vector<Candidate> firsts = first_points(space, t, plugin, kReferencesTried);
    if (firsts.empty()) throw ConfigError(where + ": no point of the space passes its constraints");
    const Candidate& first = firsts.front();
    spec.reference_kernel = space.files()[first.file].file->name;
    spec.reference_params = space.params(first);
    spec.reference_fallbacks.clear();
    for (std::size_t i = 1; i < firsts.size(); ++i)
      if (firsts[i].file == first.file) spec.reference_fallbacks.push_back(space.params(firsts[i]));
    spec.verify = true;
    notes.push_back("no answer given: verified against the first variant's outputs (" + space.label(first) + ")" +
                    (spec.reference_fallbacks.empty() ? "" : ", or where it does not compile the next that does"));
  }
  if (r.verify) {
    spec.verify = true;
    spec.output_check = [check = r.verify](const std::map<std::string, const HostArray*>& expected,
                                           const std::map<std::string, const HostArray*>& got, std::string& message) {
      std::map<std::string, HostView> e, g;
      for (const auto& [name, a] : expected) e[name] = view_of(*a);
      for (const auto& [name, a] : got) g[name] = view_of(*a);
      return check(e, g, message);
    };
  }
}

// Whether CUDA has started in this process, by gpuk or by anything else (PyTorch, CuPy, NVRTC):
// asked of the driver already loaded, without starting it. Workers forked from such a process
// cannot use the GPU.
bool cuda_started_here() {
  if (cuda_initialised()) return true;
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!driver) return false;  // nothing loaded the driver
  using GetCurrent = CUresult (*)(CUcontext*);
  const auto get = reinterpret_cast<GetCurrent>(::dlsym(driver, "cuCtxGetCurrent"));
  CUcontext context = nullptr;
  const bool started = get && get(&context) != CUDA_ERROR_NOT_INITIALIZED;
  ::dlclose(driver);
  return started;
}

VariantStatus status_of(const Evaluation& e) {
  const std::string& why = e.outcome.why;
  const auto has = [&](const char* s) { return why.find(s) != std::string::npos; };
  switch (e.outcome.status) {
    case Status::ok: return VariantStatus::ok;
    case Status::invalid: return VariantStatus::wrong_answer;
    case Status::compile_error: return VariantStatus::compile_error;
    case Status::faulted: return VariantStatus::faulted;
    case Status::timed_out: return VariantStatus::timed_out;
    case Status::launch_error:
      return has("too many resources") || has("shared memory") ? VariantStatus::does_not_fit : VariantStatus::launch_failed;
    case Status::pruned:
      // The constraints and the points prune; the device's limits make a point that does not fit.
      return has("constraint") || has("not among the given points") || has("value not allowed") ? VariantStatus::pruned
                                                                                                   : VariantStatus::does_not_fit;
  }
  return VariantStatus::launch_failed;
}

TuneResults results_of(const TuneReport& report, const TuneSpec& t, const Space& space, const FamilyPlugin& plugin,
                       std::vector<std::string> notes) {
  TuneResults out;
  const TuneResult& r = report.result;
  const std::vector<std::string> leading = plugin.template_args(problem_of(t.run));
  std::size_t measured = 0, compiled = 0;
  for (const auto& e : r.evaluations) {
    measured += e.outcome.status == Status::ok || e.outcome.status == Status::invalid;
    compiled += e.outcome.status != Status::pruned;
  }
  // A sweep on worker processes compiles and verifies there: their times, added to the parent's.
  SweepTimes times = r.times;
  for (const auto& worker : report.worker_times) {
    times.compile_wall += worker.second.compile_wall;
    times.verify += worker.second.verify;
  }
  for (const auto& e : r.evaluations) {
    TunedVariant v;
    v.params = e.params;
    v.kernel = space.files()[e.candidate.file].file->name;
    v.status = status_of(e);
    v.reason = e.outcome.status == Status::ok ? e.outcome.detail : (e.outcome.detail.empty() ? e.outcome.why : e.outcome.detail);
    if (e.outcome.status == Status::ok && t.run.verify) v.verified = true;
    else if (e.outcome.status == Status::invalid) v.verified = false;
    v.times_ms = e.outcome.samples;
    v.registers = e.outcome.registers;
    if (v.status == VariantStatus::ok) {
      v.time_ms = e.time.median;
      for (const auto& [name, value] : declared_metrics(t.run, space.variant(e.candidate, leading), e.time.median))
        v.metrics[name] = value;
      if (report.bytes_moved > 0 && e.time.median > 0) v.metrics["GB/s"] = gbs_of(report.bytes_moved, e.time.median);
      for (double ms : e.outcome.samples) v.benchmark_ms += ms;
    }
    if (v.status != VariantStatus::pruned && v.status != VariantStatus::does_not_fit && compiled > 0)
      v.compile_ms = 1e3 * times.compile_wall / static_cast<double>(compiled);
    if ((e.outcome.status == Status::ok || e.outcome.status == Status::invalid) && measured > 0)
      v.verification_ms = 1e3 * times.verify / static_cast<double>(measured);
    out.results.push_back(std::move(v));
  }
  out.ranking = r.ranking;
  if (!r.ranking.empty()) out.best = r.ranking.front();
  out.strategy = report.strategy;
  out.objective = report.objective;
  out.device_name = report.gpu;
  out.arch = report.arch;
  out.nvrtc = report.nvrtc;
  out.sm_count = report.sm_count;
  out.peak_bandwidth_gbs = report.peak_gbs;
  out.notes = std::move(notes);
  for (const auto& n : report.notes) out.notes.push_back(n);
  out.programs = report.compile.programs;
  out.programs_from_cache = report.compile.from_cache;
  out.compile_seconds = report.compile.seconds;
  out.seconds = {{"start", times.start},        {"data", times.data},
                 {"reference", times.reference}, {"compile_wall", times.compile_wall},
                 {"compile_summed", times.compile_sum}, {"compile_wait", times.compile_wait},
                 {"measure", times.measure},    {"verify", times.verify},
                 {"scratch", times.scratch},    {"recheck", times.recheck},
                 {"save", times.save},          {"idle", times.idle},
                 {"other", times.other()},      {"total", times.total}};
  out.journal = report.journal;
  out.stopped_early = r.aborted || r.context_lost;
  out.stop_reason = r.stopped;
  out.devices = report.devices;
  return out;
}

// The config with a stand-in `data:` entry for each constant the caller gives and the config does
// not: reading the config makes every constant's value, and a declaration written for a caller's
// bytes (Kernel Tuner's cmem_args) has no data of its own. apply_request puts the caller's bytes
// in its place. The config's own text where the caller gives no constant.
std::string config_with_caller_constants(const TuneRequest& r) {
  if (r.constants.empty()) return r.config;
  YAML::Node root;
  try {
    root = YAML::Load(r.config);
  } catch (const YAML::Exception&) {
    return r.config;  // parse_tune_spec says where it is broken
  }
  if (!root.IsMap() || (root["data"] && !root["data"].IsMap())) return r.config;
  bool added = false;
  for (const auto& [name, view] : r.constants)
    if (!root["data"][name]) {
      root["data"][name]["generator"] = "uniform";
      added = true;
    }
  return added ? YAML::Dump(root) + "\n" : r.config;
}

}  // namespace

TuneResults tune_kernel(const Engine& engine, const TuneRequest& request) {
  const auto wall_start = std::chrono::steady_clock::now();
  timeline("tune_kernel: start");
  const Runtime& runtime = EngineInternals::runtime(engine);
  TuneSpec t = parse_tune_spec(config_with_caller_constants(request), request.config_path, runtime.plugins(),
                               runtime.kernels());
  t.save = false;  // the caller has the result; the tuning database is `gpuk tune`'s
  const FamilyPlugin& plugin = runtime.plugins().get(t.run.family);
  const Space space = Space::from_spec(t, runtime.kernels());
  std::vector<std::string> notes;
  apply_request(t, request, space, plugin, notes);
  timeline("tune_kernel: config read, space made");
  for (const auto& f : space.files())
    for (const auto& w : f.widened) notes.push_back(w + " is not in " + f.file->name + "'s metadata list; it is swept anyway");

  ProgressBar bar(!request.quiet);
  std::vector<int> ordinals = request.devices;
  if (ordinals.empty()) ordinals.push_back(EngineInternals::options(engine).device);
  std::string devices;
  for (int o : ordinals) {
    if (!devices.empty()) devices += ',';
    devices += std::to_string(o);
  }
  TuneReport report;
  if (!cuda_started_here()) {
    WorkerSweepOptions how;
    how.devices = devices;
    how.parent_compiles = false;  // this process stays without CUDA: the next call forks workers too
    if (request.journal) {
      how.journal_dir = *request.journal;
      how.run_id = make_run_id();
    }
    how.progress = [&](const Progress& p) { bar(p); };
    how.note = [&](const std::string& note) { notes.push_back(note); };
    std::vector<ModelSweep> sweeps = sweep_on_workers(runtime, t, space, how, wall_start);
    if (sweeps.size() > 1)
      throw ConfigError("devices " + devices + " are GPUs of " + std::to_string(sweeps.size()) +
                        " models; tune on GPUs of one model at a time");
    report = std::move(sweeps.front().report);
  } else {
    // CUDA runs in this process already (an Engine prepared an Operation, another library started
    // it): no worker forked from it could use the GPU, so the sweep runs here, and a variant that
    // faults or hangs ends it.
    if (ordinals.size() > 1 || ordinals.front() != EngineInternals::options(engine).device)
      throw ConfigError("CUDA is started in this process: tune_kernel sweeps on the Engine's GPU only (device " +
                        std::to_string(EngineInternals::options(engine).device) + ")");
    notes.push_back("CUDA was started in this process before the sweep: it runs here, without worker processes; a "
                    "variant that faults or hangs ends it");
    SweepOptions options;
    if (request.journal) {
      options.journal_dir = *request.journal;
      options.run_id = make_run_id();
    }
    options.progress = [&](const Progress& p) { bar(p); };
    report = sweep_on_gpu(t, space, RunContext{runtime}, EngineInternals::open_device(engine), options);
  }
  bar.finish();
  timeline("tune_kernel: sweep done");
  TuneResults out = results_of(report, t, space, plugin, std::move(notes));
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace gpuk
