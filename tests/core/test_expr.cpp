#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "gpuk/error.hpp"
#include "kernel/expr.hpp"
#include "kernel/expr_bounds.hpp"

using gpuk::ConfigError;
using gpuk::Expr;
using gpuk::kMaxExprBytes;

namespace {

using Vars = std::map<std::string, std::int64_t, std::less<>>;

Expr::Lookup lookup_in(const Vars& vars) {
  return [&vars](std::string_view name) -> std::optional<std::int64_t> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::int64_t ev(std::string_view text, const Vars& vars = {}) {
  return Expr::parse(text).eval(lookup_in(vars));
}

// The ConfigError message that parsing (or, with eval, evaluating) `text` throws.
std::string parse_error(std::string_view text) {
  try {
    Expr::parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string eval_error(std::string_view text, const Vars& vars = {}) {
  const Expr e = Expr::parse(text);  // must parse
  try {
    e.eval(lookup_in(vars));
  } catch (const ConfigError& err) {
    return err.what();
  }
  return "<no error>";
}

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

}  // namespace

TEST_CASE("expr: literals and arithmetic") {
  CHECK(ev("42") == 42);
  CHECK(ev("  7 ") == 7);
  CHECK(ev("007") == 7);
  CHECK(ev("9223372036854775807") == kMax);
  CHECK(ev("-9223372036854775808") == kMin);
  CHECK(ev("1 + 2") == 3);
  CHECK(ev("10 - 20") == -10);
  CHECK(ev("6 * 7") == 42);
  CHECK(ev("\t1\n+\r\n2") == 3);
}

TEST_CASE("expr: C precedence") {
  CHECK(ev("2 + 3 * 4") == 14);
  CHECK(ev("2 + 3 * 4 == 14") == 1);
  CHECK(ev("(2 + 3) * 4") == 20);
  CHECK(ev("1 + 10 % 4") == 3);
  CHECK(ev("1 + 2 < 4") == 1);         // + binds tighter than <
  CHECK(ev("1 == 2 < 3") == 1);        // relational binds tighter than equality: 1 == (2 < 3)
  CHECK(ev("1 < 2 == 2 < 3") == 1);
  CHECK(ev("1 || 0 && 0") == 1);       // && binds tighter than ||
  CHECK(ev("0 && 0 || 1") == 1);
  CHECK(ev("2 == 2 && 3 != 4") == 1);
  CHECK(ev("-2 * 3") == -6);
  CHECK(ev("-(2 + 3) * 2") == -10);
  CHECK(ev("!0 + 1") == 2);            // unary binds tighter than +
}

TEST_CASE("expr: left associativity") {
  CHECK(ev("10 - 3 - 2") == 5);
  CHECK(ev("100 / 10 / 5") == 2);
  CHECK(ev("100 % 7 % 3") == 2);
  CHECK(ev("2 * 9 / 4") == 4);  // (2 * 9) / 4, not 2 * (9 / 4)
  CHECK(ev("9 / 4 * 2") == 4);
  CHECK(ev("3 < 2 < 1") == 1);  // (3 < 2) < 1  ->  0 < 1
}

TEST_CASE("expr: division truncates toward zero, like C") {
  CHECK(ev("7 / 2") == 3);
  CHECK(ev("-7 / 2") == -3);
  CHECK(ev("7 / -2") == -3);
  CHECK(ev("-7 % 2") == -1);
  CHECK(ev("7 % -2") == 1);
}

TEST_CASE("expr: unary operators") {
  CHECK(ev("-5") == -5);
  CHECK(ev("- -5") == 5);
  CHECK(ev("--5") == 5);
  CHECK(ev("-(-5)") == 5);
  CHECK(ev("!0") == 1);
  CHECK(ev("!7") == 0);
  CHECK(ev("!!7") == 1);
  CHECK(ev("!-1") == 0);
  CHECK(ev("-x", {{"x", 3}}) == -3);
}

TEST_CASE("expr: comparisons and logic yield 0 or 1") {
  CHECK(ev("3 < 5") == 1);
  CHECK(ev("5 < 3") == 0);
  CHECK(ev("3 <= 3") == 1);
  CHECK(ev("3 > 3") == 0);
  CHECK(ev("3 >= 3") == 1);
  CHECK(ev("3 == 3") == 1);
  CHECK(ev("3 != 3") == 0);
  CHECK(ev("2 && 3") == 1);
  CHECK(ev("2 && 0") == 0);
  CHECK(ev("0 || 7") == 1);
  CHECK(ev("0 || 0") == 0);
}

TEST_CASE("expr: && and || short-circuit") {
  CHECK(ev("0 && (1 / 0)") == 0);
  CHECK(ev("1 || (1 / 0)") == 1);
  CHECK(ev("0 && UNKNOWN") == 0);
  CHECK(ev("1 || 9223372036854775807 + 1") == 1);
  CHECK(ev("1 && 0 && (1 / 0)") == 0);
  CHECK(ev("0 || 0 || 1 || (1 % 0)") == 1);
  CHECK_THROWS_AS(ev("1 && (1 / 0)"), ConfigError);
  CHECK_THROWS_AS(ev("0 || (1 / 0)"), ConfigError);
}

TEST_CASE("expr: identifiers are looked up at eval") {
  const Vars vars{{"BLOCK", 256}, {"UNROLL", 4}, {"vec", 4}, {"n", 1'000'000}, {"sm_count", 132},
                  {"_x1", 9}};
  CHECK(ev("BLOCK * UNROLL <= 8192", vars) == 1);
  CHECK(ev("BLOCK % 32 == 0", vars) == 1);
  CHECK(ev("_x1 + 1", vars) == 10);
  // ceil_div(1e6, 4096) = 245; sm_count * 4 = 528.
  CHECK(ev("min(ceil_div(n, BLOCK * UNROLL * vec), sm_count * 4)", vars) == 245);
  CHECK(ev("min(ceil_div(n, BLOCK * UNROLL * vec), sm_count * 4)",
           {{"BLOCK", 32}, {"UNROLL", 1}, {"vec", 1}, {"n", 1'000'000}, {"sm_count", 132}}) ==
        528);

  // The same parsed expression evaluates against different values.
  const Expr e = Expr::parse("BLOCK * 2");
  CHECK(e.eval([](std::string_view) { return std::optional<std::int64_t>(3); }) == 6);
  CHECK(e.eval([](std::string_view) { return std::optional<std::int64_t>(-4); }) == -8);
}

TEST_CASE("expr: unknown names") {
  CHECK(eval_error("FOO * 2", {{"BLOCK", 1}}) == "unknown name 'FOO' in expression 'FOO * 2'");
  // An empty Lookup knows no names.
  CHECK_THROWS_WITH_AS(Expr::parse("a").eval({}), "unknown name 'a' in expression 'a'",
                       ConfigError);
  CHECK(Expr::parse("1 + 2").eval({}) == 3);
  // Names are case-sensitive.
  CHECK(eval_error("block", {{"BLOCK", 1}}) == "unknown name 'block' in expression 'block'");
}

TEST_CASE("expr: functions") {
  CHECK(ev("min(3)") == 3);
  CHECK(ev("min(3, 1, 2)") == 1);
  CHECK(ev("max(3, 1, 2)") == 3);
  CHECK(ev("max(-3, -1, -2)") == -1);
  CHECK(ev("min(max(1, 5), 4)") == 4);
  CHECK(ev("min ( 2 , 1 )") == 1);

  CHECK(ev("ceil_div(10, 3)") == 4);
  CHECK(ev("ceil_div(9, 3)") == 3);
  CHECK(ev("ceil_div(0, 3)") == 0);
  CHECK(ev("ceil_div(1, 1)") == 1);
  CHECK(ev("ceil_div(9223372036854775807, 2)") == 4611686018427387904);  // no overflow
  CHECK(ev("ceil_div(-7, 2)") == -3);  // true ceiling of -3.5
  CHECK(ev("ceil_div(-8, 2)") == -4);
  CHECK(ev("ceil_div(-9223372036854775808, 1)") == kMin);

  CHECK(ev("pow2(0)") == 1);
  CHECK(ev("pow2(10)") == 1024);
  CHECK(ev("pow2(62)") == (std::int64_t{1} << 62));

  CHECK(ev("log2(1)") == 0);
  CHECK(ev("log2(1023)") == 9);
  CHECK(ev("log2(1024)") == 10);
  CHECK(ev("log2(9223372036854775807)") == 62);
  CHECK(ev("pow2(log2(1000))") == 512);
}

TEST_CASE("expr: function domain errors at eval") {
  CHECK(eval_error("ceil_div(5, 0)") ==
        "non-positive divisor in 'ceil_div(5, 0)' (divisor is 0)");
  CHECK(eval_error("2 * ceil_div(5, -1)") ==
        "non-positive divisor in 'ceil_div(5, -1)' (divisor is -1) in expression "
        "'2 * ceil_div(5, -1)'");
  CHECK(eval_error("pow2(63)") == "argument out of range [0, 62] in 'pow2(63)' (argument is 63)");
  CHECK_THROWS_AS(ev("pow2(-1)"), ConfigError);
  CHECK(eval_error("log2(0)") == "non-positive argument in 'log2(0)' (argument is 0)");
  CHECK_THROWS_AS(ev("log2(-8)"), ConfigError);
}

TEST_CASE("expr: division and modulo by zero") {
  CHECK(eval_error("1 / 0") == "division by zero in '1 / 0'");
  CHECK(eval_error("n / (d - 1) + 1", {{"n", 4}, {"d", 1}}) ==
        "division by zero in 'n / (d - 1)' in expression 'n / (d - 1) + 1'");
  CHECK(eval_error("5 % 0") == "modulo by zero in '5 % 0'");
}

TEST_CASE("expr: overflow is an error, never wraps") {
  CHECK(eval_error("9223372036854775807 + 1") ==
        "overflow in '9223372036854775807 + 1' (9223372036854775807 + 1)");
  CHECK(eval_error("BLOCK * UNROLL <= 8192", {{"BLOCK", kMax}, {"UNROLL", 2}}) ==
        "overflow in 'BLOCK * UNROLL' (9223372036854775807 * 2) in expression "
        "'BLOCK * UNROLL <= 8192'");
  CHECK(eval_error("-9223372036854775808 - 1").rfind("overflow in", 0) == 0);
  CHECK(eval_error("4611686018427387904 * 2").rfind("overflow in", 0) == 0);
  CHECK(eval_error("-x", {{"x", kMin}}) == "overflow in '-x' (-(-9223372036854775808))");
  CHECK(eval_error("-9223372036854775808 / -1").rfind("overflow in", 0) == 0);
  CHECK(eval_error("x / -1", {{"x", kMin}}).rfind("overflow in", 0) == 0);
  // The remainder of INT64_MIN / -1 is well-defined: 0.
  CHECK(ev("-9223372036854775808 % -1") == 0);
  // Just inside the range is fine.
  CHECK(ev("9223372036854775806 + 1") == kMax);
  CHECK(ev("-9223372036854775807 - 1") == kMin);
  CHECK(ev("3037000499 * 3037000499") == 9223372030926249001);
}

TEST_CASE("expr: literal out of range is a parse error") {
  CHECK(parse_error("9223372036854775808") ==
        "column 1: integer literal '9223372036854775808' out of range");
  CHECK(parse_error("1 + -9223372036854775809") ==
        "column 6: integer literal '9223372036854775809' out of range");
  CHECK(parse_error("99999999999999999999999999999999").find("out of range") != std::string::npos);
}

TEST_CASE("expr: syntax errors carry a 1-based column") {
  CHECK(parse_error("") == "column 1: empty expression");
  CHECK(parse_error("   ") == "column 4: empty expression");
  CHECK(parse_error("1 +") == "column 4: unexpected end of expression");
  CHECK(parse_error("(1 + 2") == "column 7: expected ')'");
  CHECK(parse_error("(1 + 2 3") == "column 8: expected ')'");
  CHECK(parse_error("1 2") == "column 3: unexpected '2'");
  CHECK(parse_error("1 + )") == "column 5: unexpected ')'");
  CHECK(parse_error("()") == "column 2: unexpected ')'");
  CHECK(parse_error("1 @ 2") == "column 3: unexpected '@'");
  CHECK(parse_error("a = 1") == "column 3: unexpected '=' (did you mean '=='?)");
  CHECK(parse_error("a & b") == "column 3: unexpected '&' (did you mean '&&'?)");
  CHECK(parse_error("a | b") == "column 3: unexpected '|' (did you mean '||'?)");
  CHECK(parse_error("12abc") == "column 3: unexpected 'abc'");
  CHECK(parse_error("1 + \x01") == "column 5: unexpected '\\x01'");
  CHECK(parse_error("min(1 2)") == "column 7: expected ',' or ')'");
  CHECK(parse_error("min(1,") == "column 7: unexpected end of expression");
  CHECK(parse_error("min(1,)") == "column 7: unexpected ')'");
  CHECK(parse_error("min(1") == "column 6: expected ')'");
  CHECK(parse_error("a b") == "column 3: unexpected 'b'");
  // The first problem in reading order is the one reported.
  CHECK(parse_error("1 + * @") == "column 5: unexpected '*'");
}

TEST_CASE("expr: unknown function and wrong argument count are parse errors") {
  CHECK(parse_error("foo(1)") ==
        "column 1: unknown function 'foo' (known: min, max, ceil_div, pow2, log2)");
  CHECK(parse_error("2 * bar(n)") ==
        "column 5: unknown function 'bar' (known: min, max, ceil_div, pow2, log2)");
  CHECK(parse_error("ceil_div(1)") == "column 1: ceil_div() takes 2 arguments, got 1");
  CHECK(parse_error("1 + ceil_div(1, 2, 3)") == "column 5: ceil_div() takes 2 arguments, got 3");
  CHECK(parse_error("pow2()") == "column 1: pow2() takes 1 argument, got 0");
  CHECK(parse_error("log2(1, 2)") == "column 1: log2() takes 1 argument, got 2");
  CHECK(parse_error("min()") == "column 1: min() takes at least 1 argument, got 0");
  CHECK(parse_error("max()") == "column 1: max() takes at least 1 argument, got 0");
}

TEST_CASE("expr: nesting depth is limited") {
  auto nested = [](int n) { return std::string(n, '(') + "1" + std::string(n, ')'); };
  CHECK(ev(nested(63)) == 1);  // 63 parentheses inside the top level: 64 levels
  CHECK(parse_error(nested(64)) == "column 65: expression nested too deeply (more than 64 levels, kMaxExprDepth)");
  CHECK(parse_error(nested(65)).find("nested too deeply") != std::string::npos);
  CHECK(parse_error(nested(20000)).find("nested too deeply") != std::string::npos);
  CHECK(parse_error(std::string(60000, '-') + "1").find("nested too deeply") != std::string::npos);
  CHECK(parse_error(std::string(60000, '!') + "1").find("nested too deeply") != std::string::npos);
  std::string calls;
  for (int i = 0; i < 1000; ++i) calls += "min(";
  CHECK(parse_error(calls + "1").find("nested too deeply") != std::string::npos);

  // Long flat chains are not nesting: they parse and evaluate without deep recursion.
  std::string sum = "0";
  for (int i = 0; i < 30000; ++i) sum += "+1";
  CHECK(ev(sum) == 30000);
  std::string args = "max(0";
  for (int i = 1; i <= 10000; ++i) args += "," + std::to_string(i);
  CHECK(ev(args + ")") == 10000);
}

TEST_CASE("expr: the text is at most kMaxExprBytes long, checked before parsing") {
  const std::string limit = std::to_string(kMaxExprBytes);
  CHECK(ev("1" + std::string(kMaxExprBytes - 1, ' ')) == 1);
  const std::string too_long = "column 1: expression of " + std::to_string(kMaxExprBytes + 1) +
                               " bytes, longer than the limit of " + limit + " bytes (kMaxExprBytes)";
  CHECK(parse_error("1" + std::string(kMaxExprBytes, ' ')) == too_long);
  CHECK(parse_error(std::string(100000, '(') + "1" + std::string(100000, ')')).find("longer than the limit") !=
        std::string::npos);
  CHECK(parse_error(std::string(100000, '-') + "1").find("longer than the limit") != std::string::npos);
  std::string sum = "0";
  for (int i = 0; i < 100000; ++i) sum += "+1";
  CHECK(parse_error(sum).find("longer than the limit") != std::string::npos);
}

TEST_CASE("expr: a long expression's error keeps its reason") {
  std::string sum = "1";
  for (int i = 0; i < 2000; ++i) sum += " + 1";
  const std::string e = parse_error(sum + " + )");
  CHECK(e.size() < 200);
  CHECK(e.find("unexpected ')'") != std::string::npos);
  try {
    (void)Expr::parse(sum + " / 0").eval(lookup_in({}));
    FAIL("no error");
  } catch (const ConfigError& error) {
    const std::string what = error.what();
    CHECK(what.size() < 300);
    CHECK(what.find("division by zero") == 0);
    CHECK(what.find("(8005 bytes)") != std::string::npos);
  }
}

TEST_CASE("expr: identifiers() lists distinct names in order of appearance") {
  using V = std::vector<std::string>;
  CHECK(Expr::parse("min(ceil_div(n, BLOCK * UNROLL * vec), sm_count * 4) + n").identifiers() ==
        V{"n", "BLOCK", "UNROLL", "vec", "sm_count"});
  CHECK(Expr::parse("1 + 2").identifiers() == V{});
  CHECK(Expr::parse("b + a + b + a").identifiers() == V{"b", "a"});
  CHECK(Expr::parse("0 && x").identifiers() == V{"x"});  // listed even if never evaluated
  CHECK(Expr::parse("min + 1").identifiers() == V{"min"});  // not a call: an ordinary name
}

TEST_CASE("expr: text() and copies") {
  const Expr a = Expr::parse(" BLOCK * 2 ");
  CHECK(a.text() == " BLOCK * 2 ");
  const Expr b = a;  // copies share the immutable tree
  Expr c = Expr::parse("0");
  c = b;
  const Vars vars{{"BLOCK", 64}};
  CHECK(b.text() == a.text());
  CHECK(b.eval(lookup_in(vars)) == 128);
  CHECK(c.eval(lookup_in(vars)) == 128);
  CHECK(c.identifiers() == std::vector<std::string>{"BLOCK"});
}

TEST_CASE("expr: random input only ever throws ConfigError") {
  static constexpr char kAlphabet[] = "0123456789abxyz_ ()+-*/%!=<>&|,@\x01\xff";
  static constexpr const char* kWords[] = {"min(", "max(", "ceil_div(", "pow2(", "log2(",
                                           "9223372036854775807", "-9223372036854775808"};
  std::mt19937 rng(12345);
  const Vars vars{{"a", kMax}, {"b", kMin}, {"x", 0}, {"y", -1}, {"z", 62}};
  int parsed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string text;
    const int len = static_cast<int>(rng() % 24);
    for (int i = 0; i < len; ++i) {
      if (rng() % 6 == 0) {
        text += kWords[rng() % std::size(kWords)];
      } else {
        text += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
      }
    }
    try {
      const Expr e = Expr::parse(text);
      ++parsed;
      (void)e.identifiers();
      (void)e.eval(lookup_in(vars));
    } catch (const ConfigError&) {
    }
  }
  CHECK(parsed > 0);
}
