// Shared test helpers: the built-in directories and a scratch directory per test.
#pragma once
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "run/runtime.hpp"
#include "util/install_dirs.hpp"

namespace gpuk::test {

inline std::filesystem::path source_dir() { return GPUK_SOURCE_DIR; }

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
// `text` with its first `from` replaced by `to`; `from` must be there (the test fails if not).
inline std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::invalid_argument("replace: no '" + from + "' in the text");
  return text.replace(at, from.size(), to);
}
inline std::string text_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
// How many files in `dir` are writers' temporaries (".tmp-" in the name), left by a writer that died.
inline int temporaries_in(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    n += f.path().filename().string().find(".tmp-") != std::string::npos;
  return n;
}

// A shell command's exit status (-1 when a signal ended it), its stdout and stderr together, and
// how long it took.
struct CommandResult {
  int status = -1;
  std::string output;
  double seconds = 0;
};
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start: " + command);
  std::array<char, 4096> buffer;
  while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}
// Found as gpuk finds them, relative to libgpuk_core: the build tree's lib/gpuk/plugins and its
// link to kernels_src/ (cmake/layout.cmake).
inline std::filesystem::path kernels_dir() { return builtin_kernel_dir(); }
inline std::filesystem::path plugin_dir() { return builtin_plugin_dir(); }

// A Runtime's options for a test: the built-in plugins and kernel files, then `kernel_dirs`; the
// compile cache ($GPUK_CACHE_DIR) unless `cache` is false.
inline RuntimeOptions runtime_options(std::vector<std::filesystem::path> kernel_dirs = {}, bool cache = true) {
  RuntimeOptions o;
  o.kernel_dirs = std::move(kernel_dirs);
  o.no_cache = !cache;
  return o;
}

// Whether this build has the library baselines (GPUK_BASELINES=ON). Without them a GPU test's
// checks of CUB's or Thrust's run are skipped (`if (test::baselines_built()) CHECK(...)`), its
// checks of gpuk's still made; the GPU test programs say so once when they start (main.cpp).
inline bool baselines_built() {
#ifdef GPUK_NO_BASELINES
  return false;
#else
  return true;
#endif
}

// Seeds for the GPU tests' data: fresh each run (printed, so that a failure can be replayed
// with GPUK_TEST_SEED=that number), one after another within a run.
inline std::uint64_t fresh_seed() {
  static const std::uint64_t base = [] {
    const char* fixed = std::getenv("GPUK_TEST_SEED");
    const std::uint64_t s = fixed && *fixed ? std::strtoull(fixed, nullptr, 10) : std::random_device{}();
    std::cout << "GPU tests draw their data from seed " << s << " (replay: GPUK_TEST_SEED=" << s << ")\n";
    return s;
  }();
  static std::uint64_t counter = 0;
  return base + counter++;
}

// GPUK_EXHAUSTIVE=1: the GPU sweeps take every size and data pattern (CTest's `exhaustive`
// label runs them so; minutes on an H100). Unset: a quick set that keeps each kind of case (one
// element, a warp's edges, one block's edges, many tiles) and every data pattern at the small
// sizes, so that each GPU test program ends within a minute.
inline bool exhaustive() {
  const char* e = std::getenv("GPUK_EXHAUSTIVE");
  return e && *e && std::string(e) != "0";
}

// Sets (or, with nullptr, unsets) an environment variable for the object's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// What std::cerr says while the object lives (core's warnings and notes).
class CaptureCerr {
 public:
  CaptureCerr() : old_(std::cerr.rdbuf(text_.rdbuf())) {}
  ~CaptureCerr() { std::cerr.rdbuf(old_); }
  CaptureCerr(const CaptureCerr&) = delete;
  CaptureCerr& operator=(const CaptureCerr&) = delete;
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* old_;
};

// A fresh directory, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("gpuk-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace gpuk::test
