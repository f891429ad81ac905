#include "util/fault_point.hpp"

#include <atomic>

namespace gpuk {

namespace {
std::atomic<FaultHook> hook{nullptr};
}  // namespace

void set_fault_hook(FaultHook h) { hook.store(h); }

void fault_point(std::string_view point) {
  if (const FaultHook h = hook.load(std::memory_order_relaxed)) h(point);
}

}  // namespace gpuk
