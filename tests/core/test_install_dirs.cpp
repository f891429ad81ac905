#include <doctest/doctest.h>

#include "helpers.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "util/install_dirs.hpp"

namespace fs = std::filesystem;

TEST_CASE("gpuk finds its plugins next to its own library, not where it was built") {
  const fs::path lib = gpuk::core_library_dir();
  CHECK(fs::exists(lib / "libgpuk_core.so"));
  CHECK(gpuk::builtin_plugin_dir() == lib / "gpuk" / "plugins");
  CHECK(fs::exists(gpuk::builtin_plugin_dir() / "libgpuk_family_reduce.so"));
}

TEST_CASE("the build tree's kernel directory is kernels_src itself, so that drop-in files need no rebuild") {
  // build/share/gpuk/kernels is a relative link to the sources; gpuk names the files by their
  // real path, the one to edit.
  CHECK(gpuk::builtin_kernel_dir() == fs::canonical(gpuk::test::source_dir() / "kernels_src"));
}

TEST_CASE("the built-in directories come first, then $GPUK_KERNELS / $GPUK_PLUGINS, then --kernels / --plugins") {
  const auto kernels = gpuk::kernel_dirs({"/extra"});
  REQUIRE(kernels.size() >= 2);
  CHECK(kernels.front() == gpuk::builtin_kernel_dir());
  CHECK(kernels.back() == "/extra");
  const auto plugins = gpuk::plugin_dirs({"/extra"});
  REQUIRE(plugins.size() >= 2);
  CHECK(plugins.front() == gpuk::builtin_plugin_dir());
  CHECK(plugins.back() == "/extra");
}
