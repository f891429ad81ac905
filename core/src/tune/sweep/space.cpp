// The space of `gpuk tune`: kernel files x parameter values, and what prunes a point.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "gpuk/error.hpp"
#include "run/choose.hpp"
#include "tune/sweep/sweep.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

bool builtin_name(std::string_view id) { return id == "n" || id == "sm_count" || id == "elem_bytes" || id == "vec"; }

// A short reason that groups alike failures, from a full message.
std::string short_reason(const std::string& message) {
  static const std::regex constraint(R"(breaks the (config's )?constraint '([^']*)')");
  std::smatch m;
  if (std::regex_search(message, m, constraint)) return "constraint '" + m[2].str() + "'";
  if (message.find("threads per block") != std::string::npos) return "more threads per block than the GPU allows";
  if (message.find("bytes; this GPU allows at most") != std::string::npos)
    return "more shared memory than a block may use";
  if (message.find("grid '") != std::string::npos && message.find("must be between") != std::string::npos)
    return "grid size out of range";
  if (message.find("is not allowed") != std::string::npos) return "value not allowed";
  return message.size() > 80 ? message.substr(0, 77) + "..." : message;
}

}  // namespace

// --- Space -----------------------------------------------------------------------------------

Space::Space(std::vector<SpaceFile> files, std::vector<TuneConstraint> constraints)
    : files_(std::move(files)), constraints_(std::move(constraints)) {
  std::uint64_t offset = 0;
  for (const auto& f : files_) {
    if (f.values.size() != f.file->params.size())
      throw Error("space of " + f.file->name + ": one value list per parameter is needed");
    offsets_.push_back(offset);
    std::uint64_t n = 1;
    for (const auto& v : f.values) {
      if (v.empty()) throw Error("space of " + f.file->name + ": a parameter has no values");
      if (n > (std::uint64_t{1} << 40) / v.size()) throw ConfigError("the space of " + f.file->name + " is too large");
      n *= v.size();
    }
    offset += n;
  }
  offsets_.push_back(offset);
}

Space Space::from_spec(const TuneSpec& spec, const KernelLibrary& kernels) {
  std::vector<SpaceFile> files;
  for (const auto& name : spec.kernels) {
    const auto original = kernels.find(spec.run.family, name);
    auto copy = std::make_shared<KernelFile>(*original);
    SpaceFile sf;
    for (auto& p : copy->params) {
      const auto it = spec.params.find(p.name);
      std::vector<std::int64_t> values = it == spec.params.end() ? p.values : it->second;
      for (auto v : values)
        if (!std::binary_search(p.values.begin(), p.values.end(), v))
          sf.widened.push_back(p.name + "=" + std::to_string(v));
      std::vector<std::int64_t> allowed = p.values;
      allowed.insert(allowed.end(), values.begin(), values.end());
      std::sort(allowed.begin(), allowed.end());
      allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
      p.values = allowed;
      sf.values.push_back(values);
    }
    sf.file = copy;
    files.push_back(std::move(sf));
  }
  Space space(std::move(files), spec.constraints);
  if (!spec.points.empty()) {
    // A point belongs to the kernel file whose parameters it names, every one of them.
    std::set<Candidate> allowed;
    for (const auto& point : spec.points) {
      bool placed = false;
      for (std::size_t f = 0; f < space.files_.size() && !placed; ++f) {
        const auto& params = space.files_[f].file->params;
        if (params.size() != point.size()) continue;
        Candidate c;
        c.file = f;
        for (const auto& p : params) {
          const auto it = point.find(p.name);
          if (it == point.end()) break;
          c.values.push_back(it->second);
        }
        if (c.values.size() != params.size()) continue;
        placed = true;
        allowed.insert(c);
      }
      if (!placed) {
        std::string text;
        for (const auto& [name, value] : point) text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
        throw ConfigError(spec.run.path.string() + ": the point {" + text +
                          "} does not name every parameter of a kernel being tuned (and nothing else)");
      }
    }
    space.allow_only(std::move(allowed));
  }
  return space;
}

void Space::allow_only(std::set<Candidate> points) {
  for (const auto& c : points) {
    const auto& lists = files_.at(c.file).values;
    for (std::size_t i = 0; i < lists.size(); ++i)
      if (std::find(lists[i].begin(), lists[i].end(), c.values.at(i)) == lists[i].end())
        throw ConfigError("the point " + label(c) + " is not in the space: " + files_[c.file].file->params[i].name +
                          "=" + std::to_string(c.values[i]) + " is not among the values swept");
  }
  allowed_ = std::move(points);
}

std::uint64_t Space::size() const { return offsets_.back(); }

Candidate Space::at(std::uint64_t index) const {
  if (index >= size()) throw Error("point " + std::to_string(index) + " is outside the space");
  const std::size_t f = static_cast<std::size_t>(std::upper_bound(offsets_.begin(), offsets_.end(), index) -
                                                 offsets_.begin() - 1);
  Candidate c;
  c.file = f;
  std::uint64_t rest = index - offsets_[f];
  const auto& lists = files_[f].values;
  c.values.resize(lists.size());
  for (std::size_t i = lists.size(); i-- > 0;) {
    c.values[i] = lists[i][rest % lists[i].size()];
    rest /= lists[i].size();
  }
  return c;
}

std::uint64_t Space::index_of(const Candidate& c) const {
  const auto& lists = files_.at(c.file).values;
  std::uint64_t index = 0;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    const auto it = std::find(lists[i].begin(), lists[i].end(), c.values.at(i));
    if (it == lists[i].end()) throw Error("value not in the space: " + label(c));
    index = index * lists[i].size() + static_cast<std::uint64_t>(it - lists[i].begin());
  }
  return offsets_[c.file] + index;
}

std::map<std::string, std::int64_t> Space::params(const Candidate& c) const {
  std::map<std::string, std::int64_t> out;
  const auto& ps = files_.at(c.file).file->params;
  for (std::size_t i = 0; i < ps.size(); ++i) out[ps[i].name] = c.values.at(i);
  return out;
}

std::string Space::label(const Candidate& c) const {
  const auto& f = *files_.at(c.file).file;
  std::string out = f.name;
  for (std::size_t i = 0; i < f.params.size(); ++i) out += " " + f.params[i].name + "=" + std::to_string(c.values.at(i));
  return out;
}

Variant Space::variant(const Candidate& c, const std::vector<std::string>& leading_args) const {
  return Variant(files_.at(c.file).file, leading_args, params(c));
}

std::vector<Candidate> Space::neighbours(const Candidate& c) const {
  std::vector<Candidate> out;
  const auto& lists = files_.at(c.file).values;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    const auto it = std::find(lists[i].begin(), lists[i].end(), c.values[i]);
    if (it == lists[i].end()) continue;
    const std::size_t k = static_cast<std::size_t>(it - lists[i].begin());
    for (int step : {-1, 1}) {
      if ((step < 0 && k == 0) || (step > 0 && k + 1 >= lists[i].size())) continue;
      Candidate n = c;
      n.values[i] = lists[i][k + step];
      out.push_back(std::move(n));
    }
  }
  return out;
}

std::optional<std::string> Space::prune(const Candidate& c, const std::vector<std::string>& leading_args,
                                        const LaunchLimits& limits, LaunchPlan* plan, std::string* why) const {
  const auto fail = [&](const std::string& reason) -> std::optional<std::string> {
    if (why) *why = short_reason(reason);
    return reason;
  };
  const KernelFile& file = *files_.at(c.file).file;
  if (!allowed_.empty() && !allowed_.count(c)) {
    if (why) *why = "not among the given points";
    return label(c) + " is not among the given points";
  }
  std::optional<Variant> v;
  try {
    v.emplace(variant(c, leading_args));
  } catch (const ConfigError& e) {
    return fail(e.what());
  }
  std::map<std::string, std::int64_t, std::less<>> extra = {
      {"n", limits.n},
      {"sm_count", limits.sm_count},
      {"elem_bytes", limits.elem_bytes},
      {"vec", limits.elem_bytes ? 16 / limits.elem_bytes : 1}};
  extra.insert(limits.sizes.begin(), limits.sizes.end());  // a declared kernel's named sizes
  for (const auto& constraint : constraints_) {
    bool binds = true;
    for (const auto& id : constraint.expr.identifiers())
      binds = binds && (builtin_name(id) || file.param(id) || limits.sizes.count(id));
    if (!binds) continue;
    try {
      if (constraint.expr.eval([&](std::string_view n) { return v->lookup(n, extra); }) == 0)
        return fail(v->label() + " breaks the config's constraint '" + constraint.expr.text() + "' (line " +
                    std::to_string(constraint.line) + ")");
    } catch (const ConfigError& e) {
      return fail("constraint '" + constraint.expr.text() + "' of " + v->label() + ": " + e.what());
    }
  }
  try {
    LaunchPlan p = plan_launches(*v, limits);
    if (plan) *plan = std::move(p);
  } catch (const ConfigError& e) {
    return fail(e.what());
  }
  return std::nullopt;
}

std::optional<std::string> Space::why_no_gpu_runs(const std::vector<std::string>& leading_args,
                                                  const Problem& problem) const {
  std::optional<std::string> first;
  for (std::uint64_t i = 0; i < size(); ++i)
    for (const int sm_count : kAnyGpuSmCounts) {
      auto why = prune(at(i), leading_args, any_gpu_limits(problem, sm_count));
      if (!why) return std::nullopt;
      if (!first) first = std::move(why);
    }
  return first ? first : std::optional<std::string>("the space is empty");
}

Candidate Space::defaults(std::size_t file) const {
  Candidate c;
  c.file = file;
  const SpaceFile& sf = files_.at(file);
  for (std::size_t i = 0; i < sf.file->params.size(); ++i) {
    const auto& list = sf.values[i];
    const auto d = sf.file->params[i].default_value;
    c.values.push_back(std::find(list.begin(), list.end(), d) != list.end() ? d : list[list.size() / 2]);
  }
  return c;
}

}  // namespace gpuk
