// Where the lookup of run/choose.hpp finds tuned variants: the user's tuning database (or the
// file a config names instead) and the tuning files shipped per architecture, tuned/<arch>.json
// in each kernel directory. Read by a run, `gpuk check` and every Engine; written by nobody here.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuk {

class KernelLibrary;
class TuningDb;

// One tuning file the lookup reads.
struct TuningFile {
  std::filesystem::path path;
  std::shared_ptr<const TuningDb> db;
};

// Where the lookup finds tuned variants.
struct TuningSources {
  // The user's database, or the file a config's `tuning:` or `--tuning` names instead.
  std::optional<TuningFile> user;
  bool user_file_given = false;  // named by `tuning:` / `--tuning`: the sentences say "tuning file"
  // tuned/<arch>.json of each kernel directory that has one, the built-in directory first.
  std::vector<TuningFile> shipped;
  // Left out by the application's TuningPolicy (not merely absent): the sentences say so.
  bool user_off = false, shipped_off = false;
  std::vector<std::string> warnings;  // files that could not be read, and were left out
};

// tuned/<arch>.json of every kernel directory of `kernels`, in directory order (the built-in one
// first). A file that cannot be read is left out with a warning in `into.warnings`.
void add_shipped_tuning(TuningSources& into, const KernelLibrary& kernels, const std::string& arch);

// The user's database at `path` (a missing file is an empty database). A damaged database is
// left out with a warning; with `given` (the config's `tuning:` or `--tuning`), a missing or
// damaged file is a ConfigError instead.
void add_user_tuning(TuningSources& into, const std::filesystem::path& path, bool given);

}  // namespace gpuk
