// The worker process of a pooled sweep (tune/pool.hpp): builds its session on its GPU, says
// hello, and serves the parent's requests.
#include <cstdlib>

#include "tune/outcome_json.hpp"
#include "tune/pool_wire.hpp"

namespace gpuk::detail {

using nlohmann::json;

[[noreturn]] void worker_main(int in_fd, int out_fd, const Space& space, const WorkerFactory& factory, int ordinal) {
  int code = 0;
  try {
    const std::unique_ptr<WorkerSession> session = factory(ordinal);
    Measurer& m = session->measurer();
    const LaunchLimits l = m.limits();
    send(out_fd, {{"hello", true},
                  {"device", device_json(session->info())},
                  {"limits", {l.n, l.sm_count, l.elem_bytes, l.max_threads_per_block, l.max_shared_bytes}},
                  {"leading_args", m.leading_args()},
                  {"bytes_moved", session->bytes_moved()},
                  {"flushed", session->flushed()}});
    LineReader in(in_fd);
    while (const auto line = in.next()) {
      const json request = json::parse(*line);
      const std::string op = request.at("op");
      if (op == "quit") break;
      if (op == "stats") {
        const CompileStats s = session->compile_stats();
        const SweepTimes t = session->times();
        send(out_fd, {{"stats", {s.programs, s.from_cache, s.variants, s.seconds}},
                      {"times", {t.start, t.data, t.reference, t.compile_wall, t.compile_sum, t.compile_wait,
                                 t.measure, t.verify, t.recheck, t.save, t.total}},
                      {"notes", m.notes()}});
        continue;
      }
      if (op == "prepare") {
        std::vector<Candidate> points;
        for (const auto& i : request.at("points")) points.push_back(space.at(i.get<std::uint64_t>()));
        m.prepare(space, points);
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
  std::_Exit(code);
}

}  // namespace gpuk::detail
