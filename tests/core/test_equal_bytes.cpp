// equal_bytes (util/host.hpp): memcmp's answer, in shares on several threads for large arrays,
// whichever share holds the one differing byte.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "util/host.hpp"

using namespace gpuk;

TEST_CASE("equal_bytes finds one differing byte anywhere, in small arrays and in shares of large ones") {
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{4097},
                                  (std::size_t{67} << 20) + 3}) {
    CAPTURE(bytes);
    std::vector<std::uint8_t> a(bytes), b(bytes);
    for (std::size_t i = 0; i < bytes; ++i) a[i] = b[i] = static_cast<std::uint8_t>(i * 131 + 7);
    CHECK(equal_bytes(a.data(), b.data(), bytes));
    if (bytes == 0) continue;
    for (const std::size_t at : {std::size_t{0}, bytes / 3, bytes / 2, bytes - 1}) {
      CAPTURE(at);
      b[at] ^= 0x10;
      CHECK_FALSE(equal_bytes(a.data(), b.data(), bytes));
      b[at] ^= 0x10;
    }
    CHECK(equal_bytes(a.data(), b.data(), bytes));
  }
}
