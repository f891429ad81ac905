// Engine::launch's cache's books (core/src/api/operation_cache.hpp): bounded by a count and by
// bytes, least recently used out first, the entry just settled never. No GPU: the entries hold
// no Operation, only the bytes one would.
#include <doctest/doctest.h>

#include "api/operation_cache.hpp"

using namespace gpuk;

namespace {

// The cache's entries taken out, as the keys' entries they were.
bool same(const std::vector<std::shared_ptr<OperationCache::Entry>>& out,
          const std::vector<std::shared_ptr<OperationCache::Entry>>& expected) {
  return out == expected;
}

}  // namespace

TEST_CASE("the cache keeps at most its count of Operations, the least recently used out first") {
  OperationCache cache({2, 1000});
  const auto a = cache.get("a");
  CHECK(cache.settle("a", 10).empty());
  const auto b = cache.get("b");
  CHECK(cache.settle("b", 20).empty());
  CHECK(cache.operations() == 2);
  CHECK(cache.bytes() == 30);
  CHECK(cache.get("a") == a);  // the same entry again, and now the most recently used
  const auto c = cache.get("c");
  CHECK(same(cache.settle("c", 30), {b}));
  CHECK(cache.operations() == 2);
  CHECK(cache.bytes() == 40);
  CHECK(cache.get("b") != b);  // b's key starts again with an empty entry
}

TEST_CASE("the cache keeps at most its bytes; the entry just settled stays even alone over them") {
  OperationCache cache({10, 100});
  const auto a = cache.get("a");
  (void)cache.settle("a", 40);
  const auto b = cache.get("b");
  (void)cache.settle("b", 40);
  const auto c = cache.get("c");
  CHECK(same(cache.settle("c", 500), {a, b}));
  CHECK(cache.operations() == 1);
  CHECK(cache.bytes() == 500);
  // An entry still being prepared (no bytes settled) is neither counted nor taken out.
  const auto d = cache.get("d");
  const auto e = cache.get("e");
  CHECK(same(cache.settle("e", 10), {c}));
  CHECK(cache.operations() == 1);
  CHECK(cache.get("d") == d);
}

TEST_CASE("take_all empties the cache; a key settled after it is not booked") {
  OperationCache cache({10, 1000});
  const auto a = cache.get("a");
  (void)cache.settle("a", 40);
  const auto b = cache.get("b");
  CHECK(cache.take_all().size() == 2);
  CHECK(cache.operations() == 0);
  CHECK(cache.bytes() == 0);
  CHECK(cache.settle("b", 40).empty());  // b was prepared while the cache was emptied
  CHECK(cache.operations() == 0);
}

TEST_CASE("settling a key again replaces its bytes") {
  OperationCache cache({10, 1000});
  (void)cache.get("a");
  (void)cache.settle("a", 40);
  (void)cache.settle("a", 70);
  CHECK(cache.operations() == 1);
  CHECK(cache.bytes() == 70);
}
