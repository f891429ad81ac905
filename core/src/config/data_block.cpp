// A config's data: block: a generator and its settings, NaNs to inject, or a file (.npy or raw)
// that says its own size and dtype.
#include <cmath>

#include "config/config_parse.hpp"
#include "gpuk/error.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

const std::vector<std::string> kDataKeys = {"generator", "low",  "high", "mean", "stddev", "distinct",
                                            "nan",       "seed", "file", "dtype"};

}  // namespace

std::string HeldData::holds() const {
  return "the data file holds " + std::to_string(contents->size) + " " + std::string(dtype_name(contents->dtype)) +
         " elements";
}

HeldData inspect_data_file(const yaml::Source& src, const YAML::Node& root) {
  HeldData held;
  if (const YAML::Node data = root["data"]; data && data.IsMap() && data["file"]) {
    held.node = data["file"];
    refuse_generator_with_file(src, data);
    DataSpec d;
    std::filesystem::path file = src.string(held.node, "file");
    d.file = file.is_relative() ? src.path.parent_path() / file : file;
    if (data["dtype"]) d.raw_dtype = parse_dtype(src.string(data["dtype"], "data.dtype"));
    if (data["dtype"] && !d.raw_dtype) src.fail(data["dtype"], "unknown dtype '" + data["dtype"].Scalar() + "'");
    try {
      held.contents = inspect_file(d);
    } catch (const ConfigError& e) {
      src.fail(held.node, e.what());
    }
  }
  return held;
}

void refuse_generator_with_file(const yaml::Source& src, const YAML::Node& data) {
  if (!data.IsMap() || !data["file"]) return;
  for (const char* key : {"generator", "low", "high", "mean", "stddev", "distinct", "seed"})
    if (data[key])
      src.fail(data[key], std::string("'") + key + "' sets up generated data, but data.file gives the data; "
                                                   "remove one of them");
}

DataSpec parse_data(const yaml::Source& src, const YAML::Node& node, DType dtype, std::uint64_t size) {
  DataSpec d;
  src.check_keys(node, kDataKeys, "data");
  if (node["generator"]) {
    const std::string g = src.string(node["generator"], "generator");
    const auto gen = parse_generator(g);
    if (!gen)
      src.fail(node["generator"], "unknown generator '" + g + "'" +
                                      did_you_mean(g, {"uniform", "normal", "permutation", "sorted", "reversed",
                                                       "few_distinct"}) +
                                      "; generators: uniform, normal, permutation, sorted, reversed, few_distinct");
    d.generator = *gen;
  }
  refuse_generator_with_file(src, node);
  // NaN or infinity would make every element NaN (or the range empty): generated data that
  // verifies nothing.
  const auto finite = [&](const char* key) {
    const double v = src.number(node[key], key);
    if (!std::isfinite(v)) src.fail(node[key], std::string(key) + " must be a finite number, not '" + node[key].Scalar() + "'");
    return v;
  };
  if (node["low"]) d.low = finite("low");
  if (node["high"]) d.high = finite("high");
  if (d.low > d.high) src.fail(node["low"] ? node["low"] : node, "low must not be above high");
  if (node["mean"]) d.mean = finite("mean");
  if (node["stddev"]) {
    d.stddev = finite("stddev");
    if (d.stddev < 0) src.fail(node["stddev"], "stddev must not be negative");
  }
  if (node["distinct"]) {
    const auto v = src.integer(node["distinct"], "distinct");
    if (v < 1) src.fail(node["distinct"], "distinct must be at least 1");
    d.distinct = static_cast<std::uint64_t>(v);
  }
  if (node["seed"]) {
    const auto v = src.integer(node["seed"], "seed");
    if (v < 0) src.fail(node["seed"], "seed must not be negative");
    d.seed = static_cast<std::uint64_t>(v);
  }
  if (const auto nan = node["nan"]) {
    src.check_keys(nan, {"at", "count"}, "nan");
    if (!dtype_is_float(dtype))
      src.fail(nan, "NaN injection needs a floating-point dtype, not " + std::string(dtype_name(dtype)));
    if (nan["at"]) {
      if (!nan["at"].IsSequence()) src.fail(nan["at"], "nan.at must be a list of indices");
      for (const auto& item : nan["at"]) {
        const auto i = src.integer(item, "a NaN index");
        if (i < 0 || static_cast<std::uint64_t>(i) >= size)
          src.fail(item, "NaN index " + std::to_string(i) + " is outside the data (size " + std::to_string(size) + ")");
        d.nan.at.push_back(static_cast<std::uint64_t>(i));
      }
    }
    if (nan["count"]) {
      const auto c = src.integer(nan["count"], "nan.count");
      if (c < 0 || static_cast<std::uint64_t>(c) > size)
        src.fail(nan["count"], "nan.count must be between 0 and the size (" + std::to_string(size) + ")");
      d.nan.count = static_cast<std::uint64_t>(c);
    }
  }
  if (node["file"]) {
    std::filesystem::path file = src.string(node["file"], "file");
    if (file.is_relative()) file = src.path.parent_path() / file;
    d.file = file;
    if (node["dtype"]) {
      const std::string name = src.string(node["dtype"], "data.dtype");
      const auto t = parse_dtype(name);
      if (!t) src.fail(node["dtype"], "unknown dtype '" + name + "'");
      d.raw_dtype = *t;
    }
  } else if (node["dtype"]) {
    src.fail(node["dtype"], "data.dtype is for raw input files (data.file); the run's element type is the top-level dtype");
  }
  return d;
}

}  // namespace gpuk
