// One array's data read from YAML (data/data_yaml.hpp).
#include "data/data_yaml.hpp"

#include <cmath>

#include "util/text.hpp"

namespace gpuk {

DataSpec read_data_spec(const yaml::Source& src, const YAML::Node& g, const std::string& what, DataSpec ds) {
  if (!g.IsMap()) src.fail(g, what + " must be a mapping {generator: ..., range: [lo, hi], seed: ...} or {npy: FILE}");
  src.check_keys(g, {"generator", "range", "low", "high", "mean", "stddev", "distinct", "seed", "npy"}, what);
  if (g["npy"]) {
    for (const auto& other : g)
      if (other.first.Scalar() != "npy")
        src.fail(other.first, "'" + other.first.Scalar() + "' sets up generated data, but npy gives the data; remove one");
    std::filesystem::path file = src.string(g["npy"], "npy");
    ds.file = file.is_relative() ? src.path.parent_path() / file : file;
    return ds;
  }
  ds.file.reset();  // generated, over defaults that were a file (a constant's declared .npy)
  if (g["generator"]) {
    const std::string name = src.string(g["generator"], "generator");
    const auto gen = parse_generator(name);
    if (!gen)
      src.fail(g["generator"], "unknown generator '" + name + "'" +
                                   did_you_mean(name, {"uniform", "normal", "permutation", "sorted", "reversed", "few_distinct"}) +
                                   "; generators: uniform, normal, permutation, sorted, reversed, few_distinct");
    ds.generator = *gen;
  }
  const auto finite = [&](const YAML::Node& v, const char* key) {
    const double x = src.number(v, key);
    if (!std::isfinite(x)) src.fail(v, std::string(key) + " must be a finite number");
    return x;
  };
  if (g["range"]) {
    if (!g["range"].IsSequence() || g["range"].size() != 2) src.fail(g["range"], "range must be [low, high]");
    ds.low = finite(g["range"][0], "range");
    ds.high = finite(g["range"][1], "range");
  }
  if (g["low"]) ds.low = finite(g["low"], "low");
  if (g["high"]) ds.high = finite(g["high"], "high");
  if (ds.low > ds.high) src.fail(g["range"] ? g["range"] : g, "low must not be above high");
  if (g["mean"]) ds.mean = finite(g["mean"], "mean");
  if (g["stddev"]) ds.stddev = finite(g["stddev"], "stddev");
  if (ds.stddev < 0) src.fail(g["stddev"], "stddev must not be negative");
  if (g["distinct"]) {
    const auto v = src.integer(g["distinct"], "distinct");
    if (v < 1) src.fail(g["distinct"], "distinct must be at least 1");
    ds.distinct = static_cast<std::uint64_t>(v);
  }
  if (g["seed"]) {
    const auto v = src.integer(g["seed"], "seed");
    if (v < 0) src.fail(g["seed"], "seed must not be negative");
    ds.seed = static_cast<std::uint64_t>(v);
  }
  return ds;
}

}  // namespace gpuk
