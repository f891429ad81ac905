// A declared kernel's metric (docs/declared.md): a floating-point expression of `seconds`, the
// sizes and the parameters ("2 * m * n * k / seconds / 1e9"), parsed once into a tree when the
// declaration loads and evaluated after every run. Bounded as every gpuk expression is
// (expr_bounds.hpp): kMaxExprBytes of text, kMaxExprDepth levels of nesting, chains of + - or * /
// stored as one node walked in a loop.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpuk {

// Grammar: + - * / unary - +, ( ), numbers (digits, a fraction, an exponent: 1e9, 2.5, .5),
// names, and calls min(a, ...), max(a, ...), ceil_div(a, b).
class MetricExpr {
 public:
  // Throws ExprSyntaxError (a ConfigError, "column C: what") at the offending token's start.
  static MetricExpr parse(std::string_view text);

  // Throws ConfigError on a name missing from `values`, a division by zero, or a result that is
  // not finite.
  double eval(const std::map<std::string, double>& values) const;

  const std::string& text() const { return text_; }
  std::vector<std::string> identifiers() const;  // each distinct name, in order of appearance

  struct Node;

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

// MetricExpr::parse(expression).eval(values).
double eval_metric(const std::string& expression, const std::map<std::string, double>& values);

}  // namespace gpuk
