// The fields every JSON report (a run's, a sweep's) opens with: the config and the problem it
// describes. Report: RunReport or TuneReport (config, family, operation, options, dtype, size,
// data).
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "data/data.hpp"

namespace gpuk {

inline nlohmann::json data_json(const DataSummary& d) {
  nlohmann::json j = {{"generator", d.generator}, {"range", d.range}, {"seed", d.seed},
                      {"distinct_at_most", d.distinct_at_most ? nlohmann::json(*d.distinct_at_most) : nlohmann::json()},
                      {"nans", d.nans}, {"text", d.text()}};
  if (!d.file.empty()) j["file"] = d.file;
  return j;
}

template <class Report> nlohmann::json report_head(const Report& r) {
  nlohmann::json j;
  j["config"] = r.config;
  j["family"] = r.family;
  j["operation"] = r.operation;
  j["options"] = nlohmann::json::object();
  for (const auto& [k, v] : r.options) j["options"][k] = v;
  j["dtype"] = r.dtype;
  j["size"] = r.size;
  // A declared kernel's named sizes (`size` is their product).
  if constexpr (requires { r.sizes; })
    if (!r.sizes.empty()) {
      j["sizes"] = nlohmann::json::object();
      for (const auto& [name, value] : r.sizes) j["sizes"][name] = value;
    }
  // The fields of the (first) input's data; a declared kernel's "arrays" has every input array's,
  // each with its name, and "text" names them all.
  j["data"] = data_json(r.data);
  if (!r.data.array.empty()) {
    DataSummary first = r.data;
    first.others.clear();
    std::vector<const DataSummary*> inputs = {&first};
    for (const DataSummary& other : r.data.others) inputs.push_back(&other);
    j["data"]["arrays"] = nlohmann::json::array();
    for (const DataSummary* d : inputs) {
      j["data"]["arrays"].push_back(data_json(*d));
      j["data"]["arrays"].back()["array"] = d->array;
    }
  }
  return j;
}

}  // namespace gpuk
