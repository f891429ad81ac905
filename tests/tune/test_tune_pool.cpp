// A sweep over several GPUs (tune/workers/pool.hpp) without a GPU: the workers are real processes
// whose measurer is the fake of tune_helpers.hpp, so the scheduling, the restarts after a lost
// context or a dead worker, and the grouping by model run as they do on a multi-GPU host.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <mutex>
#include <set>
#include <thread>

#include "gpuk/error.hpp"
#include "tune/workers/pool.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

// A worker on a GPU called `name`; `fault` decides, by parameters, which points take its CUDA
// context down (ContextLost) or kill the process.
class FakeSession : public WorkerSession {
 public:
  enum class Fault { none, context, die };
  FakeSession(int ordinal, std::string name, std::function<Fault(const std::map<std::string, std::int64_t>&)> fault)
      : ordinal_(ordinal), name_(std::move(name)), measurer_(std::move(fault)) {}
  DeviceInfo info() const override {
    DeviceInfo d;
    d.ordinal = ordinal_;
    d.name = name_;
    d.cc_major = 9;
    d.sm_count = 132;
    return d;
  }
  std::uint64_t bytes_moved() const override { return 4 << 20; }
  bool flushed() const override { return false; }
  CompileStats compile_stats() const override { return {1, 0, 1, 0.5}; }
  Measurer& measurer() override { return measurer_; }
  SweepTimes times() const override {
    SweepTimes t;
    t.start = 99;  // the parent's count replaces it
    t.data = 0.25 * (ordinal_ + 1);
    t.reference = 1;
    t.measure = 0.5;
    return t;
  }

 private:
  class M : public test::FakeMeasurer {
   public:
    explicit M(std::function<Fault(const std::map<std::string, std::int64_t>&)> f) : fault_(std::move(f)) {}
    Outcome measure(const Space& space, const Candidate& c) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // both workers get a share
      const Fault f = fault_ ? fault_(space.params(c)) : Fault::none;
      if (f == Fault::die) std::raise(SIGKILL);
      if (f == Fault::context) {
        Outcome o;
        o.status = Status::faulted;
        o.why = "CUDA_ERROR_ILLEGAL_ADDRESS";
        o.detail = space.label(c) + " faulted";
        throw ContextLost("a variant took the CUDA context down", o);
      }
      return test::FakeMeasurer::measure(space, c);
    }

    // A program the parent's compile wave compiled: taken, not compiled (not counted as prepared).
    void adopt(const Space&, const CompiledProgram& program) override {
      adopted += program.points.size();
      ++programs;
    }

    // How many points it was asked to prepare (compile), in all; and taken from the wave.
    std::vector<std::string> notes() const override {
      std::size_t n = 0;
      for (auto b : batches) n += b;
      std::vector<std::string> out = {"prepared " + std::to_string(n)};
      if (programs > 0) out.push_back("adopted " + std::to_string(adopted) + " in " + std::to_string(programs));
      return out;
    }
    std::size_t adopted = 0, programs = 0;

   private:
    std::function<Fault(const std::map<std::string, std::int64_t>&)> fault_;
  };
  int ordinal_;
  std::string name_;
  M measurer_;
};

WorkerFactory factory(std::function<FakeSession::Fault(const std::map<std::string, std::int64_t>&)> fault = {},
                      std::function<std::string(int)> name = {}) {
  return [=](int ordinal) -> std::unique_ptr<WorkerSession> {
    if (ordinal == 99) throw ConfigError("GPU 99 does not exist");
    return std::make_unique<FakeSession>(ordinal, name ? name(ordinal) : "Fake GPU", fault);
  };
}

// A worker whose session takes 600 ms to end: its CUDA context torn down.
class SlowEnd : public FakeSession {
 public:
  using FakeSession::FakeSession;
  ~SlowEnd() override { std::this_thread::sleep_for(std::chrono::milliseconds(600)); }
};

std::unique_ptr<WorkerSession> slow_end(int ordinal) { return std::make_unique<SlowEnd>(ordinal, "Fake GPU", nullptr); }

// The parent's compiles of a compile wave, counted per name expression and per program.
struct CompileCount {
  std::mutex mutex;
  std::map<std::string, int> names;
  int programs = 0;
};

WaveOptions counting_wave(const std::shared_ptr<CompileCount>& count) {
  WaveOptions wave;
  wave.threads = 3;
  wave.compiler = [count](const WorkerInfo&) -> BulkCompiler::CompileProgram {
    return [count](const KernelFile&, const std::vector<std::string>& names) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the workers wait for some
      const std::lock_guard lock(count->mutex);
      ++count->programs;
      for (const auto& n : names) ++count->names[n];
      CompiledKernels k;
      k.name_expressions = names;
      k.lowered_names = names;
      return k;
    };
  };
  return wave;
}

// The workers' notes: how many points each prepared (compiled itself) and took from the wave.
std::map<std::string, std::string> notes_of(WorkerPool& pool) {
  std::map<std::string, std::string> out;
  for (const auto& n : pool.notes()) {
    const auto colon = n.find(": ");
    const std::string note = n.substr(colon + 2);
    out[n.substr(0, colon) + " " + note.substr(0, note.find(' '))] = note.substr(note.find(' ') + 1);
  }
  return out;
}

TuneOptions options() {
  TuneOptions o;
  o.recheck_top = 3;
  o.recheck_repeats = 6;
  return o;
}

// Anneal, a budget of 12, through a pool's measurer: one point at a time, the same bookkeeping.
TuneResult anneal_through(const Space& space, Measurer& m) {
  TuneOptions o = options();
  o.strategy = TuneStrategy::anneal;
  o.evaluations = 12;
  TuneResult r = tune(space, m, o);
  CHECK(r.count(Status::ok) >= 1);
  CHECK(r.count(Status::ok) <= 12);
  REQUIRE(r.winner());
  return r;
}

}  // namespace

TEST_CASE("--devices: all, a list, and what is wrong with a list") {
  CHECK(parse_device_list("all", 3) == std::vector<int>{0, 1, 2});
  CHECK(parse_device_list("1,0", 2) == std::vector<int>{1, 0});
  CHECK_THROWS_WITH_AS(parse_device_list("0,2", 2),
                       "--devices 0,2: GPU 2 does not exist; there are 2 GPUs (ordinals 0 to 1)", ConfigError);
  CHECK(parse_device_list("0,0", 2) == std::vector<int>{0, 0});  // two workers on one GPU
  CHECK_THROWS_AS(parse_device_list("0,x", 2), ConfigError);
  CHECK_THROWS_AS(parse_device_list("", 2), ConfigError);
  CHECK_THROWS_AS(parse_device_list("-1", 2), ConfigError);
  CHECK_THROWS_WITH_AS(parse_device_list("all", 0), "--devices all: there is no GPU", ConfigError);
}

TEST_CASE("two workers share a sweep: every point measured once, by one of them, and the same winner as one") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer one;
  const TuneResult alone = tune(space, one, options());

  WorkerPool pool(space, {0, 1}, factory());
  REQUIRE(pool.group_by_model() == std::vector<std::vector<std::size_t>>{{0, 1}});
  const auto m = pool.measurer({0, 1});
  CHECK(m->limits().sm_count == 132);
  const TuneResult pooled = tune(space, *m, options());

  REQUIRE(pooled.winner());
  CHECK(pooled.winner()->label == alone.winner()->label);
  CHECK(pooled.evaluations.size() == alone.evaluations.size());
  std::set<std::string> labels;
  std::set<int> devices;
  for (const auto& e : pooled.evaluations) {
    CHECK(labels.insert(e.label).second);
    if (e.outcome.status == Status::pruned) continue;
    CHECK(e.outcome.status == Status::ok);
    devices.insert(e.outcome.device);
  }
  CHECK(devices == std::set<int>{0, 1});
  CHECK(pool.workers()[0].measured + pool.workers()[1].measured == alone.evaluations.size() - alone.count(Status::pruned));
  CHECK(pool.progress_text().find("gpu0 ") == 0);
  CHECK(pool.compile_stats().programs == 2);
}

TEST_CASE("a variant that takes one worker's context down is recorded as faulted; a fresh worker goes on") {
  const Space space = test::metadata_space({test::tune_kernel()});
  using F = FakeSession::Fault;
  WorkerPool pool(space, {0, 1}, factory([](const auto& p) {
                    if (p.at("BLOCK") == 256 && p.at("UNROLL") == 4) return F::context;  // the fastest point
                    if (p.at("BLOCK") == 64 && p.at("UNROLL") == 8) return F::die;
                    return F::none;
                  }));
  const auto m = pool.measurer({0, 1});
  const TuneResult r = tune(space, *m, options());
  CHECK(r.stopped.empty());
  CHECK_FALSE(r.context_lost);
  CHECK(r.count(Status::faulted) == 2);
  for (const auto& e : r.evaluations) {
    if (e.label == "k BLOCK=64 UNROLL=8") CHECK(e.outcome.why == "the worker process died of signal 9");
    if (e.label == "k BLOCK=256 UNROLL=4") CHECK(e.outcome.why == "CUDA_ERROR_ILLEGAL_ADDRESS");
  }
  CHECK(r.count(Status::ok) == r.evaluations.size() - r.count(Status::pruned) - 2);
  REQUIRE(r.winner());
  CHECK(r.winner()->label != "k BLOCK=256 UNROLL=4");
  CHECK(pool.workers()[0].restarts + pool.workers()[1].restarts == 2);
}

TEST_CASE("GPUs of different models are ranked apart") {
  const Space space = test::metadata_space({test::tune_kernel()});
  WorkerPool pool(space, {0, 1, 2}, factory({}, [](int o) { return o == 1 ? "GPU B" : "GPU A"; }));
  CHECK(pool.group_by_model() == std::vector<std::vector<std::size_t>>{{0, 2}, {1}});
  for (const auto& group : pool.group_by_model()) {
    const auto m = pool.measurer(group);
    const TuneResult r = tune(space, *m, options());
    std::set<int> devices;
    for (const auto& e : r.evaluations)
      if (e.outcome.status == Status::ok) devices.insert(e.outcome.device);
    for (int d : devices) CHECK((pool.workers()[group.front()].device.name == "GPU B") == (d == 1));
  }
}

TEST_CASE("a worker that cannot start stops the pool with its own message") {
  const Space space = test::metadata_space({test::tune_kernel()});
  CHECK_THROWS_WITH_AS(WorkerPool(space, {0, 99}, factory()),
                       "the worker on GPU 99 could not start: GPU 99 does not exist", Error);
}

TEST_CASE("anneal through a pool: one point at a time, the same bookkeeping") {
  const Space space = test::metadata_space({test::tune_kernel()});
  WorkerPool pool(space, {0, 1}, factory());
  const auto m = pool.measurer({0, 1});
  (void)anneal_through(space, *m);
}

TEST_CASE("each worker's time breakdown comes back to the parent, with its start as the parent saw it") {
  const Space space = test::metadata_space({test::tune_kernel()});
  WorkerPool pool(space, {0, 1}, factory());
  const auto m = pool.measurer({0, 1});
  (void)tune(space, *m, options());
  const auto times = pool.worker_times();
  REQUIRE(times.size() == 2);
  for (std::size_t w = 0; w < 2; ++w) {
    CHECK(times[w].data == 0.25 * static_cast<double>(w + 1));
    CHECK(times[w].reference == 1);
    CHECK(times[w].measure == 0.5);
    // The parent's view of its start (fork to ready), less the data and reference of its own lines.
    CHECK(times[w].start < 99);
    CHECK(times[w].start == doctest::Approx(std::max(0.0, pool.workers()[w].start_seconds - times[w].data - 1)));
  }
  // The measurers' notes come back too, named by GPU.
  const auto notes = pool.notes();
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].rfind("GPU 0: prepared ", 0) == 0);
  CHECK(notes[1].rfind("GPU 1: prepared ", 0) == 0);
}

TEST_CASE("the workers start side by side: a pool of three slow starters takes about one start") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const auto slow = [](int ordinal) -> std::unique_ptr<WorkerSession> {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // a context, the data, the reference
    return std::make_unique<FakeSession>(ordinal, "Fake GPU", nullptr);
  };
  const auto start = std::chrono::steady_clock::now();
  WorkerPool pool(space, {0, 1, 2}, slow);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(took >= 0.4);
  CHECK(took < 1.0);  // one after another: at least 1.2 s
  for (const auto& w : pool.workers()) CHECK(w.start_seconds >= 0.4);
}

TEST_CASE("the recheck's worker is told to compile the leaders measured by the others, in one batch, before timing") {
  const Space space = test::metadata_space({test::tune_kernel()});
  WorkerPool pool(space, {0, 1}, factory());
  const auto m = pool.measurer({0, 1});
  const TuneResult r = tune(space, *m, options());
  std::size_t by_others = 0;
  for (const auto& e : r.evaluations)
    if (e.rechecked && e.outcome.device != 0) ++by_others;
  const auto prepared = [&](std::size_t w) {
    const std::string note = pool.notes()[w];
    return static_cast<std::size_t>(std::stoul(note.substr(note.rfind(' ') + 1)));
  };
  // GPU 0 prepared its share of the sweep (what it was dealt) and, once more, every leader GPU 1
  // measured. What it measured is not a bound on its share: an idle worker takes the back of the
  // other's queue (WorkerPool::Impl::feed), points the other was told to prepare, more often on a
  // loaded machine. Together the two prepared every point that ran, and the leaders again.
  CHECK(prepared(0) >= by_others);
  CHECK(prepared(0) + prepared(1) >= r.evaluations.size() - r.count(Status::pruned) + 3);
}

TEST_CASE("one compile wave: the parent compiles each variant once, the workers take the programs and compile none") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer one;
  const TuneResult alone = tune(space, one, options());

  const auto count = std::make_shared<CompileCount>();
  WorkerPool pool(space, {0, 1}, factory(), counting_wave(count));
  const auto m = pool.measurer({0, 1});
  const TuneResult pooled = tune(space, *m, options());
  REQUIRE(pooled.winner());
  CHECK(pooled.winner()->label == alone.winner()->label);
  CHECK(pooled.count(Status::ok) == alone.count(Status::ok));
  std::set<int> devices;
  for (const auto& e : pooled.evaluations)
    if (e.outcome.status == Status::ok) devices.insert(e.outcome.device);
  CHECK(devices == std::set<int>{0, 1});

  // Every name expression compiled exactly once, all of them in the parent.
  const std::size_t runnable = pooled.evaluations.size() - pooled.count(Status::pruned);
  CHECK(count->names.size() == runnable);  // one kernel per variant in this space
  for (const auto& entry : count->names) CHECK_MESSAGE(entry.second == 1, entry.first);
  const CompileStats stats = pool.compile_stats();
  // The wave's and the workers' own (each fake worker says it compiled one program of one variant).
  CHECK(stats.programs == count->programs + 2);
  CHECK(stats.variants == static_cast<int>(runnable) + 2);
  CHECK(count->programs == static_cast<int>(runnable));  // one program per variant, under 8 per thread

  // The workers prepared (compiled) nothing; each took every program of the wave.
  const auto notes = notes_of(pool);
  CHECK(notes.at("GPU 0 prepared") == "0");
  CHECK(notes.at("GPU 1 prepared") == "0");
  const std::string all = std::to_string(runnable) + " in " + std::to_string(count->programs);
  CHECK(notes.at("GPU 0 adopted") == all);
  CHECK(notes.at("GPU 1 adopted") == all);

  // The parent's breakdown: the wave's compiles, and the time measure() spent.
  CHECK(pooled.times.compile_sum > 0);
  CHECK(pooled.times.compile_wall > 0);
  CHECK(pooled.times.measure + pooled.times.compile_wait > 0);
}

TEST_CASE("with a compile wave a faulting variant still ends only its worker's process; the fresh one takes programs") {
  const Space space = test::metadata_space({test::tune_kernel()});
  using F = FakeSession::Fault;
  const auto count = std::make_shared<CompileCount>();
  WorkerPool pool(space, {0, 1},
                  factory([](const auto& p) {
                    if (p.at("BLOCK") == 256 && p.at("UNROLL") == 4) return F::context;
                    if (p.at("BLOCK") == 64 && p.at("UNROLL") == 8) return F::die;
                    return F::none;
                  }),
                  counting_wave(count));
  const auto m = pool.measurer({0, 1});
  const TuneResult r = tune(space, *m, options());
  CHECK(r.stopped.empty());
  CHECK(r.count(Status::faulted) == 2);
  CHECK(r.count(Status::ok) == r.evaluations.size() - r.count(Status::pruned) - 2);
  REQUIRE(r.winner());
  CHECK(r.winner()->label != "k BLOCK=256 UNROLL=4");
  CHECK(pool.workers()[0].restarts + pool.workers()[1].restarts == 2);
  for (const auto& entry : count->names) CHECK_MESSAGE(entry.second == 1, entry.first);
  const auto notes = notes_of(pool);
  CHECK(notes.at("GPU 0 prepared") == "0");
  CHECK(notes.at("GPU 1 prepared") == "0");
}

TEST_CASE("with a compile wave, anneal (one point at a time) and a sweep run again from its results compile nothing twice") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const auto count = std::make_shared<CompileCount>();
  WorkerPool pool(space, {0, 1}, factory(), counting_wave(count));
  const auto m = pool.measurer({0, 1});
  const TuneResult r = anneal_through(space, *m);
  // The same measurer again, its points known: an exhaustive sweep measures the rest.
  TuneOptions again = options();
  again.prior = r.evaluations;
  const TuneResult all = tune(space, *m, again);
  CHECK(all.count(Status::ok) == all.evaluations.size() - all.count(Status::pruned));
  for (const auto& entry : count->names) CHECK_MESSAGE(entry.second == 1, entry.first);
  CHECK(notes_of(pool).at("GPU 0 prepared") == "0");
}

namespace {

// What a FakeSession on GPU `ordinal` will report, known to the parent before it starts.
std::vector<WorkerInfo> planned_fakes(const std::vector<int>& ordinals, int sm_count = 132) {
  std::vector<WorkerInfo> out;
  for (int ordinal : ordinals) {
    WorkerInfo w;
    w.ordinal = ordinal;
    w.device.ordinal = ordinal;
    w.device.name = "Fake GPU";
    w.device.cc_major = 9;
    w.device.sm_count = 132;
    w.limits = {1 << 20, sm_count, 4, 1024, 48 * 1024};
    w.leading_args = {"gpuk::Reduce<float, gpuk::ReduceOp::Max, false>"};
    out.push_back(w);
  }
  return out;
}

}  // namespace

TEST_CASE("with the GPUs planned for, the pool does not wait for the workers' start; their start is their own clock's") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer one;
  const TuneResult alone = tune(space, one, options());
  const auto slow = [](int ordinal) -> std::unique_ptr<WorkerSession> {
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // a context, the data, the reference
    return std::make_unique<FakeSession>(ordinal, "Fake GPU", nullptr);
  };
  const auto count = std::make_shared<CompileCount>();
  const auto start = std::chrono::steady_clock::now();
  WorkerPool pool(space, {0, 1}, slow, counting_wave(count), planned_fakes({0, 1}));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Greeted at the first request, not here: well under the workers' second of start even where
  // forking is slow (a sanitizer build's large mappings, a loaded machine).
  CHECK(took < 0.75);
  CHECK(pool.group_by_model() == std::vector<std::vector<std::size_t>>{{0, 1}});
  const auto m = pool.measurer({0, 1});
  CHECK(m->limits().sm_count == 132);
  std::this_thread::sleep_for(std::chrono::milliseconds(1750));  // the parent busy elsewhere
  const TuneResult pooled = tune(space, *m, options());
  REQUIRE(pooled.winner());
  CHECK(pooled.winner()->label == alone.winner()->label);
  CHECK(pooled.count(Status::ok) == alone.count(Status::ok));
  for (std::size_t w = 0; w < 2; ++w) {
    // Fork to hello by the worker's clock: not the later moment the parent greeted it.
    CHECK(pool.workers()[w].start_seconds >= 1.0);
    CHECK(pool.workers()[w].start_seconds < 1.75);
  }
}

TEST_CASE("with the GPUs planned for, a worker that cannot start or sees other limits stops the sweep, saying so") {
  const Space space = test::metadata_space({test::tune_kernel()});
  {
    WorkerPool pool(space, {0, 99}, factory(), {}, planned_fakes({0, 99}));
    const auto m = pool.measurer({0, 1});
    CHECK_THROWS_WITH_AS(tune(space, *m, options()), "the worker on GPU 99 could not start: GPU 99 does not exist",
                         Error);
  }
  {
    WorkerPool pool(space, {0, 1}, factory(), {}, planned_fakes({0, 1}, 66));
    const auto m = pool.measurer({0, 1});
    CHECK_THROWS_WITH_AS(tune(space, *m, options()),
                         "internal: the worker on GPU 0 (Fake GPU) sees other launch limits than the parent planned for",
                         Error);
  }
}

TEST_CASE("a pool's end does not wait for its workers to end (their CUDA teardown); the next pool does, once started") {
  const Space space = test::metadata_space({test::tune_kernel()});
  auto start = std::chrono::steady_clock::now();
  {
    WorkerPool pool(space, {0, 1}, slow_end);
    for (const auto& w : pool.workers()) CHECK(w.ordinal >= 0);
    CHECK(tune(space, *pool.measurer({0, 1}), options()).winner());
    start = std::chrono::steady_clock::now();
  }
  const double ended = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(ended < 0.3);
  start = std::chrono::steady_clock::now();
  WorkerPool next(space, {0}, factory());
  const double started = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(started >= 0.4);  // the first pool's workers ended before this one's greeted
  wait_for_exiting_workers();  // none left: at once
  CHECK(tune(space, *next.measurer({0}), options()).winner());
}

TEST_CASE("a fork of a process whose last pool's workers are still ending starts a pool of its own") {
  const Space space = test::metadata_space({test::tune_kernel()});
  { WorkerPool pool(space, {0}, slow_end); }
  // The reaper thread of this process waits for that worker now; a fork has no such thread.
  const pid_t child = ::fork();
  if (child == 0) {
    int code = 1;
    try {
      WorkerPool pool(space, {0}, factory());
      code = tune(space, *pool.measurer({0}), options()).winner() ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    std::_Exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  wait_for_exiting_workers();  // the parent's reaper was still waiting when the child started
}
