// A 128-bit content key: two independent 64-bit hashes side by side, each piece added followed
// by a separator, so that ("ab", "c") and ("a", "bc") differ. Not cryptographic.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace gpuk {

class Hasher {
 public:
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) {
      a_ = (a_ ^ c) * 0x100000001b3ull;
      b_ = (b_ + c + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
      b_ ^= b_ >> 31;
    }
    a_ = (a_ ^ 0xff) * 0x100000001b3ull;
    b_ = (b_ + 0x94d049bb133111ebull) * 0xbf58476d1ce4e5b9ull;
  }
  std::string hex() const {
    char out[33];
    std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(a_),
                  static_cast<unsigned long long>(b_));
    return out;
  }

 private:
  std::uint64_t a_ = 0xcbf29ce484222325ull;
  std::uint64_t b_ = 0x84222325cbf29ce4ull;
};

}  // namespace gpuk
