// A program made to use NVRTC's automatic precompiled header (jit/pch_source.hpp).
#include "jit/pch_source.hpp"

#include <sstream>
#include <unordered_set>

namespace gpuk {

namespace {

std::string trimmed(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// `#include <x>`, `#include "x"`, `#pragma once` or `#define ...` (the same in every variant).
bool directive_kept(const std::string& line, bool* is_include) {
  if (line.empty() || line[0] != '#') return false;
  const std::string rest = trimmed(line.substr(1));
  if (rest.rfind("include", 0) == 0) {
    const std::string what = trimmed(rest.substr(7));
    *is_include = !what.empty() && (what[0] == '<' || what[0] == '"');
    return *is_include;
  }
  return rest == "pragma once" || rest.rfind("define ", 0) == 0 || rest.rfind("define\t", 0) == 0;
}

// The number of whole lines at the start of `source` that form its leading block, and whether
// an #include is among them.
std::size_t leading_lines(const std::string& source, bool* has_include) {
  std::istringstream in(source);
  std::string raw;
  std::size_t count = 0, kept = 0;
  bool in_comment = false;
  while (std::getline(in, raw)) {
    std::string line = trimmed(raw);
    if (in_comment) {
      const std::size_t end = line.find("*/");
      if (end == std::string::npos) {
        ++count;
        continue;
      }
      in_comment = false;
      line = trimmed(line.substr(end + 2));
    }
    if (line.rfind("/*", 0) == 0 && line.find("*/") == std::string::npos) {
      in_comment = true;
      ++count;
      continue;
    }
    if (line.rfind("/*", 0) == 0) line = trimmed(line.substr(line.find("*/") + 2));
    if (!line.empty() && line.back() == '\\') break;  // a continued directive: not followed
    bool include = false;
    if (line.empty() || line.rfind("//", 0) == 0 || directive_kept(line, &include)) {
      ++count;
      *has_include = *has_include || include;
      if (!in_comment) kept = count;
      continue;
    }
    break;
  }
  return in_comment ? 0 : kept;
}

}  // namespace

std::optional<std::string> hoist_definitions(const std::string& source, const std::string& program,
                                             const std::vector<std::string>& defines, const IncludeTree& tree,
                                             const std::vector<std::string>& fixed) {
  if (program.find_first_of("\"\\\n") != std::string::npos) return std::nullopt;
  // A fixed definition the headers use, whose value names a moved one (grid_size_x's
  // "ceil(n / block_size_x)"): the headers would see that one change.
  std::unordered_set<std::string> moved;
  for (const auto& d : defines) moved.insert(d.substr(2, d.find('=') == std::string::npos ? std::string::npos : d.find('=') - 2));
  for (const auto& f : fixed) {
    if (f.rfind("-D", 0) != 0) continue;
    const std::size_t eq = f.find('=');
    if (eq == std::string::npos || !tree.identifiers.count(f.substr(2, eq - 2))) continue;
    std::unordered_set<std::string> named;
    add_identifiers(f.substr(eq + 1), named);
    for (const auto& m : moved)
      if (named.count(m)) return std::nullopt;
  }
  std::string lines;
  for (const auto& d : defines) {
    if (d.rfind("-D", 0) != 0) return std::nullopt;
    const std::string body = d.substr(2);
    const std::size_t eq = body.find('=');
    const std::string name = body.substr(0, eq);
    if (name.empty() || tree.identifiers.count(name) || body.find('\n') != std::string::npos) return std::nullopt;
    lines += "#define " + name + " " + (eq == std::string::npos ? "1" : body.substr(eq + 1)) + "\n";
  }
  bool has_include = false;
  const std::size_t count = leading_lines(source, &has_include);
  if (!has_include || count == 0) return std::nullopt;
  std::size_t at = 0;
  for (std::size_t i = 0; i < count; ++i) {
    at = source.find('\n', at);
    if (at == std::string::npos) return std::nullopt;
    ++at;
  }
  // The first declaration ends the PCH's prefix: the definitions come after it.
  return source.substr(0, at) + "namespace gpuk_pch_end {}\n" + lines + "#line " + std::to_string(count + 1) +
         " \"" + program + "\"\n" + source.substr(at);
}

}  // namespace gpuk
