// The checks behind tools/dev/stress.sh, run after many gpuk processes shared one compile cache and
// one tuning database (some of them killed):
//   gpuk_stress_check cache DIR [--temporaries-allowed]
//       every entry's checksum holds (CompileCache::load); no temporary file is left
//   gpuk_stress_check db FILE [--temporaries-allowed] [TUNE_JSON...]
//       FILE is valid JSON and a readable tuning database (no entry skipped), holding the winner
//       of every `gpuk tune --json TUNE_JSON` given (no lost update); no temporary file is left.
//       No FILE at all is an empty database (every tune killed before it merged); an empty FILE
//       is a failure
//   gpuk_stress_check gpus
//       prints how many GPUs the driver sees (0, and why, without one)
// Exit status 0 when everything holds, 1 when something does not (each problem on one line), 2
// for a usage error. It only reads: the temporary files are counted, not removed.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "jit/jit.hpp"
#include "tune/sweep/sweep.hpp"
#include "util/regular_file.hpp"

namespace fs = std::filesystem;
using namespace gpuk;

namespace {

std::vector<fs::path> temporaries(const fs::path& dir, const std::string& prefix = "") {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    const std::string name = f.path().filename().string();
    if (name.find(".tmp-") != std::string::npos && name.rfind(prefix, 0) == 0) out.push_back(f.path());
  }
  return out;
}

int check_cache(const fs::path& dir, bool temporaries_allowed) {
  int problems = 0;
  const auto left = temporaries(dir);
  if (!left.empty() && !temporaries_allowed) {
    for (const auto& t : left) std::cout << "LEFT     " << t.string() << "\n";
    ++problems;
  }
  // The entries are checked through links in a scratch directory: a CompileCache opened on DIR
  // itself would remove the temporary files of killed writers, which is the next gpuk's job.
  char name[] = "/tmp/gpuk-stress-check-XXXXXX";
  if (!::mkdtemp(name)) throw Error("cannot create a scratch directory");
  const fs::path scratch = name;
  int entries = 0, damaged = 0;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    if (f.path().extension() != ".cubin") continue;
    ++entries;
    const fs::path link = scratch / f.path().filename();
    fs::create_hard_link(f.path(), link, ec);
    if (ec) fs::copy_file(f.path(), link, ec);
  }
  {
    const CompileCache cache(scratch);  // load() says on stderr why an entry is damaged
    for (const auto& f : fs::directory_iterator(scratch, ec)) {
      if (f.path().extension() != ".cubin") continue;
      if (!cache.load(f.path().stem().string())) {
        ++damaged;
        std::cout << "DAMAGED  " << (dir / f.path().filename()).string() << "\n";
      }
    }
  }
  fs::remove_all(scratch, ec);
  problems += damaged;
  std::cout << "cache " << dir.string() << ": " << entries << " entries, "
            << (damaged ? std::to_string(damaged) + " damaged" : "every checksum holds") << "; " << left.size()
            << " temporary file" << (left.size() == 1 ? "" : "s") << " left"
            << (!left.empty() && temporaries_allowed ? " (by killed writers)" : "") << "\n";
  return problems ? 1 : 0;
}

// The tuning database key and winner a `gpuk tune --json` report describes.
struct Winner {
  TuningKey key;
  std::string kernel;
  std::map<std::string, std::int64_t> params;
  std::string report;
};

Winner winner_of(const fs::path& report) {
  std::ifstream in(report);
  const auto j = nlohmann::json::parse(in);
  Winner w;
  std::map<std::string, std::string> options;
  for (const auto& [k, v] : j.at("options").items()) options[k] = v.get<std::string>();
  w.key = {j.at("device").at("name").get<std::string>(),
           j.at("device").at("arch").get<std::string>(),
           j.at("family").get<std::string>(),
           j.at("operation").get<std::string>(),
           options_key(options),
           j.at("dtype").get<std::string>(),
           size_bucket(j.at("size").get<std::uint64_t>())};
  const std::string label = j.at("best").at("variant").get<std::string>();
  w.kernel = label.substr(0, label.find(' '));
  w.params = j.at("best").at("params").get<std::map<std::string, std::int64_t>>();
  w.report = report.string();
  return w;
}

int check_db(const fs::path& path, bool temporaries_allowed, const std::vector<fs::path>& reports) {
  int problems = 0;
  std::size_t written = 0;
  // No file is an empty database: a phase whose tunes were all killed before they merged leaves
  // none (nlohmann's "attempting to parse an empty input" for a missing file once read as an
  // empty one). Each finished tune's winner must then be there, so any report makes it LOST below.
  const RegularFile file = read_regular_file(path, kMaxTuningDbBytes);
  if (file.status == RegularFile::Status::missing) {
    std::cout << "database " << path.string() << ": none written\n";
  } else if (file.status != RegularFile::Status::ok) {
    std::cout << "UNREADABLE " << path.string() << ": " << file.why << "\n";
    return 1;
  } else if (file.text.empty()) {
    std::cout << "EMPTY    " << path.string() << ": an empty file, not a database\n";
    return 1;
  } else {
    try {
      written = nlohmann::json::parse(file.text).at("entries").size();
    } catch (const std::exception& e) {
      std::cout << "NOT JSON " << path.string() << " (" << file.text.size() << " bytes): " << e.what() << "\n";
      return 1;
    }
  }
  const TuningDb db = TuningDb::read(path);  // says on stderr which entry it skips, and why
  if (db.entries().size() != written) {
    std::cout << "SKIPPED  " << written - db.entries().size() << " entries of " << path.string() << "\n";
    ++problems;
  }
  // Processes that tuned the same key race for it: the entry must be one of theirs.
  std::map<TuningKey, std::vector<Winner>> by_key;
  for (const auto& r : reports) {
    const Winner w = winner_of(r);
    by_key[w.key].push_back(w);
  }
  for (const auto& [key, winners] : by_key) {
    const TuningEntry* e = db.find(key);
    const std::string what = key.family + " " + key.operation + " " + key.dtype + " 2^" + std::to_string(key.bucket);
    if (!e) {
      std::cout << "LOST     " << what << ": tuned by " << winners.front().report << ", not in the database\n";
      ++problems;
      continue;
    }
    bool one_of_them = false;
    for (const auto& w : winners) one_of_them = one_of_them || (w.kernel == e->kernel && w.params == e->params);
    if (!one_of_them) {
      std::cout << "WRONG    " << what << ": the database holds " << e->kernel << ", no tune process's winner\n";
      ++problems;
    }
  }
  const auto left = temporaries(path.parent_path(), path.filename().string());
  if (!left.empty() && !temporaries_allowed) {
    for (const auto& t : left) std::cout << "LEFT     " << t.string() << "\n";
    ++problems;
  }
  std::cout << "database " << path.string() << ": valid JSON, " << db.entries().size() << " entries, the winners of "
            << by_key.size() << " tuned key(s) from " << reports.size() << " tune process(es) "
            << (problems ? "not all as they should be (above)" : "all there") << "; " << left.size() << " temporary file"
            << (left.size() == 1 ? "" : "s") << " left\n";
  return problems ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool temporaries_allowed = false;
  std::erase_if(args, [&](const std::string& a) { return a == "--temporaries-allowed" && (temporaries_allowed = true); });
  try {
    if (args.size() == 1 && args[0] == "gpus") {
      std::string why;
      const int n = device_count(&why);
      std::cout << n << (n ? "" : " (" + why + ")") << "\n";
      return 0;
    }
    if (args.size() == 2 && args[0] == "cache") return check_cache(args[1], temporaries_allowed);
    if (args.size() >= 2 && args[0] == "db")
      return check_db(args[1], temporaries_allowed, std::vector<fs::path>(args.begin() + 2, args.end()));
  } catch (const std::exception& e) {
    std::cout << "gpuk_stress_check: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: gpuk_stress_check cache DIR [--temporaries-allowed]\n"
               "       gpuk_stress_check db FILE [--temporaries-allowed] [TUNE_JSON...]\n"
               "       gpuk_stress_check gpus\n";
  return 2;
}
