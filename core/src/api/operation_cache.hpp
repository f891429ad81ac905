// Engine::launch's cache of prepared Operations: one entry per key (spec, size bucket, stream),
// bounded by a count and by the device memory the Operations hold, least recently used out
// first. It keeps the books only; the Engine frees what it hands back (engine.cpp), after the
// device has finished with it.
#pragma once
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuk/gpuk.hpp"

namespace gpuk {

class OperationCache {
 public:
  struct Entry {
    std::mutex mutex;  // held while its Operation is prepared or launched
    std::optional<Operation> operation;
    // Taken out of the cache and freed (set under `mutex`): a caller that finds it so looks
    // its key up again.
    bool released = false;
    // Gives the Operation's scratch back to the application's allocator, if it came from there.
    std::function<void()> release_scratch;

    // Drops the Operation, then gives its scratch back.
    void free_operation() {
      operation.reset();
      if (release_scratch) std::exchange(release_scratch, nullptr)();
    }
    ~Entry() {
      try {
        free_operation();
      } catch (...) {  // the application's free() threw: nothing to do about it here
      }
    }
  };
  struct Limits {
    std::size_t operations = 64;
    std::uint64_t bytes = std::uint64_t{1} << 30;
  };

  explicit OperationCache(Limits limits) : limits_(limits) {}

  // The key's entry (a new, empty one if the key has none), now the most recently used.
  std::shared_ptr<Entry> get(const std::string& key);
  // Records that the key's entry now holds an Operation of `bytes`, and takes out the least
  // recently used others while the cache is over either limit; returns them (to be freed).
  std::vector<std::shared_ptr<Entry>> settle(const std::string& key, std::uint64_t bytes);
  // Takes out every entry; returns them (to be freed).
  std::vector<std::shared_ptr<Entry>> take_all();

  std::size_t operations() const;  // entries settled with an Operation
  std::uint64_t bytes() const;     // their bytes

 private:
  struct Slot {
    std::shared_ptr<Entry> entry;
    std::optional<std::uint64_t> bytes;  // set by settle()
    std::list<std::string>::iterator use;
  };
  Limits limits_;
  mutable std::mutex mutex_;
  std::map<std::string, Slot> slots_;
  std::list<std::string> uses_;  // most recently used first
  std::size_t operations_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace gpuk
