// The built-in plugins and kernel files, loaded once per test program, and a HostArray made from
// a list of values: what the CPU tests of the config and of every family share.
#pragma once
#include <algorithm>
#include <initializer_list>

#include "data/data.hpp"
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

template <class T> HostArray array(std::initializer_list<T> values) {
  HostArray a(dtype_of<T>(), values.size());
  std::copy(values.begin(), values.end(), a.as<T>().begin());
  return a;
}

}  // namespace gpuk::test
