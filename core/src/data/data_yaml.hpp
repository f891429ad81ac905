// One array's data as a config or a declaration writes it (docs/declared.md, "Data"):
// {generator, range | low/high, mean, stddev, distinct, seed} or {npy: FILE}.
#pragma once
#include <string>

#include "data/data.hpp"
#include "util/yaml_util.hpp"

namespace gpuk {

// `node` read over `defaults` (the seed and range an array has when the mapping leaves them out).
// A relative npy path is relative to `src`'s file. Every error at its file:line:col names `what`
// ("the data of x"). The file's dtype and length are the caller's to check (inspect_file).
DataSpec read_data_spec(const yaml::Source& src, const YAML::Node& node, const std::string& what, DataSpec defaults);

}  // namespace gpuk
