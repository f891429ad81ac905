// The points `gpuk tune` sweeps: kernel files x parameter values, and what prunes them
// (docs/tuning.md). Testable without a GPU.
#pragma once
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "kernel/kernel_file.hpp"

namespace gpuk {

// One point: a kernel file of the space and a value for each of its parameters (in the file's
// parameter order).
struct Candidate {
  std::size_t file = 0;
  std::vector<std::int64_t> values;
  auto operator<=>(const Candidate&) const = default;
};

struct SpaceFile {
  std::shared_ptr<const KernelFile> file;  // a copy whose allowed values include the swept ones
  std::vector<std::vector<std::int64_t>> values;  // per parameter, ascending
  std::vector<std::string> widened;  // "GRID=4096": values the metadata does not list
};

class Space {
 public:
  Space(std::vector<SpaceFile> files, std::vector<TuneConstraint> constraints);
  // The kernel files and value lists of a tune config: each file's metadata values, replaced by
  // the config's list for every parameter the config names; with `points:`, only those points.
  static Space from_spec(const TuneSpec& spec, const KernelLibrary& kernels);

  const std::vector<SpaceFile>& files() const { return files_; }
  const std::vector<TuneConstraint>& constraints() const { return constraints_; }
  // Only these points run (a caller's explicit list, `points:`); the others are pruned. Empty:
  // every point. Each must be a point of the space (ConfigError naming it otherwise).
  void allow_only(std::set<Candidate> points);
  const std::set<Candidate>& allowed() const { return allowed_; }
  std::uint64_t size() const;  // every point of every file, pruned ones included
  // Points are numbered file by file, the last parameter varying fastest.
  Candidate at(std::uint64_t index) const;
  std::uint64_t index_of(const Candidate& c) const;
  std::map<std::string, std::int64_t> params(const Candidate& c) const;
  std::string label(const Candidate& c) const;  // "onepass BLOCK=256 UNROLL=4"
  Variant variant(const Candidate& c, const std::vector<std::string>& leading_args) const;
  // Points that differ in one parameter by one step of its list.
  std::vector<Candidate> neighbours(const Candidate& c) const;
  // File `file`'s metadata defaults (a default the swept list lacks: the list's middle value),
  // where the anneal and bayes strategies start.
  Candidate defaults(std::size_t file) const;

  // Why the point cannot run on this problem and device, or nullopt when it can (then `plan`,
  // when given, receives its launches). Checks the metadata's constraints, the config's (a config
  // constraint binds a file only when the file has every parameter it names), and the launch
  // geometry against the device's limits. `why` receives a short reason that groups alike
  // failures ("constraint 'BLOCK * UNROLL <= 8192'").
  std::optional<std::string> prune(const Candidate& c, const std::vector<std::string>& leading_args,
                                   const LaunchLimits& limits, LaunchPlan* plan = nullptr,
                                   std::string* why = nullptr) const;

  // The first point's reason when no point runs on any GPU for `problem` (pruned at every SM
  // count from 1 to 1024 with any GPU's limits, run/choose.hpp), else nullopt. Every tune of such
  // a space fails: `gpuk check` and `gpuk tune` say so without a GPU. Stops at the first point
  // that runs.
  std::optional<std::string> why_no_gpu_runs(const std::vector<std::string>& leading_args, const Problem& problem) const;

 private:
  std::vector<SpaceFile> files_;
  std::vector<TuneConstraint> constraints_;
  std::set<Candidate> allowed_;  // empty: every point
  std::vector<std::uint64_t> offsets_;  // first index of each file
};

}  // namespace gpuk
