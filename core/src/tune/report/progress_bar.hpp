// The progress line of `gpuk tune` (tune/tune_command.cpp).
#pragma once
#include <unistd.h>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "tune/sweep/sweep.hpp"

namespace gpuk {

// A one-line progress bar on stderr, redrawn in place; only when stderr is a terminal.
class ProgressBar {
 public:
  explicit ProgressBar(bool wanted = true) : enabled_(wanted && ::isatty(STDERR_FILENO) != 0) {}
  ~ProgressBar() { finish(); }
  void operator()(const Progress& p) {
    if (!enabled_) return;
    const std::size_t planned = std::max<std::size_t>(p.planned, p.done);
    const int width = 30;
    const int filled = planned ? static_cast<int>(width * p.done / planned) : 0;
    std::ostringstream line;
    line << "\r  tune [" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << p.done << "/"
         << planned << "  " << std::fixed << std::setprecision(1) << p.elapsed << " s";
    if (p.done > 0 && planned > p.done)
      line << "  ETA " << p.elapsed / static_cast<double>(p.done) * static_cast<double>(planned - p.done) << " s";
    if (!p.current.empty()) line << "  " << p.current.substr(0, 40);
    std::string text = line.str();
    if (text.size() < last_) text += std::string(last_ - text.size(), ' ');
    last_ = text.size();
    std::cerr << text << std::flush;
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::cerr << "\r" << std::string(last_, ' ') << "\r" << std::flush;
    drawn_ = false;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::size_t last_ = 0;
};

}  // namespace gpuk
