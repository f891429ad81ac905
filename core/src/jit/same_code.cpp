// Variants that compile to the same machine code (jit/same_code.hpp).
#include "jit/same_code.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>
#include <set>
#include <sstream>

#include "util/regular_file.hpp"

namespace gpuk {

namespace fs = std::filesystem;

std::vector<std::string> template_arguments(const std::string& expression) {
  std::vector<std::string> out;
  const std::size_t open = expression.find('<');
  if (open == std::string::npos) return out;
  int depth = 0;
  std::string current;
  for (std::size_t i = open + 1; i < expression.size(); ++i) {
    const char c = expression[i];
    if (c == '<' || c == '(') ++depth;
    if ((c == '>' || c == ')') && depth-- == 0) break;
    if (c == ',' && depth == 0) {
      out.push_back(current);
      current.clear();
      continue;
    }
    if (!(current.empty() && c == ' ')) current += c;
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The source with comments blanked (newlines kept), and string and character literals too unless
// `keep_strings` (the #include lines need theirs).
std::string strip(const std::string& s, bool keep_strings) {
  std::string out = s;
  std::size_t i = 0;
  const auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  while (i < s.size()) {
    if (s.compare(i, 2, "//") == 0) {
      const std::size_t end = std::min(s.find('\n', i), s.size());
      blank(i, end);
      i = end;
    } else if (s.compare(i, 2, "/*") == 0) {
      const std::size_t close = s.find("*/", i + 2);
      const std::size_t end = close == std::string::npos ? s.size() : close + 2;
      blank(i, end);
      i = end;
    } else if (s[i] == '"' || (s[i] == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(s[i - 1]))))) {
      // A literal (a ' after a hex digit is a digit separator: 1'000).
      const char quote = s[i];
      std::size_t k = i + 1;
      while (k < s.size() && s[k] != quote && s[k] != '\n') k += s[k] == '\\' ? 2 : 1;
      const std::size_t end = std::min(k + 1, s.size());
      if (!keep_strings) blank(i + 1, end - 1);
      i = end;
    } else {
      ++i;
    }
  }
  return out;
}

struct Token {
  std::string text;  // an identifier, a number, or one punctuation character
  bool ident = false;
};

std::vector<Token> tokens_of(const std::string& code) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < code.size()) {
    const char c = code[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (ident_char(c)) {
      std::size_t k = i;
      while (k < code.size() && ident_char(code[k])) ++k;
      const bool number = std::isdigit(static_cast<unsigned char>(c));
      if (number)  // 1.5e+3f, 0x1p-2: one token, so that no identifier comes out of it
        while (k < code.size() && (ident_char(code[k]) || code[k] == '.' ||
                                   ((code[k] == '+' || code[k] == '-') && std::strchr("eEpP", code[k - 1]))))
          ++k;
      out.push_back({code.substr(i, k - i), !number});
      i = k;
    } else {
      out.push_back({std::string(1, c), false});
      ++i;
    }
  }
  return out;
}

// Every identifier in the #define lines of `code` (continuation lines joined).
void define_identifiers(const std::string& code, std::set<std::string>& out) {
  static const std::regex define(R"(^\s*#\s*define\b)");
  std::istringstream lines(code);
  std::string line;
  while (std::getline(lines, line)) {
    if (!std::regex_search(line, define)) continue;
    std::string whole = line;
    while (!whole.empty() && whole.back() == '\\' && std::getline(lines, line)) whole.back() = ' ', whole += line;
    for (const Token& t : tokens_of(whole))
      if (t.ident) out.insert(t.text);
  }
}

// The files the code includes, recursively, as NVRTC finds them: a quoted name next to the file
// that includes it, then on the include path; an angled one on the include path. False when one
// is not found (NVRTC's own headers, a missing one): then nothing is known of its macros.
bool read_includes(const std::string& code, const fs::path& dir, const std::vector<fs::path>& include_dirs,
                   std::set<fs::path>& seen, std::vector<std::string>& texts) {
  static const std::regex include(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::istringstream lines(code);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, include)) continue;
    std::vector<fs::path> candidates;
    if (m[1].str() == "\"") candidates.push_back(dir / m[2].str());
    for (const auto& inc : include_dirs) candidates.push_back(inc / m[2].str());
    bool found = false;
    for (const auto& candidate : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(candidate, ec)) continue;
      found = true;
      const fs::path canonical = fs::weakly_canonical(candidate, ec);
      if (!seen.insert(canonical).second) break;
      const RegularFile header = read_regular_file(canonical, kMaxKernelFileBytes);
      if (header.status != RegularFile::Status::ok) return false;
      const std::string text = strip(header.text, true);
      texts.push_back(text);
      if (!read_includes(text, canonical.parent_path(), include_dirs, seen, texts)) return false;
      break;
    }
    if (!found) return false;
  }
  return true;
}

// Index of the token that closes the bracket opened at `open` (`<` counts only outside
// parentheses), or tokens.size().
std::size_t closing(const std::vector<Token>& t, std::size_t open) {
  const std::string o = t[open].text;
  const std::string c = o == "(" ? ")" : o == "{" ? "}" : ">";
  int depth = 0, parens = 0;
  for (std::size_t i = open; i < t.size(); ++i) {
    const std::string& x = t[i].text;
    if (o == "<") {
      if (x == "(") ++parens;
      if (x == ")") --parens;
      if (parens > 0) continue;
    }
    if (x == o) ++depth;
    if (x == c && --depth == 0) return i;
  }
  return t.size();
}

}  // namespace

SameCode::SameCode(const KernelFile& file) : file_(file) {
  const std::string with_strings = strip(file.source, true);
  std::vector<std::string> headers;
  std::set<fs::path> seen;
  if (!read_includes(with_strings, file.path.parent_path(), file.include_dirs, seen, headers)) return;
  std::set<std::string> macro_words;
  define_identifiers(with_strings, macro_words);
  std::set<std::string> header_words;
  for (const auto& h : headers) {
    define_identifiers(h, macro_words);
    for (const Token& t : tokens_of(strip(h, false)))
      if (t.ident) header_words.insert(t.text);
  }
  const std::vector<Token> t = tokens_of(strip(file.source, false));
  for (const char* names_itself : {"__func__", "__FUNCTION__", "__PRETTY_FUNCTION__", "assert"}) {
    if (header_words.count(names_itself)) return;
    for (const Token& k : t)
      if (k.text == names_itself) return;
  }
  std::set<std::string> entries;
  for (const auto& l : file.launches) entries.insert(l.entry);
  for (const auto& name : entries) {
    Entry entry{name, std::vector<bool>(file.params.size(), false)};
    entries_.push_back(entry);
    if (header_words.count(name)) continue;
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i].text == name) at.push_back(i);
    if (at.size() != 1) continue;  // declared twice, specialised, or named elsewhere
    const std::size_t k = at[0];
    // The template header right before the name: `template <...>`, then no ; { or } up to it.
    std::size_t tmpl = k;
    while (tmpl > 0 && t[tmpl - 1].text != "template" && t[tmpl - 1].text != ";" && t[tmpl - 1].text != "{" &&
           t[tmpl - 1].text != "}")
      --tmpl;
    if (tmpl == 0 || t[tmpl - 1].text != "template" || tmpl >= k || t[tmpl].text != "<") continue;
    if (tmpl >= 2 && (t[tmpl - 2].text == "<" || t[tmpl - 2].text == ",")) continue;  // a template template parameter's
    const std::size_t tmpl_end = closing(t, tmpl);
    if (tmpl_end >= k) continue;
    // The template's parameters: each one's name (none for an unnamed one, which nothing can use).
    std::vector<std::string> params;
    bool pack = false;
    {
      std::string last;
      bool after_default = false;
      int depth = 0;
      for (std::size_t i = tmpl + 1; i <= tmpl_end; ++i) {
        const std::string& x = t[i].text;
        if (i == tmpl_end || (x == "," && depth == 0)) {
          params.push_back(last);
          last.clear();
          after_default = false;
          continue;
        }
        if (x == "<" || x == "(") ++depth;
        if (x == ">" || x == ")") --depth;
        if (x == "." && i + 2 < t.size() && t[i + 1].text == "." && t[i + 2].text == ".") pack = true;
        if (x == "=" && depth == 0) after_default = true;
        if (t[i].ident && !after_default && depth == 0) last = x;
      }
    }
    if (pack || params.size() < file.params.size()) continue;
    if (k + 1 >= t.size() || t[k + 1].text != "(") continue;
    const std::size_t args_end = closing(t, k + 1);
    std::size_t body = args_end + 1;
    while (body < t.size() && t[body].text != "{" && t[body].text != ";") ++body;
    if (body >= t.size() || t[body].text != "{") continue;  // a declaration only
    const std::size_t body_end = closing(t, body);
    if (body_end >= t.size()) continue;
    // What the entry's code names: its declarator (__launch_bounds__) and body.
    std::set<std::string> used;
    for (std::size_t i = tmpl_end + 1; i <= body_end; ++i)
      if (t[i].ident) used.insert(t[i].text);
    const std::size_t leading = params.size() - file.params.size();
    for (std::size_t p = 0; p < file.params.size(); ++p) {
      const std::string& own = params[leading + p];
      entries_.back().unused[p] = own.empty() || (!used.count(own) && !macro_words.count(own));
    }
    entries_.back().template_params = params.size();
  }
}

std::vector<std::string> SameCode::unused(const std::string& entry) const {
  std::vector<std::string> out;
  for (const auto& e : entries_)
    if (e.name == entry)
      for (std::size_t p = 0; p < e.unused.size(); ++p)
        if (e.unused[p]) out.push_back(file_.params[p].name);
  return out;
}

std::string SameCode::canonical(const std::string& name_expression) const {
  const std::size_t open = name_expression.find('<');
  if (open == std::string::npos) return name_expression;
  const std::string entry = name_expression.substr(0, open);
  const auto e = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& x) { return x.name == entry; });
  if (e == entries_.end()) return name_expression;
  std::vector<std::string> args = template_arguments(name_expression);
  if (args.size() != e->template_params || args.size() < file_.params.size()) return name_expression;
  const std::size_t leading = args.size() - file_.params.size();
  bool changed = false;
  for (std::size_t p = 0; p < file_.params.size(); ++p) {
    if (!e->unused[p]) continue;
    const std::string value = std::to_string(file_.params[p].default_value);
    if (args[leading + p] != value) args[leading + p] = value, changed = true;
  }
  if (!changed) return name_expression;
  std::string out = entry + "<";
  for (std::size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
  return out + ">";
}

SharedNames shared_names(const SameCode& same, const std::vector<std::string>& names) {
  SharedNames s;
  for (const auto& name : names) {
    const std::string c = same.canonical(name);
    if (c != name) s.renamed = true;
    const auto it = std::find(s.compile.begin(), s.compile.end(), c);
    s.at.push_back(static_cast<std::size_t>(it - s.compile.begin()));
    if (it == s.compile.end()) s.compile.push_back(c);
  }
  return s;
}

}  // namespace gpuk
