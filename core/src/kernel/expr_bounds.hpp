// The bounds every expression language of gpuk shares (the integer Expr of kernel metadata and
// configs, the floating-point metrics of declared kernels), and the one error type their parsers
// throw, so that a caller can fold the column into the file:line:col of the YAML that holds it.
//
// Expressions come from files anyone may hand gpuk (a kernel directory, a config): the size is
// checked before any parsing, and the nesting depth in the one function every nesting passes
// through, so that no input can exhaust the stack or make loading super-linear.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "gpuk/error.hpp"

namespace gpuk {

// Nesting levels (parentheses, unary operators, calls) an expression may have.
inline constexpr int kMaxExprDepth = 64;
// Bytes an expression's text may have.
inline constexpr std::size_t kMaxExprBytes = 64 * 1024;

// A syntax error at `offset` (0-based) in an expression's text; what() reads "column C: reason".
class ExprSyntaxError : public ConfigError {
 public:
  ExprSyntaxError(std::size_t offset, const std::string& reason)
      : ConfigError("column " + std::to_string(offset + 1) + ": " + reason), offset_(offset), reason_(reason) {}
  std::size_t offset() const { return offset_; }
  const std::string& reason() const { return reason_; }

 private:
  std::size_t offset_;
  std::string reason_;
};

// Throws ExprSyntaxError at column 1 when `text` is longer than kMaxExprBytes.
inline void check_expr_size(std::string_view text) {
  if (text.size() > kMaxExprBytes)
    throw ExprSyntaxError(0, "expression of " + std::to_string(text.size()) + " bytes, longer than the limit of " +
                                 std::to_string(kMaxExprBytes) + " bytes (kMaxExprBytes)");
}

// The nesting guard: one per level, in the function every nesting passes through.
class ExprDepthGuard {
 public:
  ExprDepthGuard(int& depth, std::size_t offset) : depth_(depth) {
    if (++depth_ > kMaxExprDepth) {
      --depth_;
      throw ExprSyntaxError(offset, "expression nested too deeply (more than " + std::to_string(kMaxExprDepth) +
                                        " levels, kMaxExprDepth)");
    }
  }
  ~ExprDepthGuard() { --depth_; }
  ExprDepthGuard(const ExprDepthGuard&) = delete;
  ExprDepthGuard& operator=(const ExprDepthGuard&) = delete;

 private:
  int& depth_;
};

// A piece of (possibly hostile) expression text for a message, in quotes: whole when short, else
// its start and its length, so that the reason after it stays readable; printable ASCII as is,
// anything else as \xNN.
inline std::string quote_expr(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  static constexpr std::size_t kShown = 80;
  std::string out = "'";
  for (unsigned char c : s.substr(0, s.size() > kShown + 20 ? kShown : s.size())) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  if (s.size() > kShown + 20) out += "...' (" + std::to_string(s.size()) + " bytes)";
  else out += "'";
  return out;
}

}  // namespace gpuk
