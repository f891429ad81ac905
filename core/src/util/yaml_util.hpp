// Helpers for reading YAML with errors that point at file:line:column (core-internal).
#pragma once
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gpuk/error.hpp"
#include "util/text.hpp"

namespace gpuk::yaml {

// yaml-cpp throws its own exceptions when a node is walked as the wrong kind (a mapping where a
// list was expected). The parsers' entry points catch any that slips past their own checks and
// turn it into the ConfigError they promise, at the place yaml-cpp names.
[[noreturn]] inline void throw_config_error(const std::filesystem::path& path, int line_offset,
                                            const YAML::Exception& e) {
  std::string where = path.string();
  if (!e.mark.is_null())
    where += ":" + std::to_string(e.mark.line + 1 + line_offset) + ":" + std::to_string(e.mark.column + 1);
  throw ConfigError(where + ": unexpected YAML structure (" + e.msg + ")");
}

// A YAML document and where it came from; line_offset shifts yaml-cpp's 0-based lines when the
// YAML is embedded in another file (a kernel's metadata block).
struct Source {
  std::filesystem::path path;
  int line_offset = 0;

  std::string where(const YAML::Mark& mark) const {
    if (mark.is_null()) return path.string();
    return path.string() + ":" + std::to_string(mark.line + 1 + line_offset) + ":" +
           std::to_string(mark.column + 1);
  }
  [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const {
    throw ConfigError(where(node.Mark()) + ": " + what);
  }
  int line(const YAML::Node& node) const { return node.Mark().line + 1 + line_offset; }

  // One YAML document, every mapping's keys distinct: yaml-cpp keeps the first of two equal keys
  // and reads only the first document, both silently, so a second `size:` or a config after
  // `---` would be ignored without a word.
  YAML::Node parse(const std::string& text) const {
    try {
      std::istringstream in(text);
      YAML::Parser parser(in);
      DuplicateKeys check(*this, text);
      for (int documents = 0; parser.HandleNextDocument(check);) {
        if (++documents == 2)
          throw ConfigError(where(check.document_start) +
                            ": a second YAML document ('---'); a config or metadata block holds one, so "
                            "put each config in its own file");
      }
      return YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      throw ConfigError(where(e.mark) + ": not valid YAML: " + e.msg);
    }
  }

  // Walks the parser's events (aliases are not expanded, so an anchor bomb costs its text's
  // length) and fails at the second of two equal keys in one mapping.
  class DuplicateKeys : public YAML::EventHandler {
   public:
    DuplicateKeys(const Source& src, const std::string& text) : src_(src), text_(text) {}
    YAML::Mark document_start = YAML::Mark::null_mark();
    void OnDocumentStart(const YAML::Mark& mark) override { document_start = mark; }
    void OnDocumentEnd() override { frames_.clear(); }
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(nullptr, mark); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(nullptr, mark); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
      unclosed_quote(mark);
      node(&value, mark);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
      node(nullptr, mark);
      frames_.push_back({false, true, {}});
    }
    void OnSequenceEnd() override { frames_.pop_back(); }
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
      node(nullptr, mark);
      frames_.push_back({true, true, {}});
    }
    void OnMapEnd() override { frames_.pop_back(); }

   private:
    struct Frame {
      bool map;
      bool expecting_key;
      std::map<std::string, YAML::Mark> keys;
    };
    void node(const std::string* scalar, const YAML::Mark& mark) {
      // yaml-cpp's document costs about 500 bytes a value: a 3.8 MB list of one-digit values
      // took 650-950 MB. Counted here, before it is built.
      if (++nodes_ > kMostValues)
        throw ConfigError(src_.where(mark) + ": more than " + std::to_string(kMostValues) +
                          " YAML values (keys, items, lists and mappings); a config or a kernel file's metadata "
                          "holds far fewer (a parameter's many values: range: or pow2:)");
      if (frames_.empty() || !frames_.back().map) return;
      Frame& f = frames_.back();
      if (f.expecting_key && scalar) {
        const auto [at, fresh] = f.keys.emplace(*scalar, mark);
        if (!fresh)
          throw ConfigError(src_.where(mark) + ": duplicate key '" + printable(*scalar) + "' (first at " +
                            src_.where(at->second) + "); yaml would keep only the first");
      }
      f.expecting_key = !f.expecting_key;
    }
    // yaml-cpp ends a quoted string that is never closed at the end of the text, without a
    // word: `family: "reduce` swallowed the rest of the file, and the error was a missing key.
    void unclosed_quote(const YAML::Mark& mark) const {
      if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text_.size()) return;
      const char quote = text_[static_cast<std::size_t>(mark.pos)];
      if (quote != '"' && quote != '\'') return;
      for (std::size_t i = static_cast<std::size_t>(mark.pos) + 1; i < text_.size(); ++i) {
        if (quote == '"' && text_[i] == '\\') ++i;  // an escape: the next character is not the end
        else if (text_[i] == quote && quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') ++i;  // ''
        else if (text_[i] == quote) return;
      }
      throw ConfigError(src_.where(mark) + ": the string opened here with " + std::string(1, quote) +
                        " is never closed (it runs to the end of the file)");
    }
    static constexpr std::size_t kMostValues = 200000;
    const Source& src_;
    const std::string& text_;
    std::vector<Frame> frames_;
    std::size_t nodes_ = 0;
  };

  // Every key of `map` must be in `allowed`.
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                  const std::string& what) const {
    if (!map.IsMap()) fail(map, what + " must be a mapping of key: value");
    for (const auto& item : map) {
      // `{[a]: 1}` or an anchored mapping as a key: yaml-cpp would throw its own exception.
      if (!item.first.IsScalar()) fail(item.first, what + " has a key that is not a plain name");
      const std::string key = item.first.Scalar();
      bool known = false;
      for (const auto& a : allowed) known = known || a == key;
      if (!known)
        fail(item.first, "unknown key '" + printable(key) + "' in " + what + did_you_mean(key, allowed) +
                             "; known keys: " + join(allowed));
    }
  }

  std::string string(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, what + " must be a single value");
    return node.Scalar();
  }

  std::int64_t integer(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, what + " must be an integer");
    const std::string& text = node.Scalar();
    std::size_t used = 0;
    long long value = 0;
    bool below = false;  // out of range below the smallest integer, not past the largest
    try {
      // Accept 2^28-style powers and digit groups with '_' for readability.
      std::string digits;
      for (char c : text)
        if (c != '_') digits += c;
      if (const auto caret = digits.find('^'); caret != std::string::npos) {
        const long long base = std::stoll(digits.substr(0, caret), &used);
        if (used != caret) throw std::invalid_argument(text);
        const long long exponent = std::stoll(digits.substr(caret + 1), &used);
        if (used != digits.size() - caret - 1 || exponent < 0) throw std::invalid_argument(text);
        if (base >= -1 && base <= 1) return exponent == 0 || (base == -1 && exponent % 2 == 0) ? 1 : base;
        // 2^63 and past are out of range (with the largest said), not "not an integer".
        below = base < 0 && exponent % 2 == 1;
        if (exponent > 63) throw std::out_of_range(text);
        value = 1;
        for (long long i = 0; i < exponent; ++i) {
          if (__builtin_mul_overflow(value, base, &value)) throw std::out_of_range(text);
        }
        return value;
      }
      // Decimal, or hexadecimal with 0x; never octal: `size: 010` is ten, as a reader expects.
      const std::size_t sign = !digits.empty() && (digits[0] == '-' || digits[0] == '+') ? 1 : 0;
      below = sign == 1 && digits[0] == '-';
      const bool hex = digits.size() > sign + 2 && digits[sign] == '0' && (digits[sign + 1] == 'x' || digits[sign + 1] == 'X');
      value = std::stoll(digits, &used, hex ? 16 : 10);
      if (used != digits.size()) throw std::invalid_argument(text);
    } catch (const std::out_of_range&) {
      fail(node, what + " is out of range: '" + text + "' is " +
                     (below ? "below the smallest integer, -2^63 (-9223372036854775808)"
                               : "past the largest integer, 2^63 - 1 (9223372036854775807)"));
    } catch (const std::invalid_argument&) {
      fail(node, what + " must be an integer, not '" + text + "'");
    }
    return value;
  }

  double number(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, what + " must be a number");
    const std::string& text = node.Scalar();
    try {
      std::size_t used = 0;
      const double value = std::stod(text, &used);
      if (used != text.size()) throw std::invalid_argument(text);
      return value;
    } catch (const std::exception&) {
      fail(node, what + " must be a number, not '" + text + "'");
    }
  }

  bool boolean(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, what + " must be true or false");
    const std::string& t = node.Scalar();
    if (t == "true" || t == "True" || t == "yes" || t == "on") return true;
    if (t == "false" || t == "False" || t == "no" || t == "off") return false;
    fail(node, what + " must be true or false, not '" + t + "'");
  }

  // A scalar or a sequence of scalars, as strings.
  std::vector<std::string> strings(const YAML::Node& node, const std::string& what) const {
    std::vector<std::string> out;
    if (node.IsScalar()) return {node.Scalar()};
    if (!node.IsSequence()) fail(node, what + " must be a list");
    for (const auto& item : node) out.push_back(string(item, what));
    return out;
  }
};

}  // namespace gpuk::yaml
