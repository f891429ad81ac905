// The tuning database's entries read straight from the JSON text, without a JSON
// document: the fast path of TuningDb::read for a database as gpuk writes it (300 k entries: the
// document alone took a second). It accepts only what the checked reader (tune_db.cpp's
// from_json) accepts without a word; anything else (a hand edit, a wrong type, a value out of
// range, a newer version, text that is not JSON) returns nullopt, and the checked reader reads
// the file and says what is wrong.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tuning/tuning_db.hpp"

namespace gpuk {

std::optional<std::vector<TuningEntry>> read_db_entries_fast(const std::string& text, const char* format, int version);

}  // namespace gpuk
