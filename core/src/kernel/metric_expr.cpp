// The parser and evaluator of a declared kernel's metric (metric_expr.hpp): a lexer with token
// spans, a recursive descent bounded by expr_bounds.hpp, and a tree evaluated once per run.
#include "kernel/metric_expr.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_set>

#include "gpuk/error.hpp"
#include "kernel/expr_bounds.hpp"
#include "util/text.hpp"

namespace gpuk {

struct MetricExpr::Node {
  enum class Kind : std::uint8_t { Num, Name, Neg, Chain, Call };
  Kind kind = Kind::Num;
  std::size_t begin = 0, end = 0;  // byte span in the text
  double value = 0;                // Num
  std::string name;                // Name, Call
  std::vector<std::unique_ptr<Node>> kids;  // Neg: 1; Chain: ops.size() + 1; Call: args
  std::string ops;                          // Chain: ops[i] ('+', '-', '*', '/') joins kids[..i] and kids[i + 1]
};

namespace {
// Named apart from the integer expressions' Parser, Evaluator and Node (expr_parse.cpp, expr.cpp),
// which a unity build compiles in the same translation unit.
namespace metric {

using Node = MetricExpr::Node;
using NodePtr = std::unique_ptr<Node>;

struct FnInfo {
  std::string_view name;
  std::size_t min_args, max_args;
};
constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();
constexpr FnInfo kFunctions[] = {{"min", 1, kUnbounded}, {"max", 1, kUnbounded}, {"ceil_div", 2, 2}};
constexpr std::string_view kKnownFunctions = "min, max, ceil_div";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {
    check_expr_size(text_);
    advance();
  }

  NodePtr parse_all() {
    if (tok_.kind == Tok::End) fail(tok_.begin, "empty expression");
    NodePtr root = parse_chain(false);
    if (tok_.kind != Tok::End) unexpected();
    return root;
  }

 private:
  enum class Tok : std::uint8_t { End, Num, Ident, LParen, RParen, Comma, Op, Bad };
  struct Token {
    Tok kind = Tok::End;
    std::size_t begin = 0, end = 0;
  };

  [[noreturn]] static void fail(std::size_t at, const std::string& what) { throw ExprSyntaxError(at, what); }
  std::string_view tok_text() const { return text_.substr(tok_.begin, tok_.end - tok_.begin); }
  char op() const { return tok_.kind == Tok::Op ? text_[tok_.begin] : '\0'; }

  [[noreturn]] void unexpected() const {
    if (tok_.kind == Tok::End) fail(tok_.begin, "unexpected end of expression");
    fail(tok_.begin, "unexpected " + quote_expr(tok_text()));
  }

  void advance() {
    std::size_t p = pos_;
    while (p < text_.size() && is_space(text_[p])) ++p;
    tok_ = Token{Tok::End, p, p};
    if (p >= text_.size()) return;
    const char c = text_[p];
    std::size_t e = p + 1;
    if (is_digit(c) || (c == '.' && p + 1 < text_.size() && is_digit(text_[p + 1]))) {
      // digits [. digits] [e [+-] digits]: no hex, no inf, no locale.
      tok_.kind = Tok::Num;
      e = p;
      while (e < text_.size() && is_digit(text_[e])) ++e;
      if (e < text_.size() && text_[e] == '.')
        for (++e; e < text_.size() && is_digit(text_[e]);) ++e;
      if (e < text_.size() && (text_[e] == 'e' || text_[e] == 'E')) {
        std::size_t x = e + 1;
        if (x < text_.size() && (text_[x] == '+' || text_[x] == '-')) ++x;
        if (x < text_.size() && is_digit(text_[x])) {
          while (x < text_.size() && is_digit(text_[x])) ++x;
          e = x;
        }
      }
    } else if (is_ident_start(c)) {
      tok_.kind = Tok::Ident;
      while (e < text_.size() && is_ident_char(text_[e])) ++e;
    } else if (c == '(') {
      tok_.kind = Tok::LParen;
    } else if (c == ')') {
      tok_.kind = Tok::RParen;
    } else if (c == ',') {
      tok_.kind = Tok::Comma;
    } else if (c == '+' || c == '-' || c == '*' || c == '/') {
      tok_.kind = Tok::Op;
    } else {
      tok_.kind = Tok::Bad;
    }
    tok_.end = pos_ = e;
  }

  // sum: product (('+' | '-') product)*;  product: unary (('*' | '/') unary)*
  NodePtr parse_chain(bool products) {
    NodePtr first = products ? parse_unary() : parse_chain(true);
    const auto joins = [&] { return products ? (op() == '*' || op() == '/') : (op() == '+' || op() == '-'); };
    if (!joins()) return first;
    auto chain = std::make_unique<Node>();
    chain->kind = Node::Kind::Chain;
    chain->begin = first->begin;
    chain->kids.push_back(std::move(first));
    while (joins()) {
      chain->ops += op();
      advance();
      chain->kids.push_back(products ? parse_unary() : parse_chain(true));
    }
    chain->end = chain->kids.back()->end;
    return chain;
  }

  NodePtr parse_unary() {
    // Every parenthesis, sign and call passes through here once more: this function's depth is
    // the nesting depth of the expression.
    const ExprDepthGuard guard(depth_, tok_.begin);
    if (op() != '-' && op() != '+') return parse_primary();
    const std::size_t begin = tok_.begin;
    const bool neg = op() == '-';
    advance();
    NodePtr inner = parse_unary();
    if (!neg) return inner;
    auto node = std::make_unique<Node>();
    node->kind = Node::Kind::Neg;
    node->begin = begin;
    node->end = inner->end;
    node->kids.push_back(std::move(inner));
    return node;
  }

  NodePtr parse_primary() {
    auto node = std::make_unique<Node>();
    node->begin = tok_.begin;
    node->end = tok_.end;
    switch (tok_.kind) {
      case Tok::Num: {
        const std::string_view t = tok_text();
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), node->value);
        if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(node->value))
          fail(tok_.begin, "number " + quote_expr(t) + " out of range");
        advance();
        return node;
      }
      case Tok::Ident:
        node->name = std::string(tok_text());
        advance();
        if (tok_.kind == Tok::LParen) return parse_call(std::move(node));
        node->kind = Node::Kind::Name;
        return node;
      case Tok::LParen: {
        advance();
        NodePtr inner = parse_chain(false);
        if (tok_.kind != Tok::RParen) fail(tok_.begin, "expected ')'");
        inner->begin = node->begin;
        inner->end = tok_.end;
        advance();
        return inner;
      }
      default:
        unexpected();
    }
  }

  NodePtr parse_call(NodePtr node) {
    const FnInfo* info = nullptr;
    for (const FnInfo& f : kFunctions)
      if (f.name == node->name) info = &f;
    if (!info)
      fail(node->begin, "unknown function " + quote_expr(node->name) + " (known: " + std::string(kKnownFunctions) + ")");
    node->kind = Node::Kind::Call;
    advance();  // '('
    if (tok_.kind != Tok::RParen) {
      for (;;) {
        node->kids.push_back(parse_chain(false));
        if (tok_.kind == Tok::Comma) {
          advance();
          continue;
        }
        if (tok_.kind == Tok::RParen) break;
        fail(tok_.begin, tok_.kind == Tok::End ? "expected ')'" : "expected ',' or ')'");
      }
    }
    node->end = tok_.end;
    advance();  // ')'
    const std::size_t n = node->kids.size();
    if (n < info->min_args || n > info->max_args) {
      const auto args = [](std::size_t k) { return std::to_string(k) + (k == 1 ? " argument" : " arguments"); };
      const std::string want = info->min_args == info->max_args ? args(info->min_args) : "at least " + args(info->min_args);
      fail(node->begin, node->name + "() takes " + want + ", got " + std::to_string(n));
    }
    return node;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  Token tok_;
  int depth_ = 0;
};

class Evaluator {
 public:
  Evaluator(const std::string& text, const std::map<std::string, double>& values) : text_(text), values_(values) {}

  double eval(const Node& n) const {
    switch (n.kind) {
      case Node::Kind::Num:
        return n.value;
      case Node::Kind::Name: {
        const auto it = values_.find(n.name);
        if (it == values_.end()) {
          std::vector<std::string> names;
          for (const auto& [name, v] : values_) names.push_back(name);
          throw ConfigError("'" + n.name + "' is not a size, a parameter or seconds" + did_you_mean(n.name, names));
        }
        return it->second;
      }
      case Node::Kind::Neg:
        return -eval(*n.kids[0]);
      case Node::Kind::Chain: {
        double v = eval(*n.kids[0]);
        for (std::size_t i = 0; i < n.ops.size(); ++i) {
          const Node& rhs = *n.kids[i + 1];
          const double b = eval(rhs);
          switch (n.ops[i]) {
            case '+': v += b; break;
            case '-': v -= b; break;
            case '*': v *= b; break;
            default:
              if (b == 0) fail("division by zero", n, rhs.end);
              v /= b;
          }
          if (!std::isfinite(v)) fail("a result that is not finite", n, rhs.end);
        }
        return v;
      }
      case Node::Kind::Call: {
        std::vector<double> args;
        for (const auto& kid : n.kids) args.push_back(eval(*kid));
        if (n.name == "min") return *std::min_element(args.begin(), args.end());
        if (n.name == "max") return *std::max_element(args.begin(), args.end());
        if (args[1] == 0) fail("division by zero", n, n.end);
        return std::ceil(args[0] / args[1]);
      }
    }
    return 0;
  }

 private:
  [[noreturn]] void fail(const std::string& head, const Node& n, std::size_t end) const {
    const std::string_view sub = std::string_view(text_).substr(n.begin, end - n.begin);
    std::string msg = head + " in " + quote_expr(sub);
    if (sub.size() != text_.size()) msg += " in metric " + quote_expr(text_);
    throw ConfigError(msg);
  }

  const std::string& text_;
  const std::map<std::string, double>& values_;
};

void collect(const Node& n, std::vector<std::string>& out, std::unordered_set<std::string>& seen) {
  if (n.kind == Node::Kind::Name && seen.insert(n.name).second) out.push_back(n.name);
  for (const auto& kid : n.kids) collect(*kid, out, seen);
}

}  // namespace metric
}  // namespace

MetricExpr MetricExpr::parse(std::string_view text) {
  MetricExpr e;
  e.root_ = metric::Parser(text).parse_all();
  e.text_ = std::string(text);
  return e;
}

double MetricExpr::eval(const std::map<std::string, double>& values) const {
  if (!root_) throw ConfigError("cannot evaluate an empty metric");
  return metric::Evaluator(text_, values).eval(*root_);
}

std::vector<std::string> MetricExpr::identifiers() const {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  if (root_) metric::collect(*root_, out, seen);
  return out;
}

double eval_metric(const std::string& expression, const std::map<std::string, double>& values) {
  return MetricExpr::parse(expression).eval(values);
}

}  // namespace gpuk
