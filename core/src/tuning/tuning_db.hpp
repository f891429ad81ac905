// The tuning database on disk: the best variant per GPU, problem and size bucket, written by
// `gpuk tune` and read by the lookup (run/choose.hpp). Atomic, merged under a lock with
// concurrent writers (docs/tuning.md).
#pragma once
#include <compare>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuk {

// floor(log2(n)): sizes in [2^k, 2^(k+1)) share bucket k.
int size_bucket(std::uint64_t n);

struct TuningKey {
  std::string gpu;   // "NVIDIA H100 80GB HBM3"
  std::string arch;  // "sm_90": the compute capability
  std::string family, operation;
  std::string options;  // the family's options, "abs=true" ("" when it has none)
  std::string dtype;
  int bucket = 0;
  std::string objective = "time";  // what the entry is best at; a database without it reads as time
  auto operator<=>(const TuningKey&) const = default;
};

struct TuningEntry {
  TuningKey key;
  std::string kernel;
  std::map<std::string, std::int64_t> params;
  double median_ms = 0;
  double gbs = 0;
  std::optional<double> joules;   // per call, when energy was measured
  std::optional<double> watts;
  std::uint64_t size = 0;         // the n it was tuned at
  std::vector<std::string> ties;  // variants within the noise of this one
  std::string strategy;
  int evaluated = 0;
  std::string tuned_at;  // UTC, ISO 8601
  std::string gpuk_version, nvrtc;
};

std::string options_key(const std::map<std::string, std::string>& options);

class TuningDb {
 public:
  // $GPUK_TUNING_DB, else tuning/tuning.json in the compile cache's default directory.
  static std::filesystem::path default_path();
  // A missing file is an empty database; one that is not JSON, or not a gpuk database, is a
  // ConfigError naming the file. An entry with a wrong type or value (a hand edit) is skipped
  // with a warning naming it; the others are used.
  static TuningDb read(const std::filesystem::path& path);
  // Under the lock on PATH.lock: writes to a temporary file and renames it into place. A file at
  // PATH that is not a gpuk tuning database (a config, a directory, a newer version) is refused
  // (ConfigError naming it and why), never written over; a damaged database is replaced.
  void write(const std::filesystem::path& path) const;
  // Throws what write() and merge_into() would for PATH (ConfigError: not a database gpuk may
  // write over), before the work whose result goes there.
  static void check_ours(const std::filesystem::path& path);
  // Under an exclusive lock on PATH.lock: re-reads the file, adds or replaces `entries` (a key
  // already there takes the new entry), writes atomically. Concurrent writers lose nothing;
  // skipped entries are written back as they were; a damaged database (not JSON, naming gpuk's
  // format) is moved aside; anything else at PATH is refused and left as it is.
  static void merge_into(const std::filesystem::path& path, const std::vector<TuningEntry>& entries);

  void put(const TuningEntry& entry);  // replaces the entry of the same key
  const std::vector<TuningEntry>& entries() const { return entries_; }
  const TuningEntry* find(const TuningKey& key) const;

  struct Pick {
    const TuningEntry* entry = nullptr;
    bool exact = false;  // the same size bucket; else the nearest within two buckets
  };
  // The entry for this key's bucket, else the nearest bucket at most 2 away (n within 4x) of the
  // same GPU, family, operation, options and dtype; the nearer one wins, the larger on a draw.
  // With same_gpu false, entries of any GPU of the key's architecture match (a shipped file).
  Pick pick(const TuningKey& key, bool same_gpu = true) const;

 private:
  void write_locked(const std::filesystem::path& path) const;  // the caller holds PATH.lock
  std::vector<TuningEntry> entries_;  // sorted by key
  std::vector<std::string> unreadable_;  // entries read() skipped, as JSON text, written back as they were
};

}  // namespace gpuk
