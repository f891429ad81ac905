#include "tuning/db_fast_read.hpp"

#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <string_view>

#include "config/config.hpp"

namespace gpuk {

namespace {

// A strict reader of the database's own shape, over the text in place: an object of "format",
// "version" and "entries", each entry an object whose values are strings, numbers, "params" (an
// object of integers) and "ties" (a list of strings). Strings must be plain ASCII without escapes
// or control bytes (gpuk writes no others); anything else fails the fast path (nlohmann's
// lexer, which the checked reader uses, reads 150 MB/s: 300 k entries took 2 s).
class Reader {
 public:
  Reader(std::string_view text, const char* format, int version) : p_(text.data()), end_(text.data() + text.size()),
                                                                   format_(format), version_(version) {}
  std::vector<TuningEntry> entries;

  bool read_all() {
    bool saw_format = false, saw_entries = false;
    if (!take('{')) return false;
    if (take('}')) return false;
    do {
      std::string_view key;
      if (!string(key) || !take(':')) return false;
      if (key == "format") {
        std::string_view f;
        if (saw_format || !string(f) || f != format_) return false;
        saw_format = true;
      } else if (key == "version") {
        Number n;
        if (!number(n) || n.is_float || n.value > version_) return false;
      } else if (key == "entries") {
        if (saw_entries || !entries_list()) return false;
        saw_entries = true;
      } else {
        return false;
      }
    } while (take(','));
    if (!take('}')) return false;
    skip_space();
    return p_ == end_ && saw_format && saw_entries;
  }

 private:
  struct Number {
    bool is_float = false;
    std::int64_t value = 0;  // when !is_float
    double real = 0;
  };

  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool take(char c) {
    skip_space();
    if (p_ < end_ && *p_ == c) return ++p_, true;
    return false;
  }
  bool peek(char c) {
    skip_space();
    return p_ < end_ && *p_ == c;
  }
  bool string(std::string_view& out) {
    if (!take('"')) return false;
    const char* start = p_;
    const void* close = std::memchr(p_, '"', static_cast<std::size_t>(end_ - p_));
    if (!close) return false;
    const char* stop = static_cast<const char*>(close);
    for (const char* q = start; q < stop; ++q) {
      const auto c = static_cast<unsigned char>(*q);
      if (c < 0x20 || c >= 0x80 || c == '\\') return false;  // escapes, control bytes, non-ASCII: the checked path
    }
    out = std::string_view(start, static_cast<std::size_t>(stop - start));
    p_ = stop + 1;
    return true;
  }
  // JSON's number grammar exactly; integers in int64, as nlohmann keeps them (larger ones fail).
  bool number(Number& n) {
    skip_space();
    const char* start = p_;
    const char* q = p_;
    if (q < end_ && *q == '-') ++q;
    if (q >= end_ || !std::isdigit(static_cast<unsigned char>(*q))) return false;
    if (*q == '0') ++q;
    else
      while (q < end_ && std::isdigit(static_cast<unsigned char>(*q))) ++q;
    if (q < end_ && *q == '.') {
      n.is_float = true;
      ++q;
      if (q >= end_ || !std::isdigit(static_cast<unsigned char>(*q))) return false;
      while (q < end_ && std::isdigit(static_cast<unsigned char>(*q))) ++q;
    }
    if (q < end_ && (*q == 'e' || *q == 'E')) {
      n.is_float = true;
      ++q;
      if (q < end_ && (*q == '+' || *q == '-')) ++q;
      if (q >= end_ || !std::isdigit(static_cast<unsigned char>(*q))) return false;
      while (q < end_ && std::isdigit(static_cast<unsigned char>(*q))) ++q;
    }
    const auto r = n.is_float ? std::from_chars(start, q, n.real) : std::from_chars(start, q, n.value);
    if (r.ec != std::errc() || r.ptr != q) return false;
    if (!n.is_float) n.real = static_cast<double>(n.value);
    p_ = q;
    return true;
  }

  bool entries_list() {
    if (!take('[')) return false;
    if (take(']')) return true;
    do {
      if (!entry()) return false;
    } while (take(','));
    return take(']');
  }

  // The fields every entry must have (the checked reader's required ones), as bits.
  enum : unsigned { kGpu = 1, kArch = 2, kFamily = 4, kOperation = 8, kDtype = 16, kKernel = 32, kBucket = 64, kParams = 128 };

  bool entry() {
    TuningEntry& e = entries.emplace_back();
    unsigned seen = 0;
    if (!take('{')) return false;
    if (take('}')) return false;  // no fields: the checked reader says which are missing
    do {
      std::string_view key;
      if (!string(key) || !take(':')) return false;
      if (!field(e, key, seen)) return false;
    } while (take(','));
    if (!take('}')) return false;
    constexpr unsigned required = kGpu | kArch | kFamily | kOperation | kDtype | kKernel | kBucket | kParams;
    return (seen & required) == required;
  }

  bool text(std::string& out) {
    std::string_view s;
    if (!string(s)) return false;
    out.assign(s);
    return true;
  }
  // A number the checked reader takes as a time or a rate: finite, at least 0.
  bool amount(double& out) {
    Number n;
    if (!number(n) || !std::isfinite(n.real) || n.real < 0) return false;
    out = n.real;
    return true;
  }
  bool integer(std::int64_t& out, std::int64_t low, std::int64_t high) {
    Number n;
    if (!number(n) || n.is_float || n.value < low || n.value > high) return false;
    out = n.value;
    return true;
  }

  bool field(TuningEntry& e, std::string_view key, unsigned& seen) {
    // Strings: mark the required ones.
    struct Text {
      const char* name;
      std::string TuningEntry::*entry;
      std::string TuningKey::*key;
      unsigned bit;
    };
    static const Text texts[] = {{"gpu", nullptr, &TuningKey::gpu, kGpu},
                                 {"arch", nullptr, &TuningKey::arch, kArch},
                                 {"family", nullptr, &TuningKey::family, kFamily},
                                 {"operation", nullptr, &TuningKey::operation, kOperation},
                                 {"options", nullptr, &TuningKey::options, 0},
                                 {"dtype", nullptr, &TuningKey::dtype, kDtype},
                                 {"objective", nullptr, &TuningKey::objective, 0},
                                 {"kernel", &TuningEntry::kernel, nullptr, kKernel},
                                 {"strategy", &TuningEntry::strategy, nullptr, 0},
                                 {"tuned_at", &TuningEntry::tuned_at, nullptr, 0},
                                 {"gpuk_version", &TuningEntry::gpuk_version, nullptr, 0},
                                 {"nvrtc", &TuningEntry::nvrtc, nullptr, 0}};
    for (const Text& t : texts) {
      if (key != t.name) continue;
      std::string& out = t.entry ? e.*(t.entry) : e.key.*(t.key);
      if (!text(out)) return false;
      if (t.key == &TuningKey::objective && !parse_objective(out)) return false;
      seen |= t.bit;
      return true;
    }
    std::int64_t v = 0;
    if (key == "size_bucket") {
      if (!integer(v, 0, 64)) return false;
      e.key.bucket = static_cast<int>(v);
      seen |= kBucket;
      return true;
    }
    if (key == "size") return integer(v, 0, INT64_MAX) && (e.size = static_cast<std::uint64_t>(v), true);
    if (key == "evaluated") return integer(v, 0, INT32_MAX) && (e.evaluated = static_cast<int>(v), true);
    if (key == "median_ms") return amount(e.median_ms);
    if (key == "gbs") return amount(e.gbs);
    double d = 0;
    if (key == "joules") return amount(d) && (e.joules = d, true);
    if (key == "watts") return amount(d) && (e.watts = d, true);
    if (key == "params") {
      if (seen & kParams) return false;  // given twice: the checked reader decides
      seen |= kParams;
      if (!take('{')) return false;
      if (take('}')) return true;
      do {
        std::string_view name;
        if (!string(name) || !take(':') || !integer(v, INT64_MIN, INT64_MAX)) return false;
        e.params[std::string(name)] = v;
      } while (take(','));
      return take('}');
    }
    if (key == "ties") {
      e.ties.clear();
      if (!take('[')) return false;
      if (take(']')) return true;
      do {
        std::string& t = e.ties.emplace_back();
        if (!text(t)) return false;
      } while (take(','));
      return take(']');
    }
    // A field the checked reader does not read: a string or a number is passed over; anything
    // else goes to the checked path.
    std::string_view ignored;
    Number n;
    return peek('"') ? string(ignored) : number(n);
  }

  const char* p_;
  const char* end_;
  std::string_view format_;
  int version_;
};

}  // namespace

std::optional<std::vector<TuningEntry>> read_db_entries_fast(const std::string& text, const char* format, int version) {
  Reader reader(text, format, version);
  // Room for more entries than the text can hold (gpuk writes some 400 bytes each): pages never
  // written are never touched, and growing the list would move every entry again.
  reader.entries.reserve(text.size() / 128 + 16);
  if (!reader.read_all()) return std::nullopt;
  return std::move(reader.entries);
}

}  // namespace gpuk
