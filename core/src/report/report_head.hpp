// The fields every JSON report (a run's, a sweep's) opens with: the config and the problem it
// describes. Report: RunReport or TuneReport (config, family, operation, options, dtype, size,
// data).
#pragma once
#include <nlohmann/json.hpp>

namespace gpuk {

template <class Report> nlohmann::json report_head(const Report& r) {
  nlohmann::json j;
  j["config"] = r.config;
  j["family"] = r.family;
  j["operation"] = r.operation;
  j["options"] = nlohmann::json::object();
  for (const auto& [k, v] : r.options) j["options"][k] = v;
  j["dtype"] = r.dtype;
  j["size"] = r.size;
  j["data"] = {{"generator", r.data.generator}, {"range", r.data.range}, {"seed", r.data.seed},
               {"distinct_at_most", r.data.distinct_at_most ? nlohmann::json(*r.data.distinct_at_most) : nlohmann::json()},
               {"nans", r.data.nans}, {"text", r.data.text()}};
  if (!r.data.file.empty()) j["data"]["file"] = r.data.file;
  return j;
}

}  // namespace gpuk
