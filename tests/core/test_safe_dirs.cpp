// Directories gpuk takes code from: a plugin or kernel directory, or a file in one, that other
// users can write is refused (their code would run as you) unless --allow-unsafe-dirs /
// GPUK_ALLOW_UNSAFE_DIRS says otherwise; the compile cache is created private and not used when
// others can write to it.
#include <doctest/doctest.h>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "util/safe_dirs.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

// A kernel directory with one valid kernel file and a header.
fs::path kernel_dir(const test::TempDir& dir, const std::string& name) {
  dir.write(name + "/reduce/mine.cu",
            "/* gpuk\nfamily: reduce\noperations: [max]\nlaunch:\n  - {entry: mine, grid: 1, block: 32}\n*/\n"
            "template <class R> __global__ void mine() {}\n");
  dir.write(name + "/include/mine.cuh", "// a header\n");
  return dir.path() / name;
}

void set_mode(const fs::path& path, mode_t mode) { REQUIRE(::chmod(path.c_str(), mode) == 0); }

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// A group other users may be in: any gid for root, else a supplementary group not named after
// the user. -1 when there is none to try.
gid_t a_shared_group() {
  if (::geteuid() == 0) return 65534;
  const passwd* me = ::getpwuid(::geteuid());
  gid_t groups[256];
  const int n = ::getgroups(256, groups);
  for (int i = 0; i < n; ++i) {
    const group* g = ::getgrgid(groups[i]);
    if (g && me && std::string(g->gr_name) != me->pw_name) return groups[i];
  }
  return static_cast<gid_t>(-1);
}

}  // namespace

TEST_CASE("a plugin directory that everyone can write is refused, with the reason and the way out") {
  const test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  const test::TempDir dir;
  const fs::path plugins = dir.path() / "plugins";
  fs::create_directories(plugins);
  for (const mode_t mode : {0777, 01777}) {  // a sticky /tmp-like directory counts too: anyone can add a plugin
    CAPTURE(mode);
    set_mode(plugins, mode);
    try {
      const PluginRegistry registry({plugins});
      FAIL("a world-writable plugin directory was used");
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      CHECK(what.find("refusing the plugin directory " + plugins.string()) != std::string::npos);
      CHECK(what.find("is world-writable") != std::string::npos);
      CHECK(what.find("code there that gpuk would run as you") != std::string::npos);
      CHECK(what.find("--allow-unsafe-dirs") != std::string::npos);
    }
  }
  set_mode(plugins, 0755);
  CHECK_NOTHROW(PluginRegistry({plugins}));
  // A plugin file others can write, in a private directory, is refused too.
  const fs::path lib = dir.write("plugins/libgpuk_family_fake.so", "not a library");
  set_mode(lib, 0666);
  CHECK_THROWS_WITH_AS(PluginRegistry({plugins}), doctest::Contains(("refusing the plugin " + lib.string()).c_str()),
                       ConfigError);
}

TEST_CASE("a kernel directory, or any file or folder below it, that others can write is refused") {
  const test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  const test::TempDir dir;
  const fs::path kernels = kernel_dir(dir, "kernels");
  CHECK(KernelLibrary({kernels}).find("reduce", "mine"));
  for (const fs::path& target : {kernels, kernels / "reduce", kernels / "reduce" / "mine.cu",
                                 kernels / "include" / "mine.cuh"}) {
    CAPTURE(target);
    const mode_t before = mode_of(target);
    set_mode(target, before | S_IWOTH);
    CHECK_THROWS_WITH_AS(KernelLibrary({kernels}), doctest::Contains((target.string() + " is world-writable").c_str()),
                         ConfigError);
    set_mode(target, before);
  }
  CHECK_NOTHROW(KernelLibrary({kernels}));
}

TEST_CASE("a folder above a kernel directory that others can write is refused unless it is sticky") {
  const test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  const test::TempDir dir;
  const fs::path kernels = kernel_dir(dir, "shared/mine");
  const fs::path shared = dir.path() / "shared";
  set_mode(shared, 0777);  // others can rename "mine" away and put their own there
  CHECK_THROWS_WITH_AS(KernelLibrary({kernels}),
                       doctest::Contains(("its parent directory " + shared.string() +
                                          " is world-writable without the sticky bit").c_str()),
                       ConfigError);
  set_mode(shared, 01777);  // as /tmp: others cannot rename what they do not own
  CHECK_NOTHROW(KernelLibrary({kernels}));
}

TEST_CASE("group-writable is refused for a shared group and accepted for the user's private group") {
  const test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  const test::TempDir dir;
  const fs::path kernels = kernel_dir(dir, "kernels");
  set_mode(kernels, 0770);
  // The user's own primary group: accepted when it is private (named after the user, no members).
  const passwd* me = ::getpwuid(::geteuid());
  const group* mine = ::getgrgid(::getegid());
  REQUIRE(::chown(kernels.c_str(), static_cast<uid_t>(-1), ::getegid()) == 0);
  bool private_group = me && mine && std::string(mine->gr_name) == me->pw_name;
  for (char** m = mine ? mine->gr_mem : nullptr; m && *m; ++m) private_group = private_group && me->pw_name == std::string(*m);
  if (private_group) CHECK_FALSE(writable_by_others(kernels).has_value());
  else CHECK(writable_by_others(kernels).has_value());
  const gid_t shared = a_shared_group();
  if (shared == static_cast<gid_t>(-1)) {
    MESSAGE("skipped the shared-group case: this user is in no group but its own");
    return;
  }
  REQUIRE(::chown(kernels.c_str(), static_cast<uid_t>(-1), shared) == 0);
  CHECK_THROWS_WITH_AS(KernelLibrary({kernels}), doctest::Contains("is writable by group"), ConfigError);
}

TEST_CASE("--allow-unsafe-dirs (GPUK_ALLOW_UNSAFE_DIRS=1) uses such directories, with a warning") {
  const test::TempDir dir;
  const fs::path kernels = kernel_dir(dir, "kernels");
  set_mode(kernels, 0777);
  {
    const test::ScopedEnv allow("GPUK_ALLOW_UNSAFE_DIRS", "1");
    CHECK(unsafe_dirs_allowed());
    CHECK(KernelLibrary({kernels}).find("reduce", "mine"));
  }
  const test::ScopedEnv zero("GPUK_ALLOW_UNSAFE_DIRS", "0");
  CHECK_FALSE(unsafe_dirs_allowed());
  CHECK_THROWS_AS(KernelLibrary({kernels}), ConfigError);
}

TEST_CASE("gpuk's own built-in directories are warned about, not refused, when others can write them") {
  const test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  const test::TempDir dir;
  set_mode(dir.path(), 0777);
  CHECK(origin_of(test::plugin_dir(), test::plugin_dir()) == DirOrigin::builtin);
  CHECK(origin_of(test::plugin_dir() / ".", test::plugin_dir()) == DirOrigin::builtin);
  CHECK(origin_of(dir.path(), test::plugin_dir()) == DirOrigin::named);
  {
    const test::CaptureCerr said;
    CHECK_NOTHROW(refuse_if_writable_by_others(dir.path(), "plugin directory", true, DirOrigin::builtin));
    CHECK(said.text().find("warning: gpuk's own plugin directory " + dir.path().string() + " is not private") !=
          std::string::npos);
  }
  CHECK_THROWS_AS(refuse_if_writable_by_others(dir.path(), "plugin directory"), ConfigError);
}

TEST_CASE("the built-in plugin and kernel directories pass the check") {
  const test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  CHECK_FALSE(writable_by_others(test::plugin_dir()).has_value());
  CHECK_FALSE(writable_by_others(test::kernels_dir()).has_value());
  CHECK_NOTHROW(refuse_tree_if_writable_by_others(test::kernels_dir(), "kernel directory"));
}

TEST_CASE("the compile cache is created private to the user, and one that others can write is not used") {
  const test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  const test::TempDir dir;
  const fs::path cache_dir = dir.path() / "new" / "cache";
  {
    const CompileCache cache(cache_dir);
    CHECK(cache.enabled());
    CHECK(mode_of(cache_dir) == 0700);
    CHECK(mode_of(cache_dir.parent_path()) == 0700);  // created by gpuk too
  }
  set_mode(cache_dir, 0777);
  CHECK_FALSE(CompileCache(cache_dir).enabled());  // a planted CUBIN would run: compile without it
  set_mode(cache_dir, 01777);
  CHECK_FALSE(CompileCache(cache_dir).enabled());
  {
    const test::ScopedEnv allow("GPUK_ALLOW_UNSAFE_DIRS", "1");
    CHECK(CompileCache(cache_dir).enabled());
  }
  set_mode(cache_dir, 0755);  // an older gpuk's cache: readable by others, written by you alone
  CHECK(CompileCache(cache_dir).enabled());
}
