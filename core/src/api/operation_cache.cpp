// Engine::launch's cache's books (api/operation_cache.hpp).
#include "api/operation_cache.hpp"

namespace gpuk {

std::shared_ptr<OperationCache::Entry> OperationCache::get(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto [it, added] = slots_.try_emplace(key);
  Slot& slot = it->second;
  if (added) {
    slot.entry = std::make_shared<Entry>();
    uses_.push_front(key);
    slot.use = uses_.begin();
  } else {
    uses_.splice(uses_.begin(), uses_, slot.use);
  }
  return slot.entry;
}

std::vector<std::shared_ptr<OperationCache::Entry>> OperationCache::settle(const std::string& key,
                                                                          std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Entry>> out;
  const auto it = slots_.find(key);
  if (it == slots_.end()) return out;  // taken out meanwhile (take_all): nothing to book
  if (it->second.bytes) {
    bytes_ -= *it->second.bytes;
    --operations_;
  }
  it->second.bytes = bytes;
  bytes_ += bytes;
  ++operations_;
  // From the least recently used end, past entries still being prepared (no bytes yet) and the
  // one just settled.
  for (auto use = uses_.end(); use != uses_.begin() && (operations_ > limits_.operations || bytes_ > limits_.bytes);) {
    --use;
    if (*use == key) continue;
    const auto victim = slots_.find(*use);
    if (!victim->second.bytes) continue;
    bytes_ -= *victim->second.bytes;
    --operations_;
    out.push_back(std::move(victim->second.entry));
    slots_.erase(victim);
    use = uses_.erase(use);
  }
  return out;
}

std::vector<std::shared_ptr<OperationCache::Entry>> OperationCache::take_all() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Entry>> out;
  for (auto& [key, slot] : slots_) out.push_back(std::move(slot.entry));
  slots_.clear();
  uses_.clear();
  operations_ = 0;
  bytes_ = 0;
  return out;
}

std::size_t OperationCache::operations() const {
  std::lock_guard lock(mutex_);
  return operations_;
}

std::uint64_t OperationCache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace gpuk
