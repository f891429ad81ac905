// Small text helpers for messages.
#pragma once
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace gpuk {

// " (did you mean 'size'?)" when a candidate is close to `word`, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// The arguments written one after another (numbers with 17 significant digits).
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream out;
  out.precision(17);
  (out << ... << args);
  return out.str();
}

// "1.50 GiB": bytes in the largest binary unit below them, with 3 significant digits.
std::string human_bytes(double bytes);

// `value` with `digits` digits after the point.
std::string fixed(double value, int digits);
// Milliseconds with enough digits for microsecond-scale kernels: 0.0123, 12.345, 123.4.
std::string ms_text(double value);

// `text` fit for a message: control bytes and bytes that are not UTF-8 written as \xNN, and
// anything past `max_bytes` cut off with "... (N bytes in all)", so that a message never echoes
// unbounded input or drives the terminal.
std::string printable(std::string_view text, std::size_t max_bytes = 80);
// The same for a whole message of lines: newlines and tabs kept.
std::string terminal_text(std::string_view text, std::size_t max_bytes);

// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// `builtin`, then each entry of the ':'-separated environment variable `env`, then `extra`.
std::vector<std::filesystem::path> search_dirs(const std::filesystem::path& builtin, const char* env,
                                               const std::vector<std::filesystem::path>& extra);

}  // namespace gpuk
