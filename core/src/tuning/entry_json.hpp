// A tuning database entry as JSON, field by field as the database writes and checks it
// (core-internal: the tuning matrix keeps each cell's winner in this form).
#pragma once
#include <nlohmann/json.hpp>

#include "tuning/tuning_db.hpp"

namespace gpuk {

nlohmann::json tuning_entry_to_json(const TuningEntry& entry);
// Throws ConfigError naming the field that is missing or wrong.
TuningEntry tuning_entry_from_json(const nlohmann::json& j);

}  // namespace gpuk
