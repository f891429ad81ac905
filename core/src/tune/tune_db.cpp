// The tuning database: the best variant per GPU and problem, in one JSON file, written
// atomically and merged under a lock (docs/tuning.md, "The database").
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/device.hpp"
#include "gpuk/error.hpp"
#include "gpuk/jit.hpp"
#include "gpuk/tune.hpp"
#include "util/atomic_file.hpp"

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
  j["kernel"] = e.kernel;
  j["params"] = e.params;
  j["median_ms"] = e.median_ms;
  j["gbs"] = e.gbs;
  j["size"] = e.size;
  j["ties"] = e.ties;
  j["strategy"] = e.strategy;
  j["evaluated"] = e.evaluated;
  j["tuned_at"] = e.tuned_at;
  j["gpuk_version"] = e.gpuk_version;
  j["nvrtc"] = e.nvrtc;
  return j;
}

TuningEntry from_json(const nlohmann::json& j) {
  TuningEntry e;
  e.key.gpu = j.at("gpu").get<std::string>();
  e.key.arch = j.at("arch").get<std::string>();
  e.key.family = j.at("family").get<std::string>();
  e.key.operation = j.at("operation").get<std::string>();
  e.key.options = j.value("options", std::string());
  e.key.dtype = j.at("dtype").get<std::string>();
  e.key.bucket = j.at("size_bucket").get<int>();
  e.kernel = j.at("kernel").get<std::string>();
  e.params = j.at("params").get<std::map<std::string, std::int64_t>>();
  e.median_ms = j.value("median_ms", 0.0);
  e.gbs = j.value("gbs", 0.0);
  e.size = j.value("size", std::uint64_t{0});
  e.ties = j.value("ties", std::vector<std::string>{});
  e.strategy = j.value("strategy", std::string());
  e.evaluated = j.value("evaluated", 0);
  e.tuned_at = j.value("tuned_at", std::string());
  e.gpuk_version = j.value("gpuk_version", std::string());
  e.nvrtc = j.value("nvrtc", std::string());
  return e;
}

// An exclusive flock on PATH.lock, held for the object's lifetime. flock locks belong to the
// open file description, so two threads of one process exclude each other too.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(path.string() + ": cannot open the tuning database's lock file");
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        throw Error(path.string() + ": cannot lock the tuning database");
      }
    }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
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

TuningDb TuningDb::read(const fs::path& path) {
  TuningDb db;
  std::ifstream in(path);
  if (!in) return db;
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().find_first_not_of(" \t\r\n") == std::string::npos) return db;
  try {
    const auto j = nlohmann::json::parse(text.str());
    if (j.value("format", std::string()) != kFormat)
      throw ConfigError(path.string() + ": not a gpuk tuning database (no \"format\": \"" + kFormat + "\")");
    if (j.value("version", 0) > kVersion)
      throw ConfigError(path.string() + ": tuning database version " + std::to_string(j.value("version", 0)) +
                        " is newer than this gpuk reads (" + std::to_string(kVersion) + ")");
    for (const auto& e : j.at("entries")) db.put(from_json(e));
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(path.string() + ": the tuning database is damaged: " + e.what());
  }
  return db;
}

void TuningDb::write(const fs::path& path) const {
  nlohmann::ordered_json j;  // format and version first
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["entries"] = nlohmann::ordered_json::array();
  for (const auto& e : entries_) j["entries"].push_back(nlohmann::ordered_json::parse(to_json(e).dump()));
  write_file_atomically(path, j.dump(2) + "\n", "the tuning database");
}

void TuningDb::merge_into(const fs::path& path, const std::vector<TuningEntry>& entries) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  const FileLock lock(path.string() + ".lock");
  TuningDb db = read(path);
  for (const auto& e : entries) db.put(e);
  db.write(path);
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

TuningDb::Pick TuningDb::pick(const TuningKey& key) const {
  if (const TuningEntry* e = find(key)) return {e, true};
  Pick best;
  int best_distance = 3;
  for (const auto& e : entries_) {
    const TuningKey& k = e.key;
    if (k.gpu != key.gpu || k.arch != key.arch || k.family != key.family || k.operation != key.operation ||
        k.options != key.options || k.dtype != key.dtype)
      continue;
    const int distance = std::abs(k.bucket - key.bucket);
    if (distance < best_distance || (distance == best_distance && best.entry && k.bucket > best.entry->key.bucket)) {
      best = {&e, false};
      best_distance = distance;
    }
  }
  return best;
}

std::string resolve_auto_variant(RunSpec& spec, const DeviceInfo& device, const TuningDb& db, const fs::path& db_path,
                                 const KernelLibrary& kernels) {
  const TuningKey key{device.name, device.arch(), spec.family, spec.operation, options_key(spec.options),
                      std::string(dtype_name(spec.dtype)), size_bucket(spec.size)};
  const std::string defaults = "the kernel file's defaults (" + spec.kernel + ", the plugin's default kernel)";
  const auto pick = db.pick(key);
  const std::string what = spec.family + " " + spec.operation + (key.options.empty() ? "" : " " + key.options) + " " +
                           key.dtype + " n in [2^" + std::to_string(key.bucket) + ", 2^" +
                           std::to_string(key.bucket + 1) + ") on " + device.name + " (" + device.arch() + ")";
  if (!pick.entry)
    return "variant: auto found no entry for " + what + " in " + db_path.string() + "; using " + defaults;
  const TuningEntry& e = *pick.entry;
  try {
    const auto file = kernels.find(spec.family, e.kernel);
    if (!file->supports(spec.operation) || !file->supports(spec.dtype))
      throw ConfigError("kernel " + e.kernel + " no longer implements " + spec.operation + " for " + key.dtype);
    Variant(file, {}, e.params);  // the metadata still allows these values
  } catch (const ConfigError& err) {
    return "variant: auto found " + e.kernel + " for " + what + " in " + db_path.string() +
           ", but it no longer fits (" + err.what() + "); using " + defaults;
  }
  spec.kernel = e.kernel;
  spec.params = e.params;
  std::ostringstream why;
  why << "variant: auto picked it from " << db_path.string() << ": the fastest of " << e.evaluated
      << " variants tuned " << (e.tuned_at.empty() ? "earlier" : "at " + e.tuned_at) << " (" << e.strategy << ", "
      << e.median_ms << " ms at n = " << e.size << ")";
  if (!pick.exact)
    why << "; no entry for n in bucket 2^" << key.bucket << ", so the nearest, 2^" << e.key.bucket;
  if (!e.ties.empty()) why << "; tied within the noise with " << e.ties.size() << " other(s)";
  return why.str();
}

}  // namespace gpuk
