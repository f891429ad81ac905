// Where this gpuk's own files are. Found from the directory that holds libgpuk_core itself, so
// that an installed prefix, a build tree and either of them moved elsewhere all work from any
// working directory, with no path of the machine that built them.
#pragma once
#include <filesystem>

namespace gpuk {

// The directory of the loaded libgpuk_core (PREFIX/lib, or build/lib: the build tree is laid
// out like a prefix).
std::filesystem::path core_library_dir();

// PREFIX/lib/gpuk/plugins: the family plugins built with this gpuk.
std::filesystem::path builtin_plugin_dir();

// PREFIX/share/gpuk/kernels: the kernel sources. In a build tree this is a relative link to the
// source tree's kernels_src/, so a kernel file dropped there is seen without a rebuild; the path
// returned has that link resolved, so that messages name the file one would edit.
std::filesystem::path builtin_kernel_dir();

}  // namespace gpuk
