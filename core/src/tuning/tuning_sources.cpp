// Where the lookup finds tuned variants (tuning/tuning_sources.hpp).
#include "tuning/tuning_sources.hpp"

#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "tuning/tuning_db.hpp"

namespace gpuk {

namespace fs = std::filesystem;

void add_shipped_tuning(TuningSources& into, const KernelLibrary& kernels, const std::string& arch) {
  for (const auto& dir : kernels.dirs()) {
    const fs::path path = dir / "tuned" / (arch + ".json");
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) continue;
    try {
      into.shipped.push_back({path, std::make_shared<const TuningDb>(TuningDb::read(path))});
    } catch (const ConfigError& e) {
      into.warnings.push_back(std::string(e.what()) + "; the shipped tuning file is left out");
    }
  }
}

void add_user_tuning(TuningSources& into, const fs::path& path, bool given) {
  std::error_code ec;
  if (given && !fs::exists(path, ec)) throw ConfigError(path.string() + ": the tuning file does not exist");
  try {
    into.user = TuningFile{path, std::make_shared<const TuningDb>(TuningDb::read(path))};
    into.user_file_given = given;
  } catch (const ConfigError& e) {
    if (given) throw;
    into.warnings.push_back(std::string(e.what()) + "; the lookup goes on without it");
  }
}

}  // namespace gpuk
