// Recursive-descent parser and evaluator for gpuk::Expr.
//
// Safety on untrusted text: nesting (parentheses, unary operators, calls) is limited to
// kMaxDepth levels, and chains of one binary precedence level ("1 + 2 + ... + n") are stored as
// one n-ary node evaluated in a loop, so the tree depth, and with it the recursion of parsing,
// evaluation, traversal and destruction, stays bounded whatever the input length.
// All arithmetic is int64 with overflow checks.
#include "kernel/expr.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_set>

#include "gpuk/error.hpp"

namespace gpuk {

namespace {

constexpr int kMaxDepth = 64;
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

enum class Op : std::uint8_t { Or, And, Eq, Ne, Lt, Le, Gt, Ge, Add, Sub, Mul, Div, Mod };
enum class Fn : std::uint8_t { Min, Max, CeilDiv, Pow2, Log2 };

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

const char* op_text(Op op) {
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

// Quotes a piece of (possibly hostile) input for an error message: printable ASCII as is,
// anything else as \xNN.
std::string quoted(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  out += "'";
  return out;
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

struct Expr::Node {
  enum class Kind : std::uint8_t { Num, Name, Neg, Not, Chain, Call };
  Kind kind = Kind::Num;
  std::size_t begin = 0, end = 0;  // byte span in the expression text (parentheses included)
  std::int64_t value = 0;          // Num
  std::string name;                // Name, Call
  Fn fn = Fn::Min;                 // Call
  std::vector<std::unique_ptr<Node>> kids;  // Neg/Not: 1; Chain: ops.size() + 1; Call: args
  std::vector<Op> ops;                      // Chain: ops[i] joins (kids[0..i]) and kids[i + 1]
};

namespace {

using Node = Expr::Node;
using NodePtr = std::unique_ptr<Node>;

// ---------------------------------------------------------------------------------------------
// Lexer + parser

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) { advance(); }

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
    throw ConfigError("column " + std::to_string(pos + 1) + ": " + what);
  }

  std::string_view tok_text() const { return text_.substr(tok_.begin, tok_.end - tok_.begin); }

  [[noreturn]] void unexpected() const {
    if (tok_.kind == Tok::End) fail(tok_.begin, "unexpected end of expression");
    std::string what = "unexpected " + quoted(tok_text());
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

  // Counts nesting: every parenthesis, unary operator and call passes through parse_unary once
  // more, so parse_unary's depth is the nesting depth of the expression.
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) {
        p.fail(p.tok_.begin,
               "expression nested too deeply (more than " + std::to_string(kMaxDepth) + " levels)");
      }
    }
    ~DepthGuard() { --p.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
  };

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
    DepthGuard guard(*this);
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
        fail(tok_.begin, "integer literal " + quoted(tok_text()) + " out of range");
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
      fail(node->begin, "unknown function " + quoted(node->name) + " (known: " +
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
          throw ConfigError("unknown name " + quoted(n.name) + " in expression " + quoted(text_));
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
    std::string msg = head + " in " + quoted(sub) + detail;
    if (sub.size() != text_.size()) msg += " in expression " + quoted(text_);
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

Expr Expr::parse(std::string_view text) {
  Expr e;
  e.root_ = Parser(text).parse_all();
  e.text_ = std::string(text);
  return e;
}

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
