// Small text helpers for messages.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace gpuk {

// " (did you mean 'size'?)" when a candidate is close to `word`, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// `builtin`, then each entry of the ':'-separated environment variable `env`, then `extra`.
std::vector<std::filesystem::path> search_dirs(const std::filesystem::path& builtin, const char* env,
                                               const std::vector<std::filesystem::path>& extra);

}  // namespace gpuk
