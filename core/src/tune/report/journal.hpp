// The journal of `gpuk tune`: every measured point appended as it is measured, one JSON line
// each, to a file per GPU and problem under the cache directory (tune-journal/<hash>.jsonl). A
// sweep run again, cut short (Ctrl-C, kill) or gone on in a fresh process after a variant took
// the CUDA context down measures only what the journal does not have (docs/tuning.md, "Resume").
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tune/sweep/sweep.hpp"

namespace gpuk {

// 32 hex digits of a 128-bit non-cryptographic hash of `bytes` (two 64-bit FNV-style lanes).
std::string content_hash(std::string_view bytes);

// The GPU a journal belongs to: its name and PCI bus id ("NVIDIA H100 80GB HBM3 0000:65:00.0"),
// or its name and ordinal where the driver gives no bus id.
std::string gpu_identity(const DeviceInfo& info);

// The journal of a sweep of `t` on `gpu` (gpu_identity): DIR/<hash>.jsonl, the hash of the GPU,
// the problem (family, operation, options, dtype, size, data) and how a variant is measured
// (warm-ups, repeats or auto and its bound and cap, the L2 flush). The kernel files, parameters
// and strategy are not in it: a line names its point, so sweeps of other spaces or strategies
// over the same problem share what they measured. The objective is not in it either: a line
// holds time and (when measured) energy, whatever the sweep ranked by.
std::filesystem::path journal_path(const std::filesystem::path& dir, const TuneSpec& t, const std::string& gpu,
                                   bool flushed);

// A run id for the processes of one sweep: the same in each of them, new for the next sweep.
std::string make_run_id();

class TuneJournal;

// The journal of a sweep of `t` on `gpu` in `dir` (none when `dir` is empty), attached to a sweep's
// options: its points go into options.prior (with `fresh`, only this run's), and each point
// measured from now on is appended (options.on_measured). It must outlive the sweep.
std::unique_ptr<TuneJournal> attach_journal(const std::filesystem::path& dir, const std::string& run_id, bool fresh,
                                            const TuneSpec& t, const DeviceInfo& gpu, bool flushed,
                                            const Space& space, TuneOptions& options);

class TuneJournal {
 public:
  TuneJournal(std::filesystem::path path, std::string run_id);

  // The newest line of each point of `space` whose kernel file still has the same content
  // (content_hash of its source) and whose parameters are the space's. With `fresh`, only this
  // run's lines count. Lines of other runs come back with `reused` set. A line that does not
  // parse (a writer killed mid-line, a hand edit) is skipped and counted in damaged(). A missing
  // file is an empty journal.
  std::vector<Evaluation> read(const Space& space, bool fresh);
  // Appends the point as one line in one write(2) on a file opened with O_APPEND, after a newline
  // of its own (a line torn by another writer killed at any moment ends there; readers skip the
  // empty lines). Throws Error when it cannot write.
  void append(const Space& space, const Evaluation& e);

  const std::filesystem::path& path() const { return path_; }
  int damaged() const { return damaged_; }

 private:
  std::filesystem::path path_;
  std::string run_;
  int damaged_ = 0;
};

}  // namespace gpuk
