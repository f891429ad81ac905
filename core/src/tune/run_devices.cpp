// `gpuk run --devices` (tune/tune_command.hpp): one config on each GPU, one after another, side
// by side.
#include <iostream>
#include <limits>
#include <set>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "report/run_report.hpp"
#include "report/side_by_side.hpp"
#include "run/runner.hpp"
#include "tune/tune_command.hpp"
#include "tune/workers/pool.hpp"

namespace gpuk {

namespace fs = std::filesystem;

bool run_on_devices(const RunSpec& spec, const RunContext& context, const std::string& devices,
                    const std::optional<fs::path>& json, const std::optional<fs::path>& csv,
                    const std::string& config) {
  // The list's words first, so that a machine without a GPU says what is wrong with them too.
  if (devices != "all") {
    const std::vector<int> named = parse_device_list(devices, std::numeric_limits<int>::max());
    if (std::set<int>(named.begin(), named.end()).size() < named.size())
      throw ConfigError("--devices " + devices + " names a GPU more than once");
  }
  std::string why;
  const int count = device_count(&why);
  if (count == 0) throw NoDeviceError(why);
  const std::vector<int> ordinals = parse_device_list(devices, count);
  std::vector<DeviceRun> runs;
  bool good = true;
  for (int ordinal : ordinals) {
    DeviceRun r;
    r.ordinal = ordinal;
    try {
      Device device(ordinal);
      r.report = run(spec, context, device);
      for (const auto& w : r.report->warnings) std::cerr << "gpuk: warning: GPU " << ordinal << ": " << w << "\n";
      const std::string suffix = "-gpu" + std::to_string(ordinal);
      const auto with_suffix = [&](const fs::path& p) {
        return p.parent_path() / (p.stem().string() + suffix + p.extension().string());
      };
      if (json) write_json(with_suffix(*json), *r.report);
      if (csv) write_csv(with_suffix(*csv), *r.report);
      good = good && !(r.report->verified && !r.report->verification.passed);
    } catch (const ConfigError&) {
      throw;  // the same on every GPU
    } catch (const Error& e) {
      r.error = e.what();
      good = false;
    }
    runs.push_back(std::move(r));
  }
  print_side_by_side(std::cout, config, runs);
  return good;
}

}  // namespace gpuk
