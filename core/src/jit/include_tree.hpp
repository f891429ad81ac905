// The headers a kernel file includes, recursively: found next to the including file or on the
// include path (the first that exists), read once and remembered while none of them changes (a
// sweep compiles hundreds of variants of one file; CUB's block-level headers are about 600 files,
// 6.6 MB). What the compile cache's key hashes, and what a precompiled header depends on.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace gpuk {

struct IncludeTree {
  std::string digest;         // every header's include name and contents, in a fixed order
  std::uint64_t bytes = 0;    // their total size
  std::unordered_set<std::string> identifiers;  // every identifier that appears in them
};

// Every identifier of `text` (C's rules; digits' suffixes are not identifiers) into `out`.
void add_identifiers(const std::string& text, std::unordered_set<std::string>& out);

// The tree of `source`'s includes. Remembered per source, directory and include path, and read
// again when any header found changed (size or modification time) or a path searched before it
// appeared. Every #include line counts, comments and #if branches too (more headers, never fewer).
std::shared_ptr<const IncludeTree> include_tree(const std::string& source, const std::filesystem::path& dir,
                                                const std::vector<std::filesystem::path>& include_dirs);

}  // namespace gpuk
