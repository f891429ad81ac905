// libFuzzer: the two expression languages (the integer Expr of metadata and configs, a declared
// kernel's floating-point metric) parsed and evaluated. Any input must end in a value or a
// gpuk::Error: depth and size are bounded before recursion (kernel/expr_bounds.hpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "gpuk/error.hpp"
#include "kernel/expr.hpp"
#include "kernel/metric_expr.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuk::MetricExpr m = gpuk::MetricExpr::parse(text);
    (void)m.identifiers();
    (void)m.eval({{"n", 1000}, {"m", 3}, {"seconds", 1e-3}, {"zero", 0}});
  } catch (const gpuk::Error&) {
  }
  try {
    const gpuk::Expr e = gpuk::Expr::parse(text);
    (void)e.identifiers();
    (void)e.eval([](std::string_view name) -> std::optional<std::int64_t> {
      if (name == "n") return std::int64_t{1} << 31;
      if (name == "zero") return 0;
      return std::nullopt;
    });
  } catch (const gpuk::Error&) {
  }
  return 0;
}
