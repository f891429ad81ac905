// The built-in plugins and kernel files, loaded once per test program, configs parsed with them,
// devices described without a GPU, and HostArrays made from values: what the CPU tests of the
// config and of every family share.
#pragma once
#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "data/data.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

namespace gpuk::test {

inline const PluginRegistry& plugins() {
  static const PluginRegistry registry({plugin_dir()});
  return registry;
}
inline const KernelLibrary& kernels() {
  static const KernelLibrary library({kernels_dir()});
  return library;
}

// A GPU that no kernel file's metadata names (sm_99), with an H100's limits.
inline DeviceInfo test_gpu() {
  DeviceInfo d;
  d.name = "Test GPU";
  d.cc_major = 9;
  d.cc_minor = 9;  // sm_99: no shipped file of the repository covers it
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_shared_per_block_optin = 232448;
  return d;
}
// An H100's DeviceInfo as the tuner reads it (no GPU needed).
inline DeviceInfo h100_info() {
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.sm_count = 132;
  d.l2_bytes = 50 * 1024 * 1024;
  d.peak_bandwidth_gbs = 3352;
  return d;
}

// A run config's text parsed as the file c.yaml (where its messages say the error is), and the
// ConfigError's message ("" when it parses).
inline RunSpec parse_run(const std::string& yaml) { return parse_run_spec(yaml, "c.yaml", plugins(), kernels()); }
inline std::string run_config_error(const std::string& yaml) {
  try {
    (void)parse_run(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
// A tune config of reduce max over 10^6 float32 values with the onepass kernel, and `extra` keys.
inline TuneSpec onepass_tune_spec(const std::string& extra) {
  return parse_tune_spec("family: reduce\noperation: max\ndtype: float32\nsize: 1000000\nkernels: [onepass]\n" + extra,
                         "t.yaml", plugins(), kernels());
}

template <class T> HostArray array(std::initializer_list<T> values) {
  HostArray a(dtype_of<T>(), values.size());
  std::copy(values.begin(), values.end(), a.as<T>().begin());
  return a;
}
template <class T> HostArray array(const std::vector<T>& values) {
  HostArray a(dtype_of<T>(), values.size());
  std::copy(values.begin(), values.end(), a.as<T>().begin());
  return a;
}
template <class T> std::vector<T> items(const HostArray& a) {
  const auto s = a.as<T>();
  return {s.begin(), s.end()};
}

}  // namespace gpuk::test
