// What code built inside gpuk's tree (the tools, the tests, the Python module) reaches through an
// Engine besides the public API: core's own types, whose headers are not installed. An
// application has gpuk/gpuk.hpp's Engine::families(), kernel_files() and device() instead.
#pragma once
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "run/runtime.hpp"

namespace gpuk {

struct EngineInternals {
  static const PluginRegistry& plugins(const Engine& engine);
  static const KernelLibrary& kernels(const Engine& engine);
  static const DeviceInfo& device(const Engine& engine);  // opens the GPU if it is not open yet
  static Device& open_device(const Engine& engine);        // the same, and its context current
  static const Runtime& runtime(const Engine& engine);
  static const EngineOptions& options(const Engine& engine);
};

}  // namespace gpuk
