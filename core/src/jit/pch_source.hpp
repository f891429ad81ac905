// A program made to use NVRTC's automatic precompiled header (PCH) in a compile process
// (jit/nvrtc_processes.hpp). NVRTC keeps the headers a program includes before its first
// declaration, parsed, and takes them again for the next program whose prefix and options are the
// same: measured here (2026-12-02), a kernel that includes CUB's BlockReduce went from 1.2 s of
// NVRTC to 0.24 s. The variants of a `params_as: defines` file differ in their -D options, which a
// PCH must match; so their definitions move into the source, after the file's leading #include
// lines, where the headers cannot see them. That is only done when no header names any of them
// (then the headers read the same either way) and only for files whose headers are large enough
// to be worth it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jit/include_tree.hpp"

namespace gpuk {

// Headers smaller than this are parsed faster than a PCH is made.
inline constexpr std::uint64_t kPchHeaderBytes = 256 * 1024;

// The source with `defines` ("-DNAME=VALUE" or "-DNAME" options) written as #define lines after
// its leading block (blank lines, comments, #include <...> or "...", #pragma once, #define), then
// a #line so that NVRTC's messages keep the file's own line numbers (`program` is the program's
// name in them); nullopt when the file has no such block with an #include, a header of `tree`
// names one of the definitions (or one of `fixed`, the -D options every variant has, whose value
// names one of them), or the program's name cannot be written in a #line.
std::optional<std::string> hoist_definitions(const std::string& source, const std::string& program,
                                             const std::vector<std::string>& defines, const IncludeTree& tree,
                                             const std::vector<std::string>& fixed = {});

}  // namespace gpuk
