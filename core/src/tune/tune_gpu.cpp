// The GPU Measurer of `gpuk tune`: compiles variants in bulk on a thread pool (the variants of
// one kernel file in as few NVRTC programs as there are threads) while the GPU measures what is
// already compiled, on one uploaded workload (Bench).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

#include "gpuk/error.hpp"
#include "jit/jit.hpp"
#include "run/device.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "tune/device_answer.hpp"
#include "tune/energy.hpp"
#include "tune/journal.hpp"
#include "tune/sweep.hpp"

namespace gpuk {

namespace {

// A fixed set of worker threads running jobs in the order they were submitted. On destruction,
// jobs not yet started are dropped and running ones are waited for.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int i = 0; i < threads; ++i)
      workers_.emplace_back([this] {
        for (;;) {
          std::function<void()> job;
          {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
            if (stop_) return;
            job = std::move(jobs_.front());
            jobs_.pop_front();
          }
          job();
        }
      });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      jobs_.clear();
    }
    ready_.notify_all();
    for (auto& w : workers_) w.join();
  }
  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    ready_.notify_one();
  }

 private:
  std::vector<std::thread> workers_;
  std::deque<std::function<void()>> jobs_;
  std::mutex mutex_;
  std::condition_variable ready_;
  bool stop_ = false;
};

// Adds the seconds from its construction to stop() (or its end) to `into`.
class Stopwatch {
 public:
  explicit Stopwatch(double& into) : into_(into), start_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() { stop(); }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  double& into_;
  std::chrono::steady_clock::time_point start_;
  bool stopped_ = false;
};

// One NVRTC program's worth of variants of one kernel file.
struct Chunk {
  std::shared_ptr<const KernelFile> file;
  std::vector<std::string> names;
  std::shared_future<void> done;
  // Filled by the worker before `done` is ready: per name, its CUBIN or its error.
  std::vector<std::shared_ptr<const CompiledKernels>> compiled;
  std::vector<std::string> errors;
};

struct Prepared {
  std::shared_ptr<Chunk> chunk;
  LaunchPlan plan;
  std::string label, where;
  LoadedKernels kernels;              // once loaded, on the measuring thread (the one with the context)
  std::vector<CUfunction> functions;  // bound to the plan
  bool loaded = false;
};

// "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested for launch)" from a message.
std::string cuda_error_of(const std::string& message) {
  static const std::regex code(R"(CUDA_ERROR_[A-Z_]+( \([^)]*\))?)");
  std::smatch m;
  if (std::regex_search(message, m, code)) return m[0].str();
  return message.size() > 80 ? message.substr(0, 77) + "..." : message;
}

// The first "error: ..." line of an NVRTC log.
std::string compile_error_of(const std::string& message) {
  const auto at = message.find("error");
  if (at == std::string::npos) return "NVRTC could not compile it";
  std::string line = message.substr(at, message.find('\n', at) - at);
  return line.size() > 100 ? line.substr(0, 97) + "..." : line;
}

class GpuMeasurer final : public Measurer {
 public:
  GpuMeasurer(const RunContext& context, Device& device, Bench& bench, const GpuMeasurerOptions& options,
              CompileStats* stats)
      : device_(device), bench_(bench), options_(options), stats_(stats),
        threads_(options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency())),
        jit_(jit_options(context, device), context.cache), pool_(threads_) {
    const Problem problem = problem_of(bench.spec());
    leading_ = context.plugins.get(problem.family).template_args(problem);
    limits_ = launch_limits(problem, device.info());
    bench_.set_time_limit(options.time_limit_s > 0 ? options.time_limit_s : context.time_limit_s);
  }

  LaunchLimits limits() const override { return limits_; }
  std::vector<std::string> leading_args() const override { return leading_; }

  SweepTimes times() const override {
    SweepTimes t = times_;
    std::lock_guard lock(stats_mutex_);
    t.compile_sum = compile_sum_;
    if (first_compile_ && last_compile_ > *first_compile_)
      t.compile_wall = std::chrono::duration<double>(last_compile_ - *first_compile_).count();
    return t;
  }

  void prepare(const Space& space, const std::vector<Candidate>& points) override {
    // New points, grouped by kernel file, in the order given.
    std::map<std::size_t, std::vector<Candidate>> by_file;
    std::size_t fresh = 0;
    for (const auto& c : points) {
      if (prepared_.count(c)) continue;
      LaunchPlan plan;
      if (space.prune(c, leading_, limits_, &plan)) continue;  // the tuner prunes first; nothing to compile
      Prepared p;
      p.plan = std::move(plan);
      p.label = space.label(c);
      p.where = "variant " + p.label + " of " + space.files()[c.file].file->path.string();
      prepared_.emplace(c, std::move(p));
      by_file[c.file].push_back(c);
      ++fresh;
    }
    if (fresh == 0) return;
    const std::size_t per_program = (fresh + static_cast<std::size_t>(threads_) - 1) / static_cast<std::size_t>(threads_);
    for (auto& [f, cands] : by_file) {
      for (std::size_t begin = 0; begin < cands.size(); begin += per_program) {
        auto chunk = std::make_shared<Chunk>();
        chunk->file = space.files()[f].file;
        const std::size_t end = std::min(cands.size(), begin + per_program);
        for (std::size_t i = begin; i < end; ++i) {
          Prepared& p = prepared_.at(cands[i]);
          p.chunk = chunk;
          for (const auto& name : kernel_names(p.plan))
            if (std::find(chunk->names.begin(), chunk->names.end(), name) == chunk->names.end())
              chunk->names.push_back(name);
        }
        {
          std::lock_guard lock(stats_mutex_);
          if (stats_) stats_->variants += static_cast<int>(end - begin);
        }
        auto promise = std::make_shared<std::promise<void>>();
        chunk->done = promise->get_future().share();
        pool_.submit([this, chunk, promise] {
          compile(*chunk);
          promise->set_value();
        });
      }
    }
  }

  Outcome measure(const Space& space, const Candidate& c) override {
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
    Stopwatch waiting(times_.compile_wait);
    p.chunk->done.wait();
    // Compile errors, per variant.
    for (const auto& l : p.plan.launches) {
      const std::size_t k = index_of(*p.chunk, l.name_expression);
      if (!p.chunk->errors[k].empty()) {
        o.status = Status::compile_error;
        o.why = compile_error_of(p.chunk->errors[k]);
        o.detail = p.chunk->errors[k];
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
    waiting.stop();
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
      bind_scratch(p);
      const LaunchTarget target{p.plan, p.functions.data(), bench_.stream().get(), p.where};
      Stopwatch verifying(times_.verify);
      const Verification v = verify(target, p);
      verifying.stop();
      Stopwatch timing(times_.measure);
      if (!v.passed) {
        o.status = Status::invalid;
        o.why = "wrong answer";
        o.detail = v.detail;
        return o;
      }
      if (options_.auto_repeats) {
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
      } else {
        o.samples = bench_.time(target, options_.warmup, options_.repeats, options_.flush_l2);
      }
    } catch (const Error& e) {
      failed(o, e, p);
    }
    return o;
  }

  // Back-to-back runs in batches of about 2 ms, the energy counter read after each: the energy
  // and time between its first and last change over at least the window (the counter moves in
  // steps much longer than one call), divided by the calls in between. The SM clock is read
  // while each batch runs. Batches are queued ahead: the counter is read while the GPU works, so
  // that the window holds kernels back to back and not the GPU idling while the host waits and
  // reads (issue 27: waiting for an idle stream first made every figure 2.7x).
  std::optional<EnergySample> energy(const Space& space, const Candidate& c, double ms_per_call) override {
    if (!options_.energy) return std::nullopt;
    Prepared& p = ready(space, c, "energy()");
    Stopwatch timing(times_.measure);
    EnergyMeter& meter = *options_.energy;
    try {
      bench_.bind(p.plan);
      const LaunchTarget target{p.plan, p.functions.data(), bench_.stream().get(), p.where};
      const double per_call_ms = ms_per_call > 0 ? ms_per_call : 0.01;
      const int batch = static_cast<int>(std::clamp(std::ceil(2.0 / per_call_ms), 1.0, 100000.0));
      const double window = options_.energy_window_s;
      const double cap = std::max(1.0, 20 * window);
      const double limit = bench_.time_limit() + 10 * batch * per_call_ms * 1e-3;
      struct Edge {
        double t = 0;
        std::int64_t calls = 0;
        std::uint64_t mj = 0;
      };
      const auto start = std::chrono::steady_clock::now();
      const auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
      const Edge begin{0, 0, meter.millijoules()};
      std::optional<Edge> first, last;
      std::uint64_t previous = begin.mj;
      std::int64_t calls = 0;
      double mhz = 0;
      int clocks = 0;
      // Batches queued ahead of the one waited for: the NVML reads between waits take a few ms,
      // and the GPU must not run dry meanwhile (with one batch ahead, every figure was still 2x
      // on the H100).
      constexpr int kAhead = 4;
      struct Events {
        CUevent done[kAhead + 1] = {};
        ~Events() {
          for (CUevent e : done)
            if (e) driver().cuEventDestroy(e);
        }
      } events;
      for (CUevent& e : events.done) GPUK_CU(driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "energy of " + p.where);
      const CUstream stream = bench_.stream().get();
      const auto queue_batch = [&](CUevent done) {
        for (int i = 0; i < batch; ++i) bench_.launch(target);
        GPUK_CU(driver().cuEventRecord(done, stream), "energy of " + p.where);
      };
      // Waits for a batch's event, within the time limit (polled, as wait_stream polls).
      const auto wait_batch = [&](CUevent done) {
        const auto began = std::chrono::steady_clock::now();
        for (;;) {
          const CUresult r = driver().cuEventQuery(done);
          if (r == CUDA_SUCCESS) return;
          if (r != CUDA_ERROR_NOT_READY) GPUK_CU(r, "energy of " + p.where);
          if (std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() > limit) {
            wait_stream(stream, 1e-9, p.where);  // says it ran past its limit, as a timed run would
            return;
          }
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
      };
      // Drains the stream on the way out, also when the loop throws.
      struct Drain {
        CUstream stream;
        double limit;
        const std::string& where;
        ~Drain() {
          if (device_hung()) return;  // abandoned: the context is rebuilt, nothing to wait for
          try {
            wait_stream(stream, limit, where);
          } catch (const Error&) {
          }
        }
      } drain{stream, limit, p.where};
      constexpr int kRing = kAhead + 1;
      for (int k = 0; k < kAhead; ++k) queue_batch(events.done[k]);
      for (int k = 0;; ++k) {
        // Batch k done: the next goes in at once, then the counter and the clock are read
        // while the GPU runs the batches ahead.
        wait_batch(events.done[k % kRing]);
        calls += batch;
        queue_batch(events.done[(k + kAhead) % kRing]);
        const Edge now{since(), calls, meter.millijoules()};
        mhz += meter.sm_mhz();
        ++clocks;
        if (now.mj != previous) {
          (first ? last : first) = now;
          previous = now.mj;
        }
        if (first && last && last->t - first->t >= window) break;
        if (now.t >= cap) {
          if (!last) last = now, first = begin;  // the counter hardly moved: the whole span
          break;
        }
      }
      if (last->mj == first->mj) return std::nullopt;  // the counter never moved: nothing to report
      EnergySample sample;
      sample.calls = last->calls - first->calls;
      sample.window_s = last->t - first->t;
      const double joules = static_cast<double>(last->mj - first->mj) / 1000.0;
      sample.joules = sample.calls > 0 ? joules / static_cast<double>(sample.calls) : 0;
      sample.watts = sample.window_s > 0 ? joules / sample.window_s : 0;
      sample.sm_mhz = clocks ? mhz / clocks : 0;
      return sample;
    } catch (const Error& e) {
      Outcome o;
      failed(o, e, p);
      return std::nullopt;
    }
  }

  std::vector<double> time(const Space& space, const Candidate& c, int repeats) override {
    Prepared& p = ready(space, c, "time()");
    Stopwatch timing(times_.recheck);
    try {
      bench_.bind(p.plan);
      const LaunchTarget target{p.plan, p.functions.data(), bench_.stream().get(), p.where};
      return bench_.time(target, std::max(1, options_.warmup / 2), repeats, options_.flush_l2);
    } catch (const Error& e) {
      Outcome o;
      failed(o, e, p);
      return {};
    }
  }

 private:
  // The variant's answer: on the device when its outputs are the bytes of the kept verified
  // answer (tune/device_answer.hpp), else on the host as Bench::check does, whose first answer
  // that passes is kept for the next ones. A CUDA error of the variant's run goes to the caller;
  // one of the comparison turns the device path off for the rest of the sweep.
  Verification verify(const LaunchTarget& target, const Prepared& p) {
    if (answer_ && answer_->kept()) {
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
      } catch (const Error& e) {
        drop_answer(std::string("the comparison failed: ") + e.what());
      }
    }
    const Verification v = bench_.check(target);
    ++on_host_;
    if (v.passed && !answer_tried_) {
      answer_tried_ = true;
      try {
        answer_ = std::make_unique<DeviceAnswer>(jit_, device_.info());
        std::string why;
        if (!answer_->keep(bench_.workload(), bench_.launcher(), bench_.stream(), &why)) drop_answer(why);
      } catch (const Error& e) {
        drop_answer(e.what());
      }
    }
    return v;
  }

  // Binds the variant's scratch; when it does not fit beside the kept answer, the answer goes
  // (the variants come first) and the bind is tried again.
  void bind_scratch(const Prepared& p) {
    try {
      bench_.bind(p.plan);
    } catch (const Error& e) {
      if (!answer_) throw;
      drop_answer(std::string("the scratch of ") + p.label + " did not fit beside the kept answer: " + e.what());
      bench_.bind(p.plan);
    }
  }

  void drop_answer(const std::string& why) {
    answer_.reset();
    no_device_check_ = why;
  }

 public:
  std::vector<std::string> notes() const override {
    std::vector<std::string> out;
    if (on_device_ > 0 || !no_device_check_.empty()) {
      std::string note = "verified on the GPU: " + std::to_string(on_device_) + " of " +
                         std::to_string(on_device_ + on_host_) +
                         " variants (their outputs the bytes of the first verified answer); the rest on the host";
      if (!no_device_check_.empty()) note += " (device comparison off: " + no_device_check_ + ")";
      out.push_back(note);
    }
    return out;
  }

 private:
  // A point measured before (by measure(), or by an earlier sweep: the journal) compiled (the
  // cache has it) and loaded.
  Prepared& ready(const Space& space, const Candidate& c, const std::string& what) {
    prepare(space, {c});
    const auto it = prepared_.find(c);
    if (it == prepared_.end()) throw Error(what + ": " + space.label(c) + " cannot run here");
    Prepared& p = it->second;
    if (!p.loaded) {
      p.chunk->done.wait();
      for (const auto& l : p.plan.launches)
        if (const auto& error = p.chunk->errors[index_of(*p.chunk, l.name_expression)]; !error.empty())
          throw Error(what + ": " + p.label + " does not compile: " + compile_error_of(error));
      load(p);
    }
    return p;
  }

  static JitOptions jit_options(const RunContext& context, const Device& device) {
    JitOptions o;
    o.arch = device.info().arch();
    o.include_dirs = context.kernels.include_dirs();
    return o;
  }

  static std::size_t index_of(const Chunk& chunk, const std::string& name) {
    return static_cast<std::size_t>(std::find(chunk.names.begin(), chunk.names.end(), name) - chunk.names.begin());
  }

  // On a worker thread: one program for the chunk; when it fails, one per name, to find the
  // variants at fault (one bad instantiation fails the whole program).
  void compile(Chunk& chunk) {
    chunk.compiled.assign(chunk.names.size(), nullptr);
    chunk.errors.assign(chunk.names.size(), {});
    const auto one = [&](const std::vector<std::string>& names) -> std::shared_ptr<const CompiledKernels> {
      const auto start = std::chrono::steady_clock::now();
      {
        std::lock_guard lock(stats_mutex_);
        if (!first_compile_) first_compile_ = start;
      }
      std::shared_ptr<const CompiledKernels> c;
      std::string error;
      try {
        c = std::make_shared<const CompiledKernels>(jit_.compile(*chunk.file, names));
      } catch (const Error& e) {
        error = e.what();
      }
      {
        std::lock_guard lock(stats_mutex_);
        const auto end = std::chrono::steady_clock::now();
        const double took = std::chrono::duration<double>(end - start).count();
        last_compile_ = end;
        compile_sum_ += took;
        if (stats_) {
          ++stats_->programs;
          if (c && c->from_cache) ++stats_->from_cache;
          stats_->seconds += took;
        }
      }
      if (!c) throw CompileError(error);
      return c;
    };
    try {
      const auto c = one(chunk.names);
      std::fill(chunk.compiled.begin(), chunk.compiled.end(), c);
      return;
    } catch (const CompileError& e) {
      if (chunk.names.size() == 1) {
        chunk.errors[0] = e.what();
        return;
      }
    }
    for (std::size_t i = 0; i < chunk.names.size(); ++i) {
      try {
        chunk.compiled[i] = one({chunk.names[i]});
      } catch (const CompileError& e) {
        chunk.errors[i] = e.what();
      }
    }
  }

  void load(Prepared& p) {
    if (p.loaded) return;
    const std::vector<std::string> names = kernel_names(p.plan);
    std::vector<const CompiledKernels*> compiled;
    for (const auto& name : names) compiled.push_back(p.chunk->compiled[index_of(*p.chunk, name)].get());
    p.kernels = load_kernels(names, compiled, p.chunk->file->path.string() + " " + p.label);
    p.functions = bind(p.plan, p.kernels);
    p.loaded = true;
  }

  // A CUDA error while running a variant. One that leaves the context alive is a launch error,
  // and the sweep goes on here. A sticky one (the kernel faulted) or a kernel past its time limit
  // ends this process's part of the sweep: the context cannot be rebuilt in-process (after
  // cuDevicePrimaryCtxReset the driver still returns the sticky error, on the H100 and driver
  // tested), so ContextLost carries the variant's outcome to the caller, which goes on in a fresh
  // process (`gpuk tune` does).
  void failed(Outcome& o, const Error& e, const Prepared& p) {
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

  Device& device_;
  Bench& bench_;
  GpuMeasurerOptions options_;
  CompileStats* stats_;
  mutable std::mutex stats_mutex_;
  std::optional<std::chrono::steady_clock::time_point> first_compile_;  // under stats_mutex_
  std::chrono::steady_clock::time_point last_compile_;
  double compile_sum_ = 0;
  SweepTimes times_;  // the measuring thread's parts
  std::unique_ptr<DeviceAnswer> answer_;  // the kept verified answer, once there is one
  bool answer_tried_ = false;
  std::string no_device_check_;  // why the device comparison is off
  int on_device_ = 0, on_host_ = 0;  // variants verified each way
  int threads_;
  Jit jit_;
  std::vector<std::string> leading_;
  LaunchLimits limits_;
  std::map<Candidate, Prepared> prepared_;
  ThreadPool pool_;  // last: its threads go before what they use
};

}  // namespace

std::unique_ptr<Measurer> make_gpu_measurer(const RunContext& context, Device& device, Bench& bench,
                                            const GpuMeasurerOptions& options, CompileStats* stats) {
  return std::make_unique<GpuMeasurer>(context, device, bench, options, stats);
}

GpuMeasurerOptions gpu_measurer_options(const TuneSpec& t, const SweepOptions& sweep, bool flush) {
  GpuMeasurerOptions mo;
  mo.warmup = t.run.warmup;
  mo.repeats = t.run.repeats;
  mo.flush_l2 = flush;
  mo.threads = sweep.threads;
  mo.time_limit_s = sweep.time_limit_s;
  if (t.auto_repeats) mo.auto_repeats = AutoRepeats{t.auto_bound, t.auto_seconds};
  return mo;
}

TuneOptions tune_options(const TuneSpec& t, const SweepOptions& sweep) {
  TuneOptions options;
  options.strategy = t.strategy;
  options.objective = t.objective;
  options.evaluations = t.budget_evaluations;
  options.seconds = t.budget_seconds;
  options.seed = t.seed;
  options.recheck_top = t.recheck_top;
  options.recheck_repeats = t.recheck_repeats > 0 ? t.recheck_repeats : 2 * t.run.repeats;
  if (t.recheck_auto) options.recheck_auto = AutoRepeats{t.auto_bound, t.auto_seconds};
  options.prior = sweep.prior;
  options.progress = sweep.progress;
  return options;
}

TuneReport sweep_on_gpu(const TuneSpec& t, const Space& space, const RunContext& context, Device& device,
                        const SweepOptions& sweep) {
  const FamilyPlugin& plugin = context.plugins.get(t.run.family);
  const DeviceInfo& info = device.info();
  const bool flush = t.flush_l2 == FlushL2::on || (t.flush_l2 == FlushL2::automatic && input_fits_l2(t.run, info));
  // Each variant's scratch is checked when it is bound (the sweep records a variant that does not
  // fit); what every variant shares is checked here, before any data exists.
  refuse_if_run_does_not_fit(t.run, plugin, 0, flush, device);

  // Energy: required by the objective, or asked for (`energy: true`), when NVML is there.
  std::shared_ptr<EnergyMeter> meter;
  std::string no_energy;
  if (needs_energy(t.objective) || t.energy) {
    meter = open_energy_meter(info.pci_bus_id.empty() ? pci_bus_id(info.ordinal) : info.pci_bus_id, &no_energy);
    if (!meter && needs_energy(t.objective))
      throw Error(no_energy + "; the objective '" + objective_name(t.objective) + "' needs it (use objective: time)");
  }

  const auto data_start = std::chrono::steady_clock::now();
  Bench bench(t.run, plugin, device);
  const auto reference_start = std::chrono::steady_clock::now();
  bench.reference(1);  // once, before the sweep (each variant's check compares with it)
  const auto reference_end = std::chrono::steady_clock::now();
  CompileStats stats;
  GpuMeasurerOptions mo = gpu_measurer_options(t, sweep, flush);
  mo.energy = meter;
  auto measurer = make_gpu_measurer(context, device, bench, mo, &stats);

  TuneOptions options = tune_options(t, sweep);
  options.measure_energy = meter != nullptr;
  const auto journal =
      attach_journal(sweep.journal_dir, sweep.run_id, sweep.fresh, t, info, flush, space, options);
  const int damaged = journal ? journal->damaged() : 0;
  TuneResult result = tune(space, *measurer, options);
  const std::vector<std::string> notes = measurer->notes();
  measurer.reset();  // its compiles and its copy of the answer, before the baseline's memory
  std::optional<BaselineTiming> baseline;
  if (sweep.baseline && !result.aborted && !result.context_lost)
    baseline = bench.workload().library_baseline(t.run.warmup, t.run.repeats, bench.stream());
  TuneReport report = make_tune_report(t, options, std::move(result), info, bench.bytes_moved(), flush, stats);
  report.baseline = std::move(baseline);
  report.times.data = std::chrono::duration<double>(reference_start - data_start).count();
  report.times.reference = std::chrono::duration<double>(reference_end - reference_start).count();
  if (journal) {
    report.journal = journal->path().string();
    if (damaged > 0)
      report.notes.push_back(std::to_string(damaged) + " damaged line" + (damaged == 1 ? "" : "s") +
                             " of the journal (a writer killed mid-line) ignored; those points were measured again");
  }
  if (!meter && t.energy) report.notes.push_back("energy not measured: " + no_energy);
  for (const auto& note : notes) report.notes.push_back(note);
  return report;
}

}  // namespace gpuk
