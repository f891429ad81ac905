#include "tune/report/outcome_json.hpp"

#include "gpuk/error.hpp"

namespace gpuk {

namespace {

Status status_of(const std::string& name) {
  for (Status s : {Status::ok, Status::invalid, Status::pruned, Status::compile_error, Status::launch_error,
                   Status::faulted, Status::timed_out})
    if (status_name(s) == name) return s;
  throw Error("unknown status '" + name + "'");
}

}  // namespace

nlohmann::json outcome_to_json(const Outcome& o) {
  nlohmann::json launches = nlohmann::json::array();
  for (const auto& l : o.launches)
    launches.push_back({{"name_expression", l.name_expression}, {"grid", l.grid}, {"block", l.block},
                        {"shared_bytes", l.shared_bytes}, {"repeat", l.repeat}});
  nlohmann::json energy = nlohmann::json::array();
  for (const auto& s : o.energy)
    energy.push_back({{"joules", s.joules}, {"watts", s.watts}, {"sm_mhz", s.sm_mhz}, {"calls", s.calls},
                      {"window_s", s.window_s}});
  nlohmann::json j = {{"status", std::string(status_name(o.status))},
                      {"why", o.why},
                      {"detail", o.detail},
                      {"samples", o.samples},
                      {"auto_stop", o.auto_stop},
                      {"registers", o.registers},
                      {"spill_bytes", o.spill_bytes},
                      {"launches", launches},
                      {"energy", energy}};
  if (o.device >= 0) j["device"] = o.device;
  return j;
}

Outcome outcome_from_json(const nlohmann::json& j) {
  Outcome o;
  o.status = status_of(j.at("status").get<std::string>());
  o.why = j.at("why").get<std::string>();
  o.detail = j.at("detail").get<std::string>();
  o.samples = j.at("samples").get<std::vector<double>>();
  o.auto_stop = j.value("auto_stop", std::string());
  o.registers = j.at("registers").get<int>();
  o.spill_bytes = j.at("spill_bytes").get<int>();
  o.device = j.value("device", -1);
  for (const auto& l : j.at("launches")) {
    ResolvedLaunch r;
    r.name_expression = l.at("name_expression").get<std::string>();
    r.grid = l.at("grid").get<decltype(r.grid)>();
    r.block = l.at("block").get<decltype(r.block)>();
    r.shared_bytes = l.at("shared_bytes").get<decltype(r.shared_bytes)>();
    r.repeat = l.value("repeat", 1u);
    o.launches.push_back(std::move(r));
  }
  for (const auto& s : j.value("energy", nlohmann::json::array())) {
    EnergySample x;
    x.joules = s.at("joules").get<double>();
    x.watts = s.at("watts").get<double>();
    x.sm_mhz = s.at("sm_mhz").get<double>();
    x.calls = s.at("calls").get<std::int64_t>();
    x.window_s = s.at("window_s").get<double>();
    o.energy.push_back(x);
  }
  return o;
}

}  // namespace gpuk
