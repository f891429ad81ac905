// The worker process of a pooled sweep (tune/workers/pool.hpp): builds its session on its GPU, says
// hello, and serves the parent's requests.
#include <chrono>
#include <cstdlib>

#include "jit/nvrtc_processes.hpp"
#include "tune/report/outcome_json.hpp"
#include "tune/workers/pool_wire.hpp"
#include "tune/sweep/stopwatch.hpp"
#include "util/timeline.hpp"

namespace gpuk::detail {

using nlohmann::json;

[[noreturn]] void worker_main(int in_fd, int out_fd, const Space& space, const WorkerFactory& factory, int ordinal) {
  int code = 0;
  try {
    timeline("worker: start");
    const std::unique_ptr<WorkerSession> session = factory(ordinal);
    timeline("worker: session ready");
    Measurer& m = session->measurer();
    const LaunchLimits l = m.limits();
    send(out_fd, {{"hello", true},
                  {"device", device_json(session->info())},
                  {"limits", {l.n, l.sm_count, l.elem_bytes, l.max_threads_per_block, l.max_shared_bytes}},
                  {"sizes", l.sizes},
                  {"leading_args", m.leading_args()},
                  {"bytes_moved", session->bytes_moved()},
                  {"flushed", session->flushed()},
                  {"ready_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count()}});
    LineReader in(in_fd);
    double idle = 0;  // waiting for the parent's next request
    for (;;) {
      std::optional<std::string> line;
      {
        const Stopwatch waiting(idle);
        line = in.next();
      }
      if (!line) break;
      const json request = json::parse(*line);
      const std::string op = request.at("op");
      if (op == "quit") break;
      if (op == "stats") {
        const CompileStats s = session->compile_stats();
        SweepTimes t = session->times();
        t.idle += idle;
        send(out_fd, {{"stats", {s.programs, s.from_cache, s.variants, s.seconds}},
                      {"times", times_to_json(t)},
                      {"notes", m.notes()}});
        continue;
      }
      if (op == "prepare") {
        std::vector<Candidate> points;
        for (const auto& i : request.at("points")) points.push_back(space.at(i.get<std::uint64_t>()));
        m.prepare(space, points);
        continue;
      }
      if (op == "adopt") {
        CompiledProgram program;
        for (const auto& i : request.at("points")) program.points.push_back(space.at(i.get<std::uint64_t>()));
        program.names = request.at("names").get<std::vector<std::string>>();
        program.errors = request.at("errors").get<std::vector<std::string>>();
        m.adopt(space, program);
        continue;
      }
      const Candidate c = space.at(request.at("point").get<std::uint64_t>());
      try {
        if (op == "measure") send(out_fd, {{"outcome", outcome_to_json(m.measure(space, c))}});
        else send(out_fd, {{"samples", m.time(space, c, request.at("repeats").get<int>())}});
      } catch (const ContextLost& e) {
        send(out_fd, {{"outcome", outcome_to_json(e.outcome)}, {"lost", e.what()}});
        code = kLostExit;
        break;
      } catch (const SweepAborted& e) {
        send(out_fd, {{"aborted", e.what()}});
        code = 1;
        break;
      }
    }
  } catch (const std::exception& e) {
    try {
      send(out_fd, {{"error", e.what()}});
    } catch (const std::exception&) {
    }
    code = 1;
  }
  end_nvrtc_processes();  // _Exit runs no destructor: the compile processes' folders go now
  std::_Exit(code);
}

}  // namespace gpuk::detail
