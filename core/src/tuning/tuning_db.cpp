// The tuning database: the best variant per GPU and problem, in one JSON file, written
// atomically and merged under a lock (docs/tuning.md, "The database").
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <climits>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/error.hpp"
#include "config/config.hpp"
#include "jit/jit.hpp"
#include "tuning/db_fast_read.hpp"
#include "tuning/entry_json.hpp"
#include "util/atomic_file.hpp"
#include "util/fault_point.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "gpuk-tuning-db";
constexpr int kVersion = 1;

nlohmann::json to_json(const TuningEntry& e) {
  nlohmann::json j;
  j["gpu"] = e.key.gpu;
  j["arch"] = e.key.arch;
  j["family"] = e.key.family;
  j["operation"] = e.key.operation;
  j["options"] = e.key.options;
  j["dtype"] = e.key.dtype;
  j["size_bucket"] = e.key.bucket;
  j["objective"] = e.key.objective;
  j["kernel"] = e.kernel;
  j["params"] = e.params;
  j["median_ms"] = e.median_ms;
  j["gbs"] = e.gbs;
  if (e.joules) j["joules"] = *e.joules;
  if (e.watts) j["watts"] = *e.watts;
  j["size"] = e.size;
  j["ties"] = e.ties;
  j["strategy"] = e.strategy;
  j["evaluated"] = e.evaluated;
  j["tuned_at"] = e.tuned_at;
  j["gpuk_version"] = e.gpuk_version;
  j["nvrtc"] = e.nvrtc;
  return j;
}

// One entry, checked field by field: a hand-edited entry with a wrong type or an impossible value
// throws ConfigError saying which field, and read() skips it with a warning.
TuningEntry from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw ConfigError("it is not a JSON object");
  // Each field looked up once (a database of 300 k entries spends its time here).
  const auto field = [&](const char* name) -> const nlohmann::json* {
    const auto it = j.find(name);
    return it == j.end() ? nullptr : &*it;
  };
  const auto text = [&](const char* name, bool required) {
    const nlohmann::json* v = field(name);
    if (!v) {
      if (required) throw ConfigError(std::string("it has no \"") + name + "\"");
      return std::string();
    }
    if (!v->is_string()) throw ConfigError(std::string("\"") + name + "\" must be a string");
    return v->get<std::string>();
  };
  const auto number = [&](const char* name) {
    const nlohmann::json* v = field(name);
    if (!v) return 0.0;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0)
      throw ConfigError(std::string("\"") + name + "\" must be a number, at least 0");
    return v->get<double>();
  };
  const auto integer = [&](const char* name, bool required, std::int64_t low, std::int64_t high) -> std::int64_t {
    const nlohmann::json* found = field(name);
    if (!found) {
      if (required) throw ConfigError(std::string("it has no \"") + name + "\"");
      return 0;
    }
    const auto& v = *found;
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(high)) ||
        v.get<std::int64_t>() < low || v.get<std::int64_t>() > high)
      throw ConfigError(std::string("\"") + name + "\" must be an integer from " + std::to_string(low) + " to " +
                        std::to_string(high));
    return v.get<std::int64_t>();
  };
  TuningEntry e;
  e.key.gpu = text("gpu", true);
  e.key.arch = text("arch", true);
  e.key.family = text("family", true);
  e.key.operation = text("operation", true);
  e.key.options = text("options", false);
  e.key.dtype = text("dtype", true);
  e.key.bucket = static_cast<int>(integer("size_bucket", true, 0, 64));
  // A database written before objectives were recorded ranked by time.
  e.key.objective = field("objective") ? text("objective", true) : "time";
  if (!parse_objective(e.key.objective))
    throw ConfigError("\"objective\" must be time, energy or edp, not '" + e.key.objective + "'");
  e.kernel = text("kernel", true);
  const nlohmann::json* params = field("params");
  if (!params || !params->is_object()) throw ConfigError("\"params\" must be an object");
  for (const auto& [name, value] : params->items()) {
    if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<std::uint64_t>() > INT64_MAX))
      throw ConfigError("parameter " + name + " must be an integer");
    e.params[name] = value.get<std::int64_t>();
  }
  e.median_ms = number("median_ms");
  e.gbs = number("gbs");
  if (field("joules")) e.joules = number("joules");
  if (field("watts")) e.watts = number("watts");
  e.size = static_cast<std::uint64_t>(integer("size", false, 0, INT64_MAX));
  if (const nlohmann::json* ties = field("ties")) {
    if (!ties->is_array()) throw ConfigError("\"ties\" must be a list of strings");
    for (const auto& t : *ties) {
      if (!t.is_string()) throw ConfigError("\"ties\" must be a list of strings");
      e.ties.push_back(t.get<std::string>());
    }
  }
  e.strategy = text("strategy", false);
  e.evaluated = static_cast<int>(integer("evaluated", false, 0, INT32_MAX));
  e.tuned_at = text("tuned_at", false);
  e.gpuk_version = text("gpuk_version", false);
  e.nvrtc = text("nvrtc", false);
  return e;
}

// "entry 3 (reduce argmax float32, kernel onepass)": what of an entry can be read, to name it.
std::string describe_entry(std::size_t index, const nlohmann::json& j) {
  std::string what;
  if (j.is_object())
    for (const char* field : {"family", "operation", "options", "dtype", "kernel"})
      if (j.contains(field) && j[field].is_string() && !j[field].get<std::string>().empty())
        what += (what.empty() ? "" : std::string(field) == "kernel" ? ", kernel " : " ") + j[field].get<std::string>();
  return "entry " + std::to_string(index + 1) + (what.empty() ? "" : " (" + what + ")");
}

// A gpuk tuning database that does not parse as JSON (a hand edit gone wrong, a disk that lost
// its end; gpuk itself writes atomically): `merge_into` moves it aside instead of failing a
// finished sweep. Only one that names its format: anything else (a YAML config, a report, a
// directory, a FIFO) is not gpuk's to move, and is refused with the reason.
class DamagedDb : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// Whether `text` is, or was, a gpuk tuning database: gpuk writes "format" first, so its value is
// in the first few hundred bytes of any database that is not empty.
bool names_our_format(const std::string& text) {
  return std::string_view(text).substr(0, 4096).find(std::string("\"") + kFormat + "\"") != std::string_view::npos;
}

// An exclusive flock on PATH.lock, held for the object's lifetime, and the file removed as it is
// let go, so that no X.lock is left beside a database or an exported tuning file. flock locks
// belong to the open file description, so two threads of one process exclude each other too.
// Removing a lock file is safe only with the check below: a waiter that got the lock of a file
// its holder removed (unlinked before it let go) holds nothing anyone else will take, so it
// opens PATH again until the file it locked is the one there.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) : path_(path) {
    for (;;) {
      fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd_ < 0) throw Error(path.string() + ": cannot open the tuning database's lock file");
      while (::flock(fd_, LOCK_EX) != 0) {
        if (errno != EINTR) {
          ::close(fd_);
          throw Error(path.string() + ": cannot lock the tuning database");
        }
      }
      struct stat held {}, there {};
      if (::fstat(fd_, &held) == 0 && ::stat(path.c_str(), &there) == 0 && held.st_dev == there.st_dev &&
          held.st_ino == there.st_ino)
        return;
      ::close(fd_);  // removed (or replaced) by the holder before us: take the one there now
    }
  }
  ~FileLock() {
    ::unlink(path_.c_str());  // before letting go: a waiter on this file then opens PATH again
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  fs::path path_;
  int fd_ = -1;
};

}  // namespace

int size_bucket(std::uint64_t n) {
  int k = 0;
  while (n > 1) n >>= 1, ++k;
  return k;
}

std::string options_key(const std::map<std::string, std::string>& options) {
  std::string out;
  for (const auto& [k, v] : options) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

fs::path TuningDb::default_path() {
  if (const char* p = std::getenv("GPUK_TUNING_DB"); p && *p) return p;
  return CompileCache::default_dir() / "tuning" / "tuning.json";
}

namespace {

// Sorted once at the end of read(): put() one by one into the sorted list moved half of it per entry
// (16 k entries took 2.25 s, 300 k minutes). Of equal keys the later wins, as put() would.
// gpuk writes its entries in key order: then nothing moves. Otherwise their positions are
// sorted (by key, then by position) and each entry moved once.
void sort_by_key_keeping_last(std::vector<TuningEntry>& all) {
  const auto by_key = [](const TuningEntry& x, const TuningEntry& y) { return x.key < y.key; };
  if (!std::is_sorted(all.begin(), all.end(), by_key)) {
    // Each key flattened once into bytes that compare as the key does (fields joined by '\0',
    // which no field holds; the bucket as one byte), then sorted with the position as the tie.
    std::vector<std::pair<std::string, std::uint32_t>> order(all.size());
    bool flat_faithful = true;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const TuningKey& k = all[i].key;
      std::string& flat = order[i].first;
      for (const std::string* f : {&k.gpu, &k.arch, &k.family, &k.operation, &k.options, &k.dtype}) {
        flat_faithful = flat_faithful && f->find('\0') == std::string::npos;
        flat += *f;
        flat += '\0';
      }
      flat += static_cast<char>(k.bucket);  // 0..64
      flat += '\0';
      flat += k.objective;
      order[i].second = static_cast<std::uint32_t>(i);
    }
    std::sort(order.begin(), order.end());
    // A key holding '\0' (a hand edit's "\u0000") does not flatten faithfully: then the keys
    // themselves are compared.
    if (!flat_faithful)
      std::stable_sort(order.begin(), order.end(),
                       [&](const auto& x, const auto& y) { return all[x.second].key < all[y.second].key; });
    // Entry order[i].second goes to position i: each cycle of the permutation followed in place
    // (a sorted copy would be a second list of them all).
    std::vector<std::uint32_t> from(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) from[i] = order[i].second;
    order = {};
    for (std::size_t start = 0; start < from.size(); ++start) {
      if (from[start] == start) continue;
      TuningEntry held = std::move(all[start]);
      std::size_t at = start;
      while (from[at] != start) {
        all[at] = std::move(all[from[at]]);
        const std::size_t next = from[at];
        from[at] = static_cast<std::uint32_t>(at);
        at = next;
      }
      all[at] = std::move(held);
      from[at] = static_cast<std::uint32_t>(at);
    }
  }
  // Keep the last of each run of equal keys.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i + 1 < all.size() && all[i + 1].key == all[i].key) continue;
    if (kept != i) all[kept] = std::move(all[i]);
    ++kept;
  }
  all.erase(all.begin() + static_cast<std::ptrdiff_t>(kept), all.end());
}

}  // namespace

TuningDb TuningDb::read(const fs::path& path) {
  TuningDb db;
  const RegularFile file = read_regular_file(path, kMaxTuningDbBytes);
  if (file.status == RegularFile::Status::missing) return db;
  if (file.status != RegularFile::Status::ok)
    throw ConfigError(path.string() + ": not a tuning database gpuk can read (" + file.why +
                      "); gpuk neither moves nor writes over it");
  if (file.text.find_first_not_of(" \t\r\n") == std::string::npos) return db;
  // A database as gpuk writes it is read straight from the parse events; anything the fast
  // reader does not accept as it stands is read again by the checked reader below, which says
  // what is wrong with it.
  if (auto fast = read_db_entries_fast(file.text, kFormat, kVersion)) {
    db.entries_ = std::move(*fast);
  } else {
    // Each entry is read as the parser finishes it and its JSON dropped at once: a document of
    // 300 k entries held whole is a gigabyte of small allocations (seconds), its entries a tenth.
    struct Skipped {
      std::size_t index;
      std::string description, why, raw;
    };
    std::vector<Skipped> skipped;
    std::size_t index = 0;
    std::string top_key;  // the top-level key being read
    const auto take_entry = [&](const nlohmann::json& entry) {
      try {
        db.entries_.push_back(from_json(entry));
      } catch (const ConfigError& e) {
        skipped.push_back({index, describe_entry(index, entry), e.what(), entry.dump()});
      }
      ++index;
    };
    using Event = nlohmann::json::parse_event_t;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(file.text, [&](int depth, Event event, nlohmann::json& parsed) {
        if (depth == 1 && event == Event::key) top_key = parsed.get<std::string>();
        if (depth != 2 || top_key != "entries") return true;
        // An entry: an object or array at its end, or a scalar.
        if (event == Event::object_end || event == Event::array_end || event == Event::value) {
          take_entry(parsed);
          return false;  // not kept in the document
        }
        return true;
      });
    } catch (const nlohmann::json::exception& e) {
      if (names_our_format(file.text))
        throw DamagedDb(path.string() + ": the tuning database is damaged: " + e.what());
      throw ConfigError(path.string() + ": not a gpuk tuning database (not JSON, and it does not name the format \"" +
                        kFormat + "\"); gpuk neither moves nor writes over it: " + e.what());
    }
    if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
      throw ConfigError(path.string() + ": not a gpuk tuning database (no \"format\": \"" + kFormat + "\")");
    if (j.contains("version") && !j["version"].is_number_integer())
      throw ConfigError(path.string() + ": the tuning database is damaged: \"version\" is not an integer");
    if (j.contains("version") && j["version"].get<double>() > kVersion)
      throw ConfigError(path.string() + ": tuning database version " + j["version"].dump() +
                        " is newer than this gpuk reads (" + std::to_string(kVersion) + ")");
    if (!j.contains("entries") || !j["entries"].is_array())
      throw ConfigError(path.string() + ": the tuning database is damaged: \"entries\" is not a list");
    // One bad entry (a hand edit) costs that entry, not the database: the rest is used, and the
    // entry is written back as it was, so a later merge loses nothing.
    for (auto& s : skipped) {
      // The entry's words are the file's (a hand edit): escaped, as every file's text gpuk prints.
      std::cerr << "gpuk: warning: " << terminal_text(path.string() + ": " + s.description + " is ignored: " + s.why, 4096)
                << "\n";
      db.unreadable_.push_back(std::move(s.raw));
    }
  }
  sort_by_key_keeping_last(db.entries_);
  return db;
}

void TuningDb::write(const fs::path& path) const {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  const FileLock lock(path.string() + ".lock");
  remove_temporaries_of(path);  // every writer of PATH holds the lock: any is a killed one's
  check_ours(path);  // a database (or a damaged one) is replaced; anything else is not gpuk's
  write_locked(path);
}

void TuningDb::check_ours(const fs::path& path) {
  try {
    (void)read(path);
  } catch (const DamagedDb&) {
  }
}

void TuningDb::write_locked(const fs::path& path) const {
  nlohmann::ordered_json j;  // format and version first
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["entries"] = nlohmann::ordered_json::array();
  for (const auto& e : entries_) j["entries"].push_back(nlohmann::ordered_json::parse(to_json(e).dump()));
  for (const auto& raw : unreadable_) j["entries"].push_back(nlohmann::ordered_json::parse(raw));
  write_file_atomically(path, j.dump(2) + "\n", "the tuning database");
}

void TuningDb::merge_into(const fs::path& path, const std::vector<TuningEntry>& entries) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  const FileLock lock(path.string() + ".lock");
  fault_point("tuning database: locked");
  // Every writer of this database's temporary files holds the lock: under it, any such file was
  // left by a merge that was killed; its update never landed, and its writer said nothing. (Its
  // process id is no guide: a killed writer lets go of the lock before it is even a zombie.)
  remove_temporaries_of(path);
  TuningDb db;
  try {
    db = read(path);
  } catch (const DamagedDb& e) {
    fs::path aside = path.string() + ".damaged-" + std::to_string(::getpid());
    for (int k = 1; fs::exists(aside, ec); ++k)  // never over an earlier one
      aside = path.string() + ".damaged-" + std::to_string(::getpid()) + "-" + std::to_string(k);
    fs::rename(path, aside, ec);
    if (ec) throw ConfigError(std::string(e.what()) + "; moving it aside to " + aside.string() + " failed: " + ec.message());
    std::cerr << "gpuk: warning: " << terminal_text(e.what(), 4096) << "\ngpuk: warning: moved it to " << aside.string()
              << " and started a new one\n";
  }
  fault_point("tuning database: read");
  for (const auto& e : entries) db.put(e);
  db.write_locked(path);
}

void TuningDb::put(const TuningEntry& entry) {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), entry.key,
                                   [](const TuningEntry& e, const TuningKey& k) { return e.key < k; });
  if (it != entries_.end() && it->key == entry.key) *it = entry;
  else entries_.insert(it, entry);
}

const TuningEntry* TuningDb::find(const TuningKey& key) const {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                                   [](const TuningEntry& e, const TuningKey& k) { return e.key < k; });
  return it != entries_.end() && it->key == key ? &*it : nullptr;
}

TuningDb::Pick TuningDb::pick(const TuningKey& key, bool same_gpu) const {
  if (const TuningEntry* e = same_gpu ? find(key) : nullptr) return {e, true};
  Pick best;
  int best_distance = 3;
  for (const auto& e : entries_) {
    const TuningKey& k = e.key;
    if ((same_gpu && k.gpu != key.gpu) || k.arch != key.arch || k.family != key.family ||
        k.operation != key.operation || k.options != key.options || k.dtype != key.dtype ||
        k.objective != key.objective)
      continue;
    const int distance = std::abs(k.bucket - key.bucket);
    if (distance == 0) return {&e, true};
    if (distance < best_distance || (distance == best_distance && best.entry && k.bucket > best.entry->key.bucket)) {
      best = {&e, false};
      best_distance = distance;
    }
  }
  return best;
}

nlohmann::json tuning_entry_to_json(const TuningEntry& entry) { return to_json(entry); }
TuningEntry tuning_entry_from_json(const nlohmann::json& j) { return from_json(j); }

}  // namespace gpuk
