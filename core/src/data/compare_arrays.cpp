// Output comparison by atol/rtol, ulps or exactly (data/compare_arrays.hpp).
#include "data/compare_arrays.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <span>
#include <sstream>
#include <thread>
#include <type_traits>
#include <vector>

#include "gpuk/error.hpp"
#include "util/host.hpp"

namespace gpuk {

namespace {

std::string number(double v) {
  std::ostringstream out;
  out << std::setprecision(3) << v;
  return out.str();
}

template <class T> std::string show(T v) {
  std::ostringstream out;
  if constexpr (std::is_floating_point_v<T>) out << std::setprecision(std::numeric_limits<T>::max_digits10);
  out << +v;
  return out.str();
}

// The distance in units in the last place between two finite floats of the same type: their
// bits mapped onto one ordered integer line.
template <class T> std::uint64_t ulp_distance(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  Bits ia, ib;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  const auto ordered = [](Bits i) -> std::int64_t {
    return i < 0 ? static_cast<std::int64_t>(std::numeric_limits<Bits>::min()) - i : i;
  };
  const std::int64_t da = ordered(ia), db = ordered(ib);
  return da > db ? static_cast<std::uint64_t>(da - db) : static_cast<std::uint64_t>(db - da);
}

// CompareRule::sum: the totals of both arrays, compared by the rule as one element of type
// double (integers: 64-bit totals, exact unless a tolerance is given).
template <class T> ArrayComparison compare_totals(std::span<const T> got, std::span<const T> want, const CompareRule& rule) {
  using Sum = std::conditional_t<std::is_floating_point_v<T>, double,
                                 std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;
  Sum g = 0, w = 0;
  for (const T v : got) g += static_cast<Sum>(v);
  for (const T v : want) w += static_cast<Sum>(v);
  HostArray got_total(dtype_of<Sum>(), 1), want_total(dtype_of<Sum>(), 1);
  got_total.as<Sum>()[0] = g;
  want_total.as<Sum>()[0] = w;
  CompareRule one = rule;
  one.sum = false;
  ArrayComparison c = compare_arrays(got_total, want_total, one);
  c.size = got.size();
  c.total = true;
  c.got = show(g);
  c.expected = show(w);
  return c;
}

// What one share of the elements gave: compare_typed's loop over [begin, end).
struct Share {
  std::uint64_t mismatches = 0;
  std::size_t first_bad = 0;  // valid when mismatches > 0
  double max_abs = 0, max_rel = 0;
};

template <class T>
Share compare_share(std::span<const T> got, std::span<const T> want, std::size_t begin, std::size_t end,
                    const ElementRule& rule) {
  const bool exact = rule.exact;
  const double atol = rule.atol, rtol = rule.rtol;
  constexpr bool is_float = std::is_floating_point_v<T>;
  Share c;
  for (std::size_t i = begin; i < end; ++i) {
    const T g = got[i], w = want[i];
    bool ok;
    if constexpr (is_float) {
      if (std::isnan(w) || std::isnan(g)) {
        ok = std::isnan(w) && std::isnan(g);
      } else {
        const double abs_err = std::fabs(static_cast<double>(g) - static_cast<double>(w));
        const double rel_err = w != 0 ? abs_err / std::fabs(static_cast<double>(w)) : (abs_err == 0 ? 0 : INFINITY);
        if (std::isfinite(abs_err)) c.max_abs = std::max(c.max_abs, abs_err);
        c.max_rel = std::max(c.max_rel, rel_err);
        if (std::isinf(w) || std::isinf(g)) ok = g == w;
        else if (rule.ulps) ok = ulp_distance(g, w) <= static_cast<std::uint64_t>(*rule.ulps);
        else ok = abs_err <= atol + rtol * std::fabs(static_cast<double>(w));
      }
    } else {
      const double abs_err = std::fabs(static_cast<double>(g) - static_cast<double>(w));
      c.max_abs = std::max(c.max_abs, abs_err);
      if (w != 0) c.max_rel = std::max(c.max_rel, abs_err / std::fabs(static_cast<double>(w)));
      else if (abs_err != 0) c.max_rel = INFINITY;
      ok = exact ? g == w : abs_err <= atol + rtol * std::fabs(static_cast<double>(w));
    }
    if (!ok && c.mismatches++ == 0) c.first_bad = i;
  }
  return c;
}

template <class T> ArrayComparison compare_typed(const HostArray& got_array, const HostArray& want_array,
                                                  const CompareRule& rule) {
  if (rule.sum) return compare_totals<T>(got_array.as<T>(), want_array.as<T>(), rule);
  ArrayComparison c;
  const auto got = got_array.as<T>();
  const auto want = want_array.as<T>();
  c.size = got.size();
  const ElementRule element = element_rule(dtype_of<T>(), rule);
  c.rule = element.text;
  // The same bytes pass every rule with no error (a NaN matches its NaN): no loop.
  if (got.empty() || equal_bytes(got.data(), want.data(), got.size_bytes())) {
    c.passed = true;
    return c;
  }
  // A large array in shares on up to cpu_threads() threads (one share below 16 MiB), combined in
  // order: the same counts, maxima and first difference as one loop.
  constexpr std::size_t kShareBytes = std::size_t{16} << 20;
  const std::size_t shares = std::clamp<std::size_t>(got.size_bytes() / kShareBytes, 1,
                                                     static_cast<std::size_t>(std::max(1, cpu_threads())));
  std::vector<Share> parts(shares);
  const auto run = [&](std::size_t k) {
    parts[k] = compare_share<T>(got, want, got.size() * k / shares, got.size() * (k + 1) / shares, element);
  };
  if (shares == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t k = 1; k < shares; ++k) threads.emplace_back(run, k);
    run(0);
    for (auto& t : threads) t.join();
  }
  for (const Share& p : parts) {
    if (p.mismatches > 0 && c.mismatches == 0) c.first_bad = p.first_bad;
    c.mismatches += p.mismatches;
    c.max_abs = std::max(c.max_abs, p.max_abs);
    c.max_rel = std::max(c.max_rel, p.max_rel);
  }
  if (c.mismatches > 0) {
    c.got = show(got[c.first_bad]);
    c.expected = show(want[c.first_bad]);
  }
  c.passed = c.mismatches == 0;
  return c;
}


}  // namespace

ElementRule element_rule(DType dtype, const CompareRule& rule) {
  const bool is_float = dtype_is_float(dtype);
  ElementRule r;
  r.exact = !rule.ulps && !rule.atol && !rule.rtol && !is_float;
  r.atol = rule.atol.value_or(is_float ? 1e-6 : 0.0);
  r.rtol = rule.rtol.value_or(is_float ? 1e-5 : 0.0);
  if (is_float) r.ulps = rule.ulps;
  if (r.exact) r.text = "exact";
  else if (rule.ulps) r.text = std::to_string(*rule.ulps) + " ulps";
  else r.text = "atol " + number(r.atol) + " + rtol " + number(r.rtol) + " * |expected|";
  return r;
}

std::string ArrayComparison::text(const std::string& name) const {
  if (total)
    return name + ": the total of " + std::to_string(size) + " elements " + (passed ? "" : "differs: ") + got +
           (passed ? (rule == "exact" ? " equals the expected " : " is within " + rule + " of the expected ")
                   : " against the expected ") + expected + (passed ? "" : " (" + rule + ")") + " (compare: sum)";
  if (passed)
    return name + ": " + std::to_string(size) + " elements " + (rule == "exact" ? "equal" : "within " + rule) +
           " (max abs error " + number(max_abs) + ", max rel error " + number(max_rel) + ")";
  return name + ": " + std::to_string(mismatches) + " of " + std::to_string(size) + " differ (" + rule +
         "); first at index " + std::to_string(first_bad) + " (got " + got + ", expected " + expected +
         "); max abs error " + number(max_abs) + ", max rel error " + number(max_rel);
}

ArrayComparison compare_arrays(const HostArray& got, const HostArray& expected, const CompareRule& rule) {
  if (got.dtype() != expected.dtype() || got.size() != expected.size())
    throw Error("compare_arrays: " + std::to_string(got.size()) + " " + std::string(dtype_name(got.dtype())) +
                " elements against " + std::to_string(expected.size()) + " " +
                std::string(dtype_name(expected.dtype())));
  return visit_dtype(got.dtype(), [&](auto zero) { return compare_typed<decltype(zero)>(got, expected, rule); });
}

}  // namespace gpuk
