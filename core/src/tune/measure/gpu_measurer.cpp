// The GPU Measurer of `gpuk tune` (tune/measure/gpu_measurer.hpp).
#include "tune/measure/gpu_measurer.hpp"

#include <algorithm>
#include <chrono>
#include <regex>
#include <thread>

#include "gpuk/error.hpp"
#include "jit/nvrtc_processes.hpp"
#include "kernel/constants.hpp"
#include "tune/sweep/stopwatch.hpp"
#include "util/text.hpp"
#include "util/timeline.hpp"

namespace gpuk {

namespace detail {

std::string cuda_error_of(const std::string& message) {
  static const std::regex code(R"(CUDA_ERROR_[A-Z_]+( \([^)]*\))?)");
  std::smatch m;
  if (std::regex_search(message, m, code)) return m[0].str();
  return message.size() > 80 ? message.substr(0, 77) + "..." : message;
}

GpuMeasurer::GpuMeasurer(const RunContext& context, Device& device, Bench& bench, const GpuMeasurerOptions& options,
                         CompileStats* stats)
    : device_(device), bench_(bench), options_(options), cut_(options.cut_factor), jit_(context.runtime.jit(device.info().arch())),
      nvrtc_(nvrtc_processes(options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency()),
                             BulkCompiler::kCompileNice)),
      compiler_([this](const KernelFile& file, const std::vector<std::string>& names) {
                  return jit_.compile(file, names, nvrtc_.get());
                },
                options.threads, stats) {
  const Problem problem = problem_of(bench.spec());
  leading_ = context.runtime.plugins().get(problem.family).template_args(problem);
  limits_ = launch_limits(problem, device.info());
  bench_.set_time_limit(options.time_limit_s > 0 ? options.time_limit_s : context.time_limit_s);
  answer_program_ = std::async(std::launch::async, [this] { return DeviceAnswer::compile(jit_, nvrtc_.get()); });
  within_program_ = std::async(std::launch::async, [this] { return DeviceAnswer::compile_within(jit_, nvrtc_.get()); });
}

SweepTimes GpuMeasurer::times() const {
  SweepTimes t = times_;
  compiler_.add_times(t);
  return t;
}

std::vector<PlannedPoint> GpuMeasurer::plan(const Space& space, const std::vector<Candidate>& points) {
  std::vector<PlannedPoint> fresh;
  for (const auto& c : points) {
    if (prepared_.count(c)) continue;
    LaunchPlan plan;
    if (space.prune(c, leading_, limits_, &plan)) continue;  // the tuner prunes first; nothing to compile
    Prepared p;
    p.plan = std::move(plan);
    p.label = space.label(c);
    p.where = "variant " + p.label + " of " + space.files()[c.file].file->path.string();
    fresh.push_back({c, kernel_names(p.plan)});
    prepared_.emplace(c, std::move(p));
  }
  return fresh;
}

void GpuMeasurer::prepare(const Space& space, const std::vector<Candidate>& points) {
  // New points, grouped by kernel file, in the order given.
  const std::vector<PlannedPoint> fresh = plan(space, points);
  if (fresh.empty()) return;
  std::vector<std::vector<Candidate>> members;
  timeline("measurer: " + std::to_string(fresh.size()) + " points to compile");
  const auto chunks = group_into_chunks(space, fresh, compiler_.threads(), &members);
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    for (const auto& c : members[k]) prepared_.at(c).chunk = chunks[k];
    compiler_.submit(chunks[k], static_cast<int>(members[k].size()));
  }
}

void GpuMeasurer::adopt(const Space& space, const CompiledProgram& program) {
  const std::vector<PlannedPoint> fresh = plan(space, program.points);
  if (fresh.empty()) return;
  auto chunk = std::make_shared<Chunk>();
  chunk->file_index = fresh.front().point.file;
  chunk->file = space.files()[chunk->file_index].file;
  chunk->names = program.names;
  for (const auto& f : fresh) {
    for (const auto& name : f.names)
      if (chunk->index_of(name) == chunk->names.size())
        throw Error("internal: " + space.label(f.point) + " needs " + name + ", which its compiled program lacks");
    prepared_.at(f.point).chunk = chunk;
  }
  compiler_.adopt(chunk, program.errors);
}

// Waits for the variant's compile and loads it; its outcome when it did not compile or load.
std::optional<Outcome> GpuMeasurer::not_ready(Prepared& p) {
  Outcome o;
  o.launches = p.plan.launches;
  p.chunk->done.wait();
  for (const auto& l : p.plan.launches) {
    const std::string& error = p.chunk->errors[p.chunk->index_of(l.name_expression)];
    if (!error.empty()) {
      o.status = Status::compile_error;
      o.why = compile_error_of(error);
      o.detail = error;
      return o;
    }
  }
  try {
    load(p);
  } catch (const Error& e) {
    o.status = Status::compile_error;
    o.why = "the CUBIN did not load: " + cuda_error_of(e.what());
    o.detail = e.what();
    return o;
  }
  return std::nullopt;
}

Outcome GpuMeasurer::measure(const Space& space, const Candidate& c) {
  prepare(space, {c});
  Outcome o;
  const auto it = prepared_.find(c);
  if (it == prepared_.end()) {
    o.status = Status::pruned;
    o.detail = space.prune(c, leading_, limits_).value_or("cannot run here");
    o.why = o.detail;
    return o;
  }
  Prepared& p = it->second;
  o.launches = p.plan.launches;
  {
    const Stopwatch waiting(times_.compile_wait);
    if (auto failed = not_ready(p)) return std::move(*failed);
  }
  // The compiled functions' own limits: registers cap the threads per block.
  for (const auto& f : p.kernels.functions()) {
    o.registers = std::max(o.registers, f.attributes.registers);
    o.spill_bytes = std::max(o.spill_bytes, f.attributes.local_bytes);
  }
  if (const auto misfit = check_fit(p.plan, p.kernels, limits_, device_.info(), p.label)) {
    o.status = Status::pruned;
    o.why = misfit->why;
    o.detail = misfit->detail;
    return o;
  }
  try {
    {
      const Stopwatch binding(times_.scratch);
      bind_scratch(p);
    }
    const LaunchTarget target{p.plan, p.functions.data(), bench_.stream().get(), p.where};
    Stopwatch verifying(times_.verify);
    const Verification v = verify(target, p);
    verifying.stop();
    const Stopwatch timing(times_.measure);
    if (!v.passed) {
      o.status = Status::invalid;
      o.why = "wrong answer";
      o.detail = v.detail;
      return o;
    }
    time_variant(o, target, p);
  } catch (const Error& e) {
    failed(o, e, p);
  }
  return o;
}

// The timed runs of a verified variant. An in-out input that its verified run left as it was
// (DeviceAnswer::unchanged_inputs) is not restored before each run; the runs count only if the
// last one left it so too (the outputs compared with the kept answer once more), else the variant
// is timed again with every input restored.
void GpuMeasurer::time_variant(Outcome& o, const LaunchTarget& target, Prepared& p) {
  p.unchanged.clear();
  std::vector<bool> untouched;
  if (answer_ && answer_->kept()) untouched = answer_->unchanged_inputs();
  if (std::find(untouched.begin(), untouched.end(), true) == untouched.end()) return time_runs(o, target);
  if (runs_left_inputs(untouched, [&] { time_runs(o, target); })) {
    ++unrestored_;
    p.unchanged = std::move(untouched);
    return;
  }
  ++restored_again_;
  o.samples.clear();
  o.auto_stop.clear();
  time_runs(o, target);
}

// Runs `runs` with the in-out inputs `untouched` left unrestored; whether the last run left them
// so (the outputs compared with the kept answer once more). Every input is restored again after.
bool GpuMeasurer::runs_left_inputs(const std::vector<bool>& untouched, const std::function<void()>& runs) {
  Workload& workload = bench_.workload();
  struct RestoreAll {  // whatever the runs end in
    Workload& workload;
    ~RestoreAll() {
      try {
        workload.leave_unrestored({});
      } catch (...) {  // clearing a list: nothing to report from a destructor
      }
    }
  } restore_all{workload};
  workload.leave_unrestored(untouched);
  runs();
  (void)answer_->same(workload, bench_.launcher(), bench_.stream());
  const std::vector<bool>& now = answer_->identical();
  for (std::size_t i = 0; i < untouched.size(); ++i)
    if (untouched[i] && !(i < now.size() && now[i])) return false;
  return true;
}

// The timed runs: a fixed count, or (auto) until the median is known.
void GpuMeasurer::time_runs(Outcome& o, const LaunchTarget& target) {
  if (!options_.auto_repeats) {
    // A variant far behind the fastest so far: its probe is its timing (tune/sweep/timing_cut.hpp);
    // one that is not cut has had its probe as warm-ups.
    int warmup = options_.warmup;
    if (cut_.armed()) {
      std::vector<double> probe = bench_.time(target, 0, kProbeRuns, options_.flush_l2);
      if (!probe.empty() && cut_.cuts(*std::min_element(probe.begin(), probe.end()))) {
        o.samples = std::move(probe);
        o.auto_stop = "cut";
        ++cut_count_;
        return;
      }
      warmup = std::max(0, warmup - static_cast<int>(probe.size()));
    }
    o.samples = bench_.time(target, warmup, options_.repeats, options_.flush_l2);
    cut_.timed(Spread::of(o.samples).median);
    return;
  }
  int warmup = options_.warmup;
  const auto timing = time_until_stable(
      [&](int k) {
        auto s = bench_.time(target, warmup, k, options_.flush_l2);
        warmup = 0;
        return s;
      },
      *options_.auto_repeats);
  o.samples = timing.samples;
  o.auto_stop = auto_stop_name(timing.stop);
}

std::vector<double> GpuMeasurer::time(const Space& space, const Candidate& c, int repeats) {
  Prepared& p = ready(space, c, "time()");
  Stopwatch timing(times_.recheck);
  try {
    bench_.bind(p.plan);
    const LaunchTarget target{p.plan, p.functions.data(), bench_.stream().get(), p.where};
    const auto runs = [&] { return bench_.time(target, std::max(1, options_.warmup / 2), repeats, options_.flush_l2); };
    if (answer_ && answer_->kept() && std::find(p.unchanged.begin(), p.unchanged.end(), true) != p.unchanged.end()) {
      std::vector<double> samples;
      if (runs_left_inputs(p.unchanged, [&] { samples = runs(); })) return samples;
      p.unchanged.clear();  // an input changed after all: restored from now on
    }
    return runs();
  } catch (const Error& e) {
    Outcome o;
    failed(o, e, p);
    return {};
  }
}

// The variant's answer: on the device when its outputs are the bytes of the kept verified
// answer (tune/measure/device_answer.hpp), else on the host as Bench::check does (leaving out
// the outputs that had the kept answer's bytes: Workload::known_good), whose first answer that
// passes is kept for the next ones. A CUDA error of the variant's run goes to the caller;
// one of the comparison turns the device path off for the rest of the sweep.
Verification GpuMeasurer::verify(const LaunchTarget& target, const Prepared& p) {
  const auto since = [](std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  };
  if (answer_ && answer_->kept() && within_pending_ && within_program_.valid() &&
      within_program_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    // The compare rule's kernels, compiled beside the sweep, are ready: the expected outputs
    // go to the device (never waited for: until then the host compares).
    const auto at = std::chrono::steady_clock::now();
    std::string why;
    try {
      answer_->load_within(within_program_.get());
      const auto expected = bench_.workload().expected_outputs();
      if (expected && !answer_->keep_expected(bench_.workload(), *expected, bench_.stream(), &why)) no_within_ = why;
    } catch (const Error& e) {
      no_within_ = e.what();
    }
    within_pending_ = false;
    answer_setup_s_ += since(at);
  }
  if (answer_ && answer_->kept()) {
    const Stopwatch device_check(device_checks_s_);
    bench_.workload().poison(bench_.stream());
    bench_.launch(target);
    wait_stream(bench_.stream().get(), bench_.time_limit(), p.where);
    try {
      if (answer_->same(bench_.workload(), bench_.launcher(), bench_.stream())) {
        ++on_device_;
        Verification v;
        v.passed = true;
        v.detail = "the same bytes as the first verified answer (compared on the GPU)";
        return v;
      }
      // Within verify()'s rule of the expected outputs, on the device: the same verdict, no download.
      if (answer_->has_expected()) {
        if (auto within = answer_->within(bench_.workload(), bench_.stream())) {
          ++within_on_device_;
          return *within;
        }
      }
    } catch (const Error& e) {
      drop_answer(std::string("the comparison failed: ") + e.what());
    }
  }
  auto at = std::chrono::steady_clock::now();
  // Outputs that kept the verified answer's bytes are not copied back and compared again.
  const bool partly_known = answer_ && answer_->kept() &&
                            std::find(answer_->identical().begin(), answer_->identical().end(), true) !=
                                answer_->identical().end();
  struct KnownFor {  // this check only, whatever it ends in
    Workload& workload;
    bool set;
    ~KnownFor() {
      try {
        if (set) workload.known_good({});
      } catch (...) {  // clearing a list: nothing to report from a destructor
      }
    }
  } known{bench_.workload(), partly_known};
  if (partly_known) {
    bench_.workload().known_good(answer_->identical());
    ++host_in_part_;
  }
  const Verification v = bench_.check(target);
  host_checks_s_ += since(at);
  ++on_host_;
  if (v.passed && !answer_tried_) {
    answer_tried_ = true;
    at = std::chrono::steady_clock::now();
    try {
      answer_ = std::make_unique<DeviceAnswer>(answer_program_.get(), device_.info());
      std::string why;
      if (!answer_->keep(bench_.workload(), bench_.launcher(), bench_.stream(), &why)) drop_answer(why);
      else within_pending_ = bench_.workload().expected_outputs().has_value();  // once the rule's kernels are ready
    } catch (const Error& e) {
      drop_answer(e.what());
    }
    answer_setup_s_ += since(at);
  }
  return v;
}

// Binds the variant's scratch; when it does not fit beside the kept answer, the answer goes
// (the variants come first) and the bind is tried again.
void GpuMeasurer::bind_scratch(const Prepared& p) {
  try {
    bench_.bind(p.plan);
  } catch (const Error& e) {
    if (!answer_) throw;
    drop_answer(std::string("the scratch of ") + p.label + " did not fit beside the kept answer: " + e.what());
    bench_.bind(p.plan);
  }
}

void GpuMeasurer::drop_answer(const std::string& why) {
  answer_.reset();
  no_device_check_ = why;
}

std::vector<std::string> GpuMeasurer::notes() const {
  std::vector<std::string> out;
  if (cut_count_ > 0)
    out.push_back(std::to_string(cut_count_) + (cut_count_ == 1 ? " variant timed by its" : " variants timed by their") +
                  " probe alone (" + std::to_string(kProbeRuns) + " runs, 'cut'): verified, then the faster run over " +
                  fixed(cut_.factor(), 0) + "x the fastest median timed before it");
  if (unrestored_ > 0 || restored_again_ > 0)
    out.push_back(std::to_string(unrestored_ + restored_again_) + " variant" +
                  (unrestored_ + restored_again_ == 1 ? "" : "s") +
                  " timed without restoring the in-out inputs that their verified run left unchanged" +
                  (restored_again_ > 0 ? " (" + std::to_string(restored_again_) +
                                             " timed again with them restored: an input changed during the runs)"
                                       : " (checked unchanged after the runs)"));
  if (on_device_ > 0 || within_on_device_ > 0 || host_in_part_ > 0 || !no_device_check_.empty()) {
    const auto s = [](double v) { return fixed(v, 2); };
    std::string note = "verified on the GPU: " + std::to_string(on_device_ + within_on_device_) + " of " +
                       std::to_string(on_device_ + within_on_device_ + on_host_) + " variants (" +
                       std::to_string(on_device_) + " with the bytes of the first verified answer, " +
                       std::to_string(within_on_device_) + " within the compare rule of the expected outputs" +
                       (no_within_.empty() ? "" : ": off, " + no_within_) + "); the rest on the host";
    if (host_in_part_ > 0)
      note += " (" + std::to_string(host_in_part_) + " of them only in the outputs whose bytes differed)";
    if (!no_device_check_.empty()) note += " (device comparison off: " + no_device_check_ + ")";
    note += "; verify took " + s(device_checks_s_) + " s on the GPU (poison, run, compare), " + s(host_checks_s_) +
            " s on the host (poison, run, download, compare) and " + s(answer_setup_s_) +
            " s making the GPU's comparison ready (kernels loaded, the answer copied, the compare kernel checked)";
    out.push_back(note);
  }
  return out;
}

// A point measured before (by measure(), or by an earlier sweep: the journal) compiled (the
// cache has it) and loaded.
Prepared& GpuMeasurer::ready(const Space& space, const Candidate& c, const std::string& what) {
  prepare(space, {c});
  const auto it = prepared_.find(c);
  if (it == prepared_.end()) throw Error(what + ": " + space.label(c) + " cannot run here");
  Prepared& p = it->second;
  if (!p.loaded) {
    p.chunk->done.wait();
    for (const auto& l : p.plan.launches)
      if (const auto& error = p.chunk->errors[p.chunk->index_of(l.name_expression)]; !error.empty())
        throw Error(what + ": " + p.label + " does not compile: " + compile_error_of(error));
    load(p);
  }
  return p;
}

void GpuMeasurer::load(Prepared& p) {
  if (p.loaded) return;
  const std::vector<std::string> names = kernel_names(p.plan);
  std::vector<const CompiledKernels*> compiled;
  for (const auto& name : names) compiled.push_back(p.chunk->compiled[p.chunk->index_of(name)].get());
  p.kernels = load_kernels(names, compiled, p.chunk->file->path.string() + " " + p.label,
                           module_constants(*p.chunk->file, limits_.sizes, bench_.spec().constants.get()).get());
  p.functions = bind(p.plan, p.kernels);
  p.loaded = true;
}

// A CUDA error while running a variant. One that leaves the context alive is a launch error,
// and the sweep goes on here. A sticky one (the kernel faulted) or a kernel past its time limit
// ends this process's part of the sweep: the context cannot be rebuilt in-process (after
// cuDevicePrimaryCtxReset the driver still returns the sticky error, on the H100 and driver
// tested), so ContextLost carries the variant's outcome to the caller, which goes on in a fresh
// process (`gpuk tune` does).
void GpuMeasurer::failed(Outcome& o, const Error& e, const Prepared& p) {
  const bool hung = dynamic_cast<const TimeLimitError*>(&e) != nullptr;
  const CUresult alive = hung ? CUDA_SUCCESS : driver().cuCtxSynchronize();
  if (!hung && alive == CUDA_SUCCESS) {
    o.status = Status::launch_error;
    o.why = cuda_error_of(e.what());
    o.detail = e.what();
    return;
  }
  o.samples.clear();
  if (hung) {
    o.status = Status::timed_out;
    o.why = "ran past its time limit";
    o.detail = e.what();
  } else {
    o.status = Status::faulted;
    o.why = describe(alive);
    o.detail = p.where + " faulted: " + describe(alive);
  }
  throw ContextLost(o.detail, o);
}


}  // namespace detail

std::unique_ptr<Measurer> make_gpu_measurer(const RunContext& context, Device& device, Bench& bench,
                                            const GpuMeasurerOptions& options, CompileStats* stats) {
  return std::make_unique<detail::GpuMeasurer>(context, device, bench, options, stats);
}

}  // namespace gpuk
