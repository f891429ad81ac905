// One error type for everything gpuk reports: what failed, and where.
#pragma once
#include <stdexcept>
#include <string>

namespace gpuk {

// The message is complete and user-facing ("config.yaml:3:5: unknown key 'sise' (did you mean
// 'size'?)"); callers add context by catching and rethrowing with `Error::with_context`.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Configuration or input problems (bad YAML, bad values, unreadable data files).
class ConfigError : public Error {
 public:
  using Error::Error;
};

// CUDA driver or NVRTC failures, and the absence of a usable GPU.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// No GPU or no driver on this machine: what needs one cannot run, everything else can.
class NoDeviceError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// A kernel source did not compile; the message carries the NVRTC log with file:line:column.
class CompileError : public Error {
 public:
  using Error::Error;
};

}  // namespace gpuk
