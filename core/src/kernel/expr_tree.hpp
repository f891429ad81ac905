// The tree of a gpuk::Expr (core-internal): what the parser (expr_parse.cpp) builds and the
// evaluator (expr.cpp) walks.
//
// Safety on untrusted text (the bounds: expr_bounds.hpp): the text is at most kMaxExprBytes long,
// nesting (parentheses, unary operators, calls) is limited to kMaxExprDepth levels, and chains of one binary precedence level ("1 + 2 + ... + n") are stored as
// one n-ary node evaluated in a loop, so the tree depth, and with it the recursion of parsing,
// evaluation, traversal and destruction, stays bounded whatever the input length.
// All arithmetic is int64 with overflow checks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/expr.hpp"
#include "kernel/expr_bounds.hpp"

namespace gpuk {

namespace expr_tree {

inline constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

enum class Op : std::uint8_t { Or, And, Eq, Ne, Lt, Le, Gt, Ge, Add, Sub, Mul, Div, Mod };
enum class Fn : std::uint8_t { Min, Max, CeilDiv, Pow2, Log2 };

inline const char* op_text(Op op) {
  switch (op) {
    case Op::Or: return "||";
    case Op::And: return "&&";
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
    case Op::Lt: return "<";
    case Op::Le: return "<=";
    case Op::Gt: return ">";
    case Op::Ge: return ">=";
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Mod: return "%";
  }
  return "?";
}

}  // namespace expr_tree

struct Expr::Node {
  enum class Kind : std::uint8_t { Num, Name, Neg, Not, Chain, Call };
  Kind kind = Kind::Num;
  std::size_t begin = 0, end = 0;  // byte span in the expression text (parentheses included)
  std::int64_t value = 0;          // Num
  std::string name;                // Name, Call
  expr_tree::Fn fn = expr_tree::Fn::Min;                 // Call
  std::vector<std::unique_ptr<Node>> kids;  // Neg/Not: 1; Chain: ops.size() + 1; Call: args
  std::vector<expr_tree::Op> ops;                      // Chain: ops[i] joins (kids[0..i]) and kids[i + 1]
};

}  // namespace gpuk
