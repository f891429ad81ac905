// The recursive-descent parser of gpuk::Expr (the tree and its bounds: expr_tree.hpp).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "gpuk/error.hpp"
#include "kernel/expr_tree.hpp"

namespace gpuk {

namespace {

using namespace expr_tree;
using Node = Expr::Node;
using NodePtr = std::unique_ptr<Node>;

struct FnInfo {
  std::string_view name;
  Fn fn;
  std::size_t min_args;
  std::size_t max_args;
};

constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();
constexpr FnInfo kFunctions[] = {
    {"min", Fn::Min, 1, kUnbounded},   {"max", Fn::Max, 1, kUnbounded},
    {"ceil_div", Fn::CeilDiv, 2, 2},   {"pow2", Fn::Pow2, 1, 1},
    {"log2", Fn::Log2, 1, 1},
};
constexpr std::string_view kKnownFunctions = "min, max, ceil_div, pow2, log2";

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// ---------------------------------------------------------------------------------------------
// Lexer + parser

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {
    check_expr_size(text_);
    advance();
  }

  NodePtr parse_all() {
    if (tok_.kind == Tok::End) fail(tok_.begin, "empty expression");
    NodePtr root = parse_level(0);
    if (tok_.kind != Tok::End) unexpected();
    return root;
  }

 private:
  enum class Tok : std::uint8_t { End, Num, Ident, LParen, RParen, Comma, BinOp, Not, Bad };
  struct Token {
    Tok kind = Tok::End;
    Op op = Op::Add;
    std::size_t begin = 0, end = 0;
  };

  // Binary precedence levels, loosest first (C precedence).
  static constexpr int kLevels = 6;
  static bool in_level(int level, Op op) {
    switch (level) {
      case 0: return op == Op::Or;
      case 1: return op == Op::And;
      case 2: return op == Op::Eq || op == Op::Ne;
      case 3: return op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge;
      case 4: return op == Op::Add || op == Op::Sub;
      default: return op == Op::Mul || op == Op::Div || op == Op::Mod;
    }
  }

  [[noreturn]] void fail(std::size_t pos, const std::string& what) const {
    throw ExprSyntaxError(pos, what);
  }

  std::string_view tok_text() const { return text_.substr(tok_.begin, tok_.end - tok_.begin); }

  [[noreturn]] void unexpected() const {
    if (tok_.kind == Tok::End) fail(tok_.begin, "unexpected end of expression");
    std::string what = "unexpected " + quote_expr(tok_text());
    if (tok_.kind == Tok::Bad) {
      const char c = text_[tok_.begin];
      if (c == '=') what += " (did you mean '=='?)";
      if (c == '&') what += " (did you mean '&&'?)";
      if (c == '|') what += " (did you mean '||'?)";
    }
    fail(tok_.begin, what);
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

  void advance() {
    std::size_t p = pos_;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t' || text_[p] == '\n' ||
                                text_[p] == '\r' || text_[p] == '\f' || text_[p] == '\v')) {
      ++p;
    }
    tok_ = Token{};
    tok_.begin = p;
    if (p >= text_.size()) {
      tok_.kind = Tok::End;
      tok_.end = pos_ = p;
      return;
    }
    const char c = text_[p];
    const char next = p + 1 < text_.size() ? text_[p + 1] : '\0';
    std::size_t len = 1;
    auto op = [&](Op o, std::size_t n) {
      tok_.kind = Tok::BinOp;
      tok_.op = o;
      len = n;
    };
    if (is_digit(c)) {
      tok_.kind = Tok::Num;
      while (p + len < text_.size() && is_digit(text_[p + len])) ++len;
    } else if (is_ident_start(c)) {
      tok_.kind = Tok::Ident;
      while (p + len < text_.size() && is_ident_char(text_[p + len])) ++len;
    } else if (c == '(') {
      tok_.kind = Tok::LParen;
    } else if (c == ')') {
      tok_.kind = Tok::RParen;
    } else if (c == ',') {
      tok_.kind = Tok::Comma;
    } else if (c == '|' && next == '|') {
      op(Op::Or, 2);
    } else if (c == '&' && next == '&') {
      op(Op::And, 2);
    } else if (c == '=' && next == '=') {
      op(Op::Eq, 2);
    } else if (c == '!' && next == '=') {
      op(Op::Ne, 2);
    } else if (c == '!') {
      tok_.kind = Tok::Not;
    } else if (c == '<') {
      next == '=' ? op(Op::Le, 2) : op(Op::Lt, 1);
    } else if (c == '>') {
      next == '=' ? op(Op::Ge, 2) : op(Op::Gt, 1);
    } else if (c == '+') {
      op(Op::Add, 1);
    } else if (c == '-') {
      op(Op::Sub, 1);
    } else if (c == '*') {
      op(Op::Mul, 1);
    } else if (c == '/') {
      op(Op::Div, 1);
    } else if (c == '%') {
      op(Op::Mod, 1);
    } else {
      tok_.kind = Tok::Bad;
    }
    tok_.end = pos_ = p + len;
  }

  NodePtr parse_level(int level) {
    if (level == kLevels) return parse_unary();
    NodePtr first = parse_level(level + 1);
    if (tok_.kind != Tok::BinOp || !in_level(level, tok_.op)) return first;
    auto chain = std::make_unique<Node>();
    chain->kind = Node::Kind::Chain;
    chain->begin = first->begin;
    chain->kids.push_back(std::move(first));
    while (tok_.kind == Tok::BinOp && in_level(level, tok_.op)) {
      chain->ops.push_back(tok_.op);
      advance();
      chain->kids.push_back(parse_level(level + 1));
    }
    chain->end = chain->kids.back()->end;
    return chain;
  }

  NodePtr parse_unary() {
    // Every parenthesis, unary operator and call passes through here once more: this function's
    // depth is the nesting depth of the expression.
    const ExprDepthGuard guard(depth_, tok_.begin);
    const std::size_t begin = tok_.begin;
    const bool neg = tok_.kind == Tok::BinOp && tok_.op == Op::Sub;
    if (!neg && tok_.kind != Tok::Not) return parse_primary();
    advance();
    // "-<literal>" is the negative literal, so that -9223372036854775808 is expressible.
    if (neg && tok_.kind == Tok::Num) {
      NodePtr lit = parse_number(/*negative=*/true);
      lit->begin = begin;
      return lit;
    }
    auto node = std::make_unique<Node>();
    node->kind = neg ? Node::Kind::Neg : Node::Kind::Not;
    node->begin = begin;
    node->kids.push_back(parse_unary());
    node->end = node->kids.back()->end;
    return node;
  }

  NodePtr parse_number(bool negative) {
    const std::uint64_t limit =
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
    std::uint64_t v = 0;
    for (char c : tok_text()) {
      const auto d = static_cast<std::uint64_t>(c - '0');
      if (v > (limit - d) / 10) {
        fail(tok_.begin, "integer literal " + quote_expr(tok_text()) + " out of range");
      }
      v = v * 10 + d;
    }
    auto node = std::make_unique<Node>();
    node->kind = Node::Kind::Num;
    node->begin = tok_.begin;
    node->end = tok_.end;
    if (negative) {
      node->value = v == limit ? kInt64Min : -static_cast<std::int64_t>(v);
    } else {
      node->value = static_cast<std::int64_t>(v);
    }
    advance();
    return node;
  }

  NodePtr parse_primary() {
    switch (tok_.kind) {
      case Tok::Num:
        return parse_number(/*negative=*/false);
      case Tok::Ident: {
        auto node = std::make_unique<Node>();
        node->begin = tok_.begin;
        node->end = tok_.end;
        node->name = std::string(tok_text());
        advance();
        if (tok_.kind != Tok::LParen) {
          node->kind = Node::Kind::Name;
          return node;
        }
        return parse_call(std::move(node));
      }
      case Tok::LParen: {
        const std::size_t begin = tok_.begin;
        advance();
        NodePtr inner = parse_level(0);
        if (tok_.kind != Tok::RParen) fail(tok_.begin, "expected ')'");
        inner->begin = begin;  // spans include the parentheses, for error messages
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
    for (const FnInfo& f : kFunctions) {
      if (f.name == node->name) info = &f;
    }
    if (info == nullptr) {
      fail(node->begin, "unknown function " + quote_expr(node->name) + " (known: " +
                            std::string(kKnownFunctions) + ")");
    }
    node->kind = Node::Kind::Call;
    node->fn = info->fn;
    advance();  // '('
    if (tok_.kind != Tok::RParen) {
      for (;;) {
        node->kids.push_back(parse_level(0));
        if (tok_.kind == Tok::Comma) {
          advance();
          continue;
        }
        if (tok_.kind == Tok::RParen) break;
        if (tok_.kind == Tok::End) fail(tok_.begin, "expected ')'");
        fail(tok_.begin, "expected ',' or ')'");
      }
    }
    node->end = tok_.end;
    advance();  // ')'
    const std::size_t n = node->kids.size();
    if (n < info->min_args || n > info->max_args) {
      std::string want = info->min_args == info->max_args
                             ? plural(info->min_args, "argument")
                             : "at least " + plural(info->min_args, "argument");
      fail(node->begin, node->name + "() takes " + want + ", got " + std::to_string(n));
    }
    return node;
  }

  std::string_view text_;
  std::size_t pos_ = 0;  // where the next token starts scanning
  Token tok_;
  int depth_ = 0;
};

}  // namespace

Expr Expr::parse(std::string_view text) {
  Expr e;
  e.root_ = Parser(text).parse_all();
  e.text_ = std::string(text);
  return e;
}

}  // namespace gpuk
