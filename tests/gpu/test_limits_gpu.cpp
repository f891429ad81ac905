// Memory limits on the GPU: for every family, an input just over the device's free memory, and
// the smallest input whose family buffers (their Launcher's arrays: run_device_bytes) no longer fit, are refused
// up front by run() and by the tuner (before any data is generated: within seconds), with
// a message that says how much the run needs and how much the device has; and a sort that fits the
// device but not the host's memory is refused with the host's figures, not killed by the OOM killer.
// The wording of the figures is not pinned: any integer or "74.5 GiB" counts.
// Without a GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <regex>

#include "config/config.hpp"
#include "device/host_memory.hpp"
#include "helpers.hpp"
#include "run/runner.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune/sweep_on_gpu.hpp"

using namespace gpuk;

namespace {

struct Gpu {
  Runtime runtime{test::runtime_options()};
  const PluginRegistry& plugins = runtime.plugins();
  const KernelLibrary& kernels = runtime.kernels();
  Device device{0};
  const CompileCache& cache = runtime.cache();
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

// Every byte figure in a message: "83916095488 bytes", "83,916,095,488", "78.2 GiB", "80 GB".
std::vector<double> figures(const std::string& text) {
  static const std::regex number(R"((\d[\d,]*(?:\.\d+)?)\s*(KiB|MiB|GiB|TiB|KB|MB|GB|TB)?)");
  std::vector<double> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it) {
    std::string digits = (*it)[1].str();
    std::erase(digits, ',');
    double value = std::stod(digits);
    const std::string unit = (*it)[2].str();
    const double k = unit.size() == 3 ? 1024 : 1000;
    if (!unit.empty()) value *= std::pow(k, std::string("KMGT").find(unit[0]) + 1);
    out.push_back(value);
  }
  return out;
}

bool says_at_least(const std::string& text, double bytes) {
  for (double f : figures(text))
    if (f >= bytes * 0.995) return true;
  return false;
}

bool says_between(const std::string& text, double low, double high) {
  for (double f : figures(text))
    if (f >= low && f <= high) return true;
  return false;
}

std::string yaml_of(const FamilyPlugin& plugin, DType dtype, std::uint64_t n) {
  return "family: " + plugin.name() + "\noperation: " + plugin.operations().front() + "\ndtype: " +
         std::string(dtype_name(dtype)) + "\nsize: " + std::to_string(n) +
         "\ndata: {generator: uniform, low: 0, high: 1000, seed: 3}\n";
}

RunSpec spec_of(const FamilyPlugin& plugin, DType dtype, std::uint64_t n) {
  return parse_run_spec(yaml_of(plugin, dtype, n), "limits.yaml", gpu().plugins, gpu().kernels);
}

// The tuner's whole sweep of the family's default kernel for the same problem.
void tune_sweep(const FamilyPlugin& plugin, DType dtype, std::uint64_t n) {
  Gpu& g = gpu();
  const TuneSpec t = parse_tune_spec(yaml_of(plugin, dtype, n), "limits_tune.yaml", g.plugins, g.kernels);
  const Space space = Space::from_spec(t, g.kernels);
  (void)sweep_on_gpu(t, space, {g.runtime}, g.device, {});
}

// The widest dtype the family takes: the fewest elements for a given number of bytes.
DType widest(const FamilyPlugin& plugin) {
  DType best = plugin.dtypes().front();
  for (DType d : plugin.dtypes())
    if (dtype_size(d) > dtype_size(best)) best = d;
  return best;
}

// Runs `refuse` (run() or a sweep) and checks that it throws within seconds with the figures.
void check_refused(const std::string& what, const std::function<void()>& refuse, double needs, double has_low,
                   double has_high, const char* kind) {
  CAPTURE(what);
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    refuse();
    FAIL_CHECK(what << " was not refused");
    return;
  } catch (const Error& e) {
    message = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(what << ": refused after " << seconds << " s: " << message);
  CAPTURE(message);
  CHECK(seconds < 10);  // no data was generated: that alone would take far longer
  CHECK(message.find(kind) != std::string::npos);
  // The GPU's name may hold a figure of its own ("H100 80GB"): not the one looked for.
  for (auto at = message.find(gpu().device.info().name); at != std::string::npos; at = message.find(gpu().device.info().name))
    message.erase(at, gpu().device.info().name.size());
  CHECK(says_at_least(message, needs));             // how much the run needs
  CHECK(says_between(message, has_low, has_high));  // how much the device (or host) has
}

}  // namespace

TEST_CASE("for every family, an input just over the device's free memory is refused up front, with both figures") {
  Gpu& g = gpu();
  const double total = static_cast<double>(g.device.info().total_memory);
  for (const FamilyPlugin* plugin : g.plugins.all()) {
    if (plugin->operations().empty()) continue;  // the kernel family: each kernel declares its own (tests/declared)
    const DType dtype = widest(*plugin);
    const std::uint64_t free = g.device.free_memory();
    const std::uint64_t n = free / dtype_size(dtype) + 1;  // one element more than the free memory holds
    const RunSpec spec = spec_of(*plugin, dtype, n);
    const double needs = static_cast<double>(n * dtype_size(dtype));
    const std::string what = plugin->name() + " of " + std::to_string(n) + " " + std::string(dtype_name(dtype));
    check_refused("run: " + what, [&] { run(spec, {g.runtime}, g.device); }, needs,
                  0.5 * static_cast<double>(free), 1.01 * total, "device memory");
    check_refused("tune: " + what, [&] { tune_sweep(*plugin, dtype, n); }, needs,
                  0.5 * static_cast<double>(free), 1.01 * total, "device memory");
    CHECK(g.device.free_memory() >= free - (64u << 20));  // nothing was left allocated
  }
}

TEST_CASE("for every family, the smallest input whose buffers do not fit is refused up front, with both figures") {
  Gpu& g = gpu();
  const double total = static_cast<double>(g.device.info().total_memory);
  for (const FamilyPlugin* plugin : g.plugins.all()) {
    if (plugin->operations().empty()) continue;  // the kernel family: each kernel declares its own (tests/declared)
    const DType dtype = widest(*plugin);
    const std::uint64_t free = g.device.free_memory();
    // The smallest n with device_bytes(n) > free: for the sort well below the input alone.
    std::uint64_t low = 1, high = free / dtype_size(dtype) + 1;
    while (low < high) {
      const std::uint64_t mid = low + (high - low) / 2;
      if (run_device_bytes(spec_of(*plugin, dtype, mid), *plugin) > free) high = mid;
      else low = mid + 1;
    }
    const RunSpec spec = spec_of(*plugin, dtype, low);
    const std::string what = plugin->name() + " of " + std::to_string(low) + " " + std::string(dtype_name(dtype)) +
                             " (" + std::to_string(run_device_bytes(spec, *plugin)) + " bytes of buffers)";
    check_refused("run: " + what, [&] { run(spec, {g.runtime}, g.device); },
                  static_cast<double>(run_device_bytes(spec, *plugin)), 0.5 * static_cast<double>(free), 1.01 * total,
                  "device memory");
  }
}

TEST_CASE("a sort that fits the device but not the host's memory is refused with the host's figures") {
  Gpu& g = gpu();
  const FamilyPlugin& sort = g.plugins.get("sort");
  const std::uint64_t free = g.device.free_memory();
  const HostMemory host = available_host_memory();
  // uint32 keys, below radix's 2^32 limit, whose device buffers fit with room to spare.
  std::uint64_t n = std::min<std::uint64_t>(4294967295ull, free / 16);
  RunSpec spec = spec_of(sort, DType::uint32, n);
  if (sort.host_bytes(problem_of(spec)) <= host.available) {
    MESSAGE("skipped: this host has " << host.available << " bytes available, more than a sort of " << n
                                      << " uint32 keys needs (" << sort.host_bytes(problem_of(spec)) << ")");
    return;
  }
  REQUIRE(run_device_bytes(spec, sort) < free);
  check_refused("run: sort of " + std::to_string(n) + " uint32 keys",
                [&] { run(spec, {g.runtime}, g.device); },
                static_cast<double>(sort.host_bytes(problem_of(spec))), 0.9 * static_cast<double>(host.available),
                1.1 * static_cast<double>(host.available), "host memory");
}
