#include "tune/outcome_json.hpp"

#include "gpuk/error.hpp"

namespace gpuk {

nlohmann::json outcome_to_json(const Outcome& o) {
  nlohmann::json launches = nlohmann::json::array();
  for (const auto& l : o.launches)
    launches.push_back({{"name_expression", l.name_expression}, {"grid", l.grid}, {"block", l.block},
                        {"shared_bytes", l.shared_bytes}, {"repeat", l.repeat}});
  return {{"status", static_cast<int>(o.status)}, {"why", o.why}, {"detail", o.detail}, {"samples", o.samples},
          {"registers", o.registers}, {"spill_bytes", o.spill_bytes}, {"device", o.device}, {"launches", launches}};
}

Outcome outcome_from_json(const nlohmann::json& j) {
  Outcome o;
  const int status = j.at("status").get<int>();
  if (status < 0 || status > static_cast<int>(Status::timed_out)) throw Error("bad status " + std::to_string(status));
  o.status = static_cast<Status>(status);
  o.why = j.at("why").get<std::string>();
  o.detail = j.at("detail").get<std::string>();
  o.samples = j.at("samples").get<std::vector<double>>();
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
  return o;
}

}  // namespace gpuk
