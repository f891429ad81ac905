// Small integer expressions from kernel metadata and configs: launch geometry
// ("min(ceil_div(n, BLOCK * UNROLL), sm_count * 8)") and constraints ("BLOCK * UNROLL <= 8192").
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuk {

// Grammar (C precedence): ||  &&  == != < <= > >=  + -  * / %  unary - !  ( )  integer literals
// identifiers  calls min(a, b, ...) max(a, b, ...) ceil_div(a, b) pow2(a) log2(a).
// Values are int64; comparisons and logic yield 0 or 1.
class Expr {
 public:
  // Throws gpuk::ConfigError "column C: <what>" (1-based) on a syntax error.
  static Expr parse(std::string_view text);

  // Looks identifiers up with `lookup`; throws gpuk::ConfigError on an unknown identifier,
  // division by zero, or overflow.
  using Lookup = std::function<std::optional<std::int64_t>(std::string_view)>;
  std::int64_t eval(const Lookup& lookup) const;

  const std::string& text() const { return text_; }
  std::vector<std::string> identifiers() const;  // each distinct identifier, in order of appearance

  struct Node;  // defined in expr.cpp

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

}  // namespace gpuk
