// Files that readers see whole or not at all: written to a temporary file beside the target,
// flushed to disk, then renamed over it (rename is atomic within a file system).
#pragma once
#include <filesystem>
#include <string_view>

namespace gpuk {

// Writes `bytes` to `path` atomically, creating its directory. Throws Error naming `what`
// ("the tuning database") and the path when it cannot; the temporary file is removed then.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes, std::string_view what);

}  // namespace gpuk
