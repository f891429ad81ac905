// A small Gaussian-process regressor for the bayes strategy: Matern 5/2 kernel with one length
// scale, Gaussian noise, targets standardised; length scale and noise chosen by the log marginal
// likelihood over a grid. Dense Cholesky: meant for the few hundred points a sweep measures.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

namespace gpuk::detail {

class GaussianProcess {
 public:
  // Fits to points `x` (rows of equal length) and values `y`.
  void fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y) {
    x_ = x;
    const std::size_t n = y.size();
    double mean = 0;
    for (double v : y) mean += v;
    mean_ = n ? mean / static_cast<double>(n) : 0;
    double var = 0;
    for (double v : y) var += (v - mean_) * (v - mean_);
    scale_ = n > 1 ? std::sqrt(var / static_cast<double>(n - 1)) : 1;
    if (!(scale_ > 1e-12)) scale_ = 1;
    std::vector<double> z(n);
    for (std::size_t i = 0; i < n; ++i) z[i] = (y[i] - mean_) / scale_;
    double best = -std::numeric_limits<double>::infinity();
    for (double length : {0.1, 0.18, 0.3, 0.5, 0.8, 1.3, 2.0})
      for (double noise : {1e-4, 1e-3, 1e-2, 5e-2}) {
        std::vector<double> chol, alpha;
        if (!factor(length, noise, z, chol, alpha)) continue;
        double ll = 0;
        for (std::size_t i = 0; i < n; ++i) ll -= 0.5 * z[i] * alpha[i] + std::log(chol[i * n + i]);
        if (ll > best) best = ll, length_ = length, noise_ = noise, chol_ = chol, alpha_ = alpha;
      }
  }

  // Posterior mean and standard deviation at `p`, in the units of y.
  void predict(const std::vector<double>& p, double& mean, double& sd) const {
    const std::size_t n = x_.size();
    std::vector<double> k(n);
    for (std::size_t i = 0; i < n; ++i) k[i] = kernel(p, x_[i], length_);
    double m = 0;
    for (std::size_t i = 0; i < n; ++i) m += k[i] * alpha_[i];
    // v = L^-1 k
    std::vector<double> v(k);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < i; ++j) v[i] -= chol_[i * n + j] * v[j];
      v[i] /= chol_[i * n + i];
    }
    double var = 1;
    for (double vi : v) var -= vi * vi;
    mean = mean_ + scale_ * m;
    sd = scale_ * std::sqrt(std::max(var, 1e-12));
  }

  double length_scale() const { return length_; }

  static double kernel(const std::vector<double>& a, const std::vector<double>& b, double length) {
    double d2 = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
    const double r = std::sqrt(5 * d2) / length;
    return (1 + r + r * r / 3) * std::exp(-r);
  }

  // Expected improvement below `best` (minimising) of a normal with `mean`, `sd`.
  static double expected_improvement(double mean, double sd, double best, double xi) {
    if (!(sd > 0)) return std::max(0.0, best - mean - xi);
    const double z = (best - mean - xi) / sd;
    const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
    const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
    return (best - mean - xi) * cdf + sd * pdf;
  }

 private:
  bool factor(double length, double noise, const std::vector<double>& z, std::vector<double>& chol,
              std::vector<double>& alpha) const {
    const std::size_t n = z.size();
    chol.assign(n * n, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) chol[i * n + j] = kernel(x_[i], x_[j], length) + (i == j ? noise : 0);
    for (std::size_t j = 0; j < n; ++j) {
      double d = chol[j * n + j];
      for (std::size_t k = 0; k < j; ++k) d -= chol[j * n + k] * chol[j * n + k];
      if (!(d > 0)) return false;
      d = std::sqrt(d);
      chol[j * n + j] = d;
      for (std::size_t i = j + 1; i < n; ++i) {
        double s = chol[i * n + j];
        for (std::size_t k = 0; k < j; ++k) s -= chol[i * n + k] * chol[j * n + k];
        chol[i * n + j] = s / d;
      }
    }
    // alpha = L^-T L^-1 z
    alpha = z;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < i; ++j) alpha[i] -= chol[i * n + j] * alpha[j];
      alpha[i] /= chol[i * n + i];
    }
    for (std::size_t i = n; i-- > 0;) {
      for (std::size_t j = i + 1; j < n; ++j) alpha[i] -= chol[j * n + i] * alpha[j];
      alpha[i] /= chol[i * n + i];
    }
    return true;
  }

  std::vector<std::vector<double>> x_;
  std::vector<double> chol_, alpha_;
  double mean_ = 0, scale_ = 1, length_ = 0.5, noise_ = 1e-3;
};

}  // namespace gpuk::detail
