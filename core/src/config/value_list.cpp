// A tune space's value lists, in the grammar of a kernel file's parameters: a value, a list, or
// values / range / pow2.
#include <algorithm>

#include "config/config_parse.hpp"

namespace gpuk {

std::vector<std::int64_t> value_list(const yaml::Source& src, const YAML::Node& node, const std::string& name) {
  std::vector<std::int64_t> out;
  if (node.IsScalar()) {
    out.push_back(src.integer(node, name));
  } else if (node.IsSequence()) {
    if (node.size() == 0) src.fail(node, name + ": the list of values is empty");
    for (const auto& v : node) out.push_back(src.integer(v, "a value of " + name));
  } else if (node.IsMap()) {
    src.check_keys(node, {"values", "range", "pow2"}, name);
    if (node["values"]) {
      if (!node["values"].IsSequence() || node["values"].size() == 0)
        src.fail(node["values"], name + ": values must be a non-empty list of integers");
      for (const auto& v : node["values"]) out.push_back(src.integer(v, "a value of " + name));
    }
    if (node["range"]) {
      const auto r = node["range"];
      if (!r.IsSequence() || r.size() < 2 || r.size() > 3)
        src.fail(r, name + ": range must be [low, high] or [low, high, step]");
      const std::int64_t lo = src.integer(r[0], "range"), hi = src.integer(r[1], "range");
      const std::int64_t step = r.size() == 3 ? src.integer(r[2], "range step") : 1;
      if (step <= 0 || lo > hi || (hi - lo) / step > 100000)
        src.fail(r, name + ": range needs low <= high, step > 0, at most 100000 values");
      for (std::int64_t v = lo; v <= hi; v += step) out.push_back(v);
    }
    if (node["pow2"]) {
      const auto r = node["pow2"];
      if (!r.IsSequence() || r.size() != 2) src.fail(r, name + ": pow2 must be [low, high]");
      const std::int64_t lo = src.integer(r[0], "pow2"), hi = src.integer(r[1], "pow2");
      if (lo < 1 || hi < lo || hi > (std::int64_t{1} << 40))
        src.fail(r, name + ": pow2 needs 1 <= low <= high <= 2^40");
      const std::size_t before = out.size();
      for (std::int64_t v = 1; v <= hi; v *= 2)
        if (v >= lo) out.push_back(v);
      if (out.size() == before) src.fail(r, name + ": pow2 range holds no power of two");
    }
    if (out.empty()) src.fail(node, name + ": give values: [...], range: [lo, hi] or pow2: [lo, hi]");
  } else {
    src.fail(node, name + ": give a value, a list, or values/range/pow2");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::int64_t> parse_value_list(const std::string& yaml_text, const std::string& what) {
  const yaml::Source src{what, 0};
  return value_list(src, src.parse(yaml_text), what);
}

}  // namespace gpuk
