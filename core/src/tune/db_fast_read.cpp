#include "tune/db_fast_read.hpp"

#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>

namespace gpuk {

namespace {

using json = nlohmann::json;

// Where the parser is: the top-level object (depth 1), the entries list (2), an entry (3), an
// entry's params or ties (4); anything deeper or elsewhere is a reason to leave it to the checked
// reader.
class EntriesSax final : public nlohmann::json_sax<json> {
 public:
  EntriesSax(const char* format, int version) : format_(format), version_(version) {}
  std::vector<TuningEntry> entries;
  bool saw_format = false, saw_entries = false;

  bool null() override { return bail(); }
  bool boolean(bool) override { return bail(); }
  bool number_integer(number_integer_t v) override { return integer(v, v >= 0, static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override {
    return v > static_cast<number_unsigned_t>(INT64_MAX) ? bail() : integer(static_cast<std::int64_t>(v), true, static_cast<double>(v));
  }
  bool number_float(number_float_t v, const string_t&) override {
    if (depth_ == 3 && double_field(v)) return next();
    return bail();
  }
  bool string(string_t& s) override {
    if (depth_ == 1 && key_ == "format") {
      saw_format = s == format_;
      return saw_format ? true : bail();
    }
    if (depth_ == 3) {
      std::string* field = text_field();
      if (!field) return key_ == "objective" && parse_objective(s) ? (entry_.key.objective = s, next()) : unknown_or_bail();
      *field = std::move(s);
      seen_ |= bit_of(key_);
      return next();
    }
    if (depth_ == 4 && key_ == "ties") {
      entry_.ties.push_back(std::move(s));
      return true;
    }
    return bail();
  }
  bool binary(binary_t&) override { return bail(); }
  bool start_object(std::size_t) override {
    if (depth_ == 0) return ++depth_, true;
    if (depth_ == 2) {
      entry_ = TuningEntry{};
      seen_ = 0;
      return ++depth_, true;
    }
    if (depth_ == 3 && key_ == "params" && !(seen_ & bit_of("params"))) {
      entry_.params.clear();
      return ++depth_, true;
    }
    return bail();
  }
  bool key(string_t& k) override {
    if (depth_ == 4) param_ = std::move(k);
    else key_ = std::move(k);
    return true;
  }
  bool end_object() override {
    if (depth_ == 3) {
      constexpr unsigned required = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 6) | (1u << 7);
      if ((seen_ & required) != required) return bail();  // a field missing: the checked reader says which
      entries.push_back(std::move(entry_));
    }
    if (depth_ == 4) {
      seen_ |= bit_of("params");
      key_.clear();
    }
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 1 && key_ == "entries" && !saw_entries) return saw_entries = true, ++depth_, true;
    if (depth_ == 3 && key_ == "ties") {
      entry_.ties.clear();
      return ++depth_, true;
    }
    return bail();
  }
  bool end_array() override {
    --depth_;
    if (depth_ == 3) key_.clear();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return bail(); }

 private:
  // The fields every entry must have, and params (once), as bits.
  static unsigned bit_of(const std::string& k) {
    static const char* names[] = {"gpu", "arch", "family", "operation", "dtype", "kernel", "size_bucket", "params"};
    for (unsigned i = 0; i < 8; ++i)
      if (k == names[i]) return 1u << i;
    return 0;
  }
  std::string* text_field() {
    TuningEntry& e = entry_;
    if (key_ == "gpu") return &e.key.gpu;
    if (key_ == "arch") return &e.key.arch;
    if (key_ == "family") return &e.key.family;
    if (key_ == "operation") return &e.key.operation;
    if (key_ == "options") return &e.key.options;
    if (key_ == "dtype") return &e.key.dtype;
    if (key_ == "kernel") return &e.kernel;
    if (key_ == "strategy") return &e.strategy;
    if (key_ == "tuned_at") return &e.tuned_at;
    if (key_ == "gpuk_version") return &e.gpuk_version;
    if (key_ == "nvrtc") return &e.nvrtc;
    return nullptr;
  }
  bool double_field(double v) {
    if (!std::isfinite(v) || v < 0) return false;
    if (key_ == "median_ms") return entry_.median_ms = v, true;
    if (key_ == "gbs") return entry_.gbs = v, true;
    if (key_ == "joules") return entry_.joules = v, true;
    if (key_ == "watts") return entry_.watts = v, true;
    return false;
  }
  bool integer(std::int64_t v, bool non_negative, double as_double) {
    if (depth_ == 1 && key_ == "version") return v <= version_ ? true : bail();
    if (depth_ == 4 && key_ == "params") return entry_.params[param_] = v, true;
    if (depth_ != 3) return bail();
    if (key_ == "size_bucket") {
      if (v < 0 || v > 64) return bail();
      entry_.key.bucket = static_cast<int>(v);
      seen_ |= bit_of(key_);
      return next();
    }
    if (key_ == "size") return non_negative ? (entry_.size = static_cast<std::uint64_t>(v), next()) : bail();
    if (key_ == "evaluated") return non_negative && v <= INT32_MAX ? (entry_.evaluated = static_cast<int>(v), next()) : bail();
    if (double_field(as_double)) return next();
    return unknown_or_bail();
  }
  // A field the checked reader ignores may hold a scalar; one it reads, of the wrong type, may not.
  bool unknown_or_bail() {
    static const char* known[] = {"gpu", "arch", "family", "operation", "options", "dtype", "size_bucket", "objective",
                                  "kernel", "params", "median_ms", "gbs", "joules", "watts", "size", "ties",
                                  "strategy", "evaluated", "tuned_at", "gpuk_version", "nvrtc"};
    for (const char* k : known)
      if (key_ == k) return bail();
    return next();
  }
  bool next() { return true; }
  bool bail() {
    failed_ = true;
    return false;  // stops the parse
  }

  const char* format_;
  int version_;
  int depth_ = 0;
  std::string key_, param_;
  TuningEntry entry_;
  unsigned seen_ = 0;
  bool failed_ = false;

 public:
  bool failed() const { return failed_; }
};

}  // namespace

std::optional<std::vector<TuningEntry>> read_db_entries_fast(const std::string& text, const char* format, int version,
                                                             std::size_t expected) {
  EntriesSax sax(format, version);
  sax.entries.reserve(expected);
  const bool parsed = json::sax_parse(text, &sax);
  if (!parsed || sax.failed() || !sax.saw_format || !sax.saw_entries) return std::nullopt;
  return std::move(sax.entries);
}

}  // namespace gpuk
