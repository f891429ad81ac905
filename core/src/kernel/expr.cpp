// The evaluator of gpuk::Expr, and the names an expression uses (the tree: expr_tree.hpp). All
// arithmetic is int64 with overflow checks.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>

#include "gpuk/error.hpp"
#include "kernel/expr_tree.hpp"

namespace gpuk {

namespace {

using namespace expr_tree;
using Node = Expr::Node;
using NodePtr = std::unique_ptr<Node>;

// ---------------------------------------------------------------------------------------------
// Evaluation

class Evaluator {
 public:
  Evaluator(const std::string& text, const Expr::Lookup& lookup) : text_(text), lookup_(lookup) {}

  std::int64_t eval(const Node& n) const {
    switch (n.kind) {
      case Node::Kind::Num:
        return n.value;
      case Node::Kind::Name: {
        std::optional<std::int64_t> v;
        if (lookup_) v = lookup_(n.name);
        if (!v) {
          throw ConfigError("unknown name " + quote_expr(n.name) + " in expression " + quote_expr(text_));
        }
        return *v;
      }
      case Node::Kind::Neg: {
        const std::int64_t v = eval(*n.kids[0]);
        if (v == kInt64Min) fail("overflow", n, n.end, " (-(" + std::to_string(v) + "))");
        return -v;
      }
      case Node::Kind::Not:
        return eval(*n.kids[0]) == 0 ? 1 : 0;
      case Node::Kind::Chain: {
        std::int64_t v = eval(*n.kids[0]);
        for (std::size_t i = 0; i < n.ops.size(); ++i) {
          const Node& rhs = *n.kids[i + 1];
          switch (n.ops[i]) {  // && and || short-circuit
            case Op::And: v = (v != 0 && eval(rhs) != 0) ? 1 : 0; break;
            case Op::Or: v = (v != 0 || eval(rhs) != 0) ? 1 : 0; break;
            default: v = apply(n.ops[i], v, eval(rhs), n, rhs.end);
          }
        }
        return v;
      }
      case Node::Kind::Call:
        return call(n);
    }
    return 0;
  }

 private:
  // "<head> in '<subexpression>'<detail> in expression '<text>'" (the last part only when the
  // subexpression is not the whole text).
  [[noreturn]] void fail(const std::string& head, const Node& n, std::size_t end,
                         const std::string& detail) const {
    const std::string_view sub = std::string_view(text_).substr(n.begin, end - n.begin);
    std::string msg = head + " in " + quote_expr(sub) + detail;
    if (sub.size() != text_.size()) msg += " in expression " + quote_expr(text_);
    throw ConfigError(msg);
  }

  std::int64_t apply(Op op, std::int64_t a, std::int64_t b, const Node& n, std::size_t end) const {
    std::int64_t r = 0;
    bool overflow = false;
    switch (op) {
      case Op::Eq: return a == b;
      case Op::Ne: return a != b;
      case Op::Lt: return a < b;
      case Op::Le: return a <= b;
      case Op::Gt: return a > b;
      case Op::Ge: return a >= b;
      case Op::Add: overflow = __builtin_add_overflow(a, b, &r); break;
      case Op::Sub: overflow = __builtin_sub_overflow(a, b, &r); break;
      case Op::Mul: overflow = __builtin_mul_overflow(a, b, &r); break;
      case Op::Div:
        if (b == 0) fail("division by zero", n, end, "");
        if (a == kInt64Min && b == -1) overflow = true;
        else r = a / b;
        break;
      case Op::Mod:
        if (b == 0) fail("modulo by zero", n, end, "");
        r = b == -1 ? 0 : a % b;  // INT64_MIN % -1 is 0 mathematically (and UB in C++)
        break;
      case Op::And:
      case Op::Or:
        break;  // handled by the caller
    }
    if (overflow) {
      fail("overflow", n, end,
           " (" + std::to_string(a) + " " + op_text(op) + " " + std::to_string(b) + ")");
    }
    return r;
  }

  std::int64_t call(const Node& n) const {
    switch (n.fn) {
      case Fn::Min:
      case Fn::Max: {
        std::int64_t v = eval(*n.kids[0]);
        for (std::size_t i = 1; i < n.kids.size(); ++i) {
          const std::int64_t x = eval(*n.kids[i]);
          v = n.fn == Fn::Min ? (x < v ? x : v) : (x > v ? x : v);
        }
        return v;
      }
      case Fn::CeilDiv: {
        const std::int64_t a = eval(*n.kids[0]);
        const std::int64_t b = eval(*n.kids[1]);
        if (b <= 0) {
          fail("non-positive divisor", n, n.end, " (divisor is " + std::to_string(b) + ")");
        }
        // True ceiling for any a; with b > 0 nothing here can overflow.
        const std::int64_t q = a / b;
        return (a % b != 0 && a > 0) ? q + 1 : q;
      }
      case Fn::Pow2: {
        const std::int64_t a = eval(*n.kids[0]);
        if (a < 0 || a > 62) {
          fail("argument out of range [0, 62]", n, n.end,
               " (argument is " + std::to_string(a) + ")");
        }
        return std::int64_t{1} << a;
      }
      case Fn::Log2: {
        const std::int64_t a = eval(*n.kids[0]);
        if (a <= 0) {
          fail("non-positive argument", n, n.end, " (argument is " + std::to_string(a) + ")");
        }
        return 63 - __builtin_clzll(static_cast<unsigned long long>(a));
      }
    }
    return 0;
  }

  const std::string& text_;
  const Expr::Lookup& lookup_;
};

void collect_identifiers(const Node& n, std::vector<std::string>& out,
                         std::unordered_set<std::string_view>& seen) {
  if (n.kind == Node::Kind::Name) {
    if (seen.insert(n.name).second) out.push_back(n.name);
    return;
  }
  for (const NodePtr& k : n.kids) collect_identifiers(*k, out, seen);
}

}  // namespace

std::int64_t Expr::eval(const Lookup& lookup) const {
  if (!root_) throw ConfigError("cannot evaluate an empty expression");
  return Evaluator(text_, lookup).eval(*root_);
}

std::vector<std::string> Expr::identifiers() const {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;  // views into the tree's names
  if (root_) collect_identifiers(*root_, out, seen);
  return out;
}

}  // namespace gpuk
