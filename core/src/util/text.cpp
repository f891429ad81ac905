#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iomanip>
#include <sstream>

namespace gpuk {

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution =
          diagonal + (std::tolower(static_cast<unsigned char>(a[i - 1])) !=
                      std::tolower(static_cast<unsigned char>(b[j - 1])));
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}
}  // namespace

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  std::size_t best_distance = 0;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (!best || d < best_distance) best = &candidate, best_distance = d;
  }
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  if (!best || best_distance > limit) return "";
  return " (did you mean '" + *best + "'?)";
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += items[i];
  }
  return out;
}

std::vector<std::filesystem::path> search_dirs(const std::filesystem::path& builtin, const char* env,
                                               const std::vector<std::filesystem::path>& extra) {
  std::vector<std::filesystem::path> dirs = {builtin};
  if (const char* value = std::getenv(env); value && *value) {
    std::stringstream list(value);
    std::string item;
    while (std::getline(list, item, ':'))
      if (!item.empty()) dirs.emplace_back(item);
  }
  dirs.insert(dirs.end(), extra.begin(), extra.end());
  return dirs;
}

}  // namespace gpuk

namespace gpuk {

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

std::string ms_text(double value) {
  return value < 1 ? fixed(value, 4) : value < 100 ? fixed(value, 3) : fixed(value, 1);
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  std::ostringstream out;
  out.precision(bytes < 10 ? 2 : 3);
  out << bytes << ' ' << units[u];
  return out.str();
}

}  // namespace gpuk

namespace gpuk {

namespace {
std::string escaped(std::string_view text, std::size_t max_bytes, bool lines) {
  std::string out;
  std::size_t i = 0;
  for (; i < text.size() && out.size() < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // The length of a well-formed UTF-8 sequence starting here (0 when it is not one).
    std::size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    for (std::size_t k = 1; k < length; ++k)
      if (i + k >= text.size() || (static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) length = 0;
    if (length > 1) {
      out.append(text.substr(i, length));
      i += length - 1;
    } else if (length == 1 && ((c >= 0x20 && c != 0x7F) || (lines && (c == '\n' || c == '\t')))) {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes in all)";
  return out;
}
}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) { return escaped(text, max_bytes, false); }
std::string terminal_text(std::string_view text, std::size_t max_bytes) { return escaped(text, max_bytes, true); }

}  // namespace gpuk
