// Places gpuk takes code from: plugin directories (shared libraries it loads and runs), kernel
// directories (sources and headers it compiles and runs on the GPU) and the compile cache (CUBINs
// it loads). If another user can write to one of them, loading from it runs that user's code as
// you, so gpuk refuses it unless told otherwise (docs/reliability.md, "Untrusted directories").
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpuk {

// Why users other than you (and root) can change what `path` holds, or nullopt when they cannot:
//   - `path` is writable by all (world-writable; sticky /tmp-like directories count too: anyone
//     can add a file to them), or by a group that is not your private group (a group named after
//     you with no other members, as Debian, Ubuntu and Fedora give every user);
//   - with `parents`, a directory above it is so writable without the sticky bit, so that others
//     could move `path` away and put their own in its place.
// Ownership by another user is not refused: that user installed it, as root installed /usr/lib.
std::optional<std::string> writable_by_others(const std::filesystem::path& path, bool parents = true);

// $GPUK_ALLOW_UNSAFE_DIRS is set (and not 0); `gpuk --allow-unsafe-dirs` sets it.
bool unsafe_dirs_allowed();

// Whose directory it is: one the user named (--plugins, --kernels, $GPUK_PLUGINS, ...), or one of
// gpuk's own, built in at build time. Others' write access to gpuk's own is warned about, not
// refused: whoever can write there can as well replace gpuk's binary and libraries beside it, and
// refusing would only stop gpuk.
enum class DirOrigin { named, builtin };

// Throws ConfigError naming `what` ("plugin directory"), the path and the reason when others can
// write to `path` (see writable_by_others); with unsafe_dirs_allowed(), or for a builtin
// directory, it warns on stderr instead. A path that does not exist passes (its users report that).
void refuse_if_writable_by_others(const std::filesystem::path& path, std::string_view what, bool parents = true,
                                  DirOrigin origin = DirOrigin::named);

// When `path` is a symbolic link: the same for where it leads (and, for a file, the directory
// that holds it, sticky or not). Nothing for anything else.
void refuse_link_target_if_writable_by_others(const std::filesystem::path& path, std::string_view what,
                                              DirOrigin origin = DirOrigin::named);

// The same for a directory and everything below it (subdirectories, sources, headers; links
// checked where they lead).
void refuse_tree_if_writable_by_others(const std::filesystem::path& dir, std::string_view what,
                                       DirOrigin origin = DirOrigin::named);

// builtin when `dir` is `builtin_dir` (builtin_plugin_dir(), builtin_kernel_dir()), else named.
DirOrigin origin_of(const std::filesystem::path& dir, const std::filesystem::path& builtin_dir);

// Creates `dir` and any missing directory above it with mode 0700 (private to you). Existing
// directories are left as they are. Returns false when it cannot.
bool create_private_directories(const std::filesystem::path& dir);

}  // namespace gpuk
