// The fields every JSON report (a run's, a sweep's) opens with: the config and the problem it
// describes. Report: RunReport or TuneReport (config, family, operation, options, dtype, size).
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
  return j;
}

}  // namespace gpuk
