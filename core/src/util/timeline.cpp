#include "util/timeline.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpuk {

void timeline(std::string_view what) {
  static const bool on = [] {
    const char* e = std::getenv("GPUK_TIMELINE");
    return e && *e && std::string_view(e) != "0";
  }();
  if (!on) return;
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  char head[64];
  const int n = std::snprintf(head, sizeof head, "gpuk timeline %ld.%06ld %d ", static_cast<long>(now.tv_sec),
                              now.tv_nsec / 1000, static_cast<int>(::getpid()));
  std::string line(head, n > 0 ? static_cast<std::size_t>(n) : 0);
  line.append(what);
  line.push_back('\n');
  (void)!::write(2, line.data(), line.size());
}

}  // namespace gpuk
