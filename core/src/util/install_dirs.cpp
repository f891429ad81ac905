#include "util/install_dirs.hpp"

#include <dlfcn.h>

#include "gpuk/error.hpp"

namespace gpuk {

namespace fs = std::filesystem;

fs::path core_library_dir() {
  // dladdr on a function of this library names the file the loader mapped it from, whoever
  // loaded it (the CLI through its $ORIGIN-relative RPATH, a test, an application, a dlopen).
  static const fs::path dir = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&core_library_dir), &info) == 0 || !info.dli_fname ||
        !*info.dli_fname)
      throw Error("cannot find where libgpuk_core was loaded from (dladdr failed); name the kernel and "
                  "plugin directories with --kernels / --plugins or $GPUK_KERNELS / $GPUK_PLUGINS");
    std::error_code ec;
    const fs::path file = fs::weakly_canonical(fs::absolute(info.dli_fname), ec);
    return (ec ? fs::absolute(info.dli_fname) : file).parent_path();
  }();
  return dir;
}

namespace {

// The layout's directories relative to the library's, from CMake (cmake/layout.cmake), so that
// the build tree and `cmake --install` agree with each other.
fs::path from_library(const char* relative) {
  std::error_code ec;
  const fs::path joined = (core_library_dir() / relative).lexically_normal();
  const fs::path resolved = fs::weakly_canonical(joined, ec);
  return ec ? joined : resolved;
}

}  // namespace

fs::path builtin_plugin_dir() { return from_library(GPUK_PLUGIN_DIR_FROM_LIB); }

fs::path builtin_kernel_dir() { return from_library(GPUK_KERNELS_DIR_FROM_LIB); }

}  // namespace gpuk
