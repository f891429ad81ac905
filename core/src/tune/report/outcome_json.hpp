// One variant's outcome as JSON and back: the state handed to a fresh process of a sweep and the
// answers of a sweep's worker processes use the same form.
#pragma once
#include <nlohmann/json.hpp>

#include "tune/sweep/sweep.hpp"

namespace gpuk {

nlohmann::json outcome_to_json(const Outcome& o);
// Throws nlohmann::json::exception or Error on a malformed object.
Outcome outcome_from_json(const nlohmann::json& j);

}  // namespace gpuk
