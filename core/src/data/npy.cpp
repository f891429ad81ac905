// Data files: .npy (read and write) and raw binary.
#include "data/data.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <new>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <variant>

#include "gpuk/error.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"

static_assert(std::endian::native == std::endian::little,
              "gpuk's .npy and raw readers assume a little-endian host");

namespace gpuk {

// ------------------------------------------------------------------------------------------------
// Files

namespace {

[[noreturn]] void file_error(const std::filesystem::path& path, const std::string& what) {
  throw ConfigError(cat(path.string(), ": ", what));
}

// Checks that `path` is a readable regular file and returns its size.
std::uint64_t checked_file_size(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) file_error(path, "no such file");
  if (std::filesystem::is_directory(status)) file_error(path, "is a directory, not a data file");
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) file_error(path, cat("cannot determine the file size (", ec.message(), ")"));
  return size;
}

std::ifstream open_for_reading(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) file_error(path, cat("cannot open for reading (", std::strerror(errno), ")"));
  return in;
}

// Reads exactly `bytes` bytes into dst, in chunks, reporting how far it got on a short read.
void read_exactly(std::ifstream& in, const std::filesystem::path& path, void* dst,
                  std::uint64_t bytes) {
  constexpr std::uint64_t kChunk = std::uint64_t{64} << 20;
  auto* p = static_cast<char*>(dst);
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::uint64_t want = std::min(kChunk, bytes - done);
    in.read(p + done, static_cast<std::streamsize>(want));
    const auto got = static_cast<std::uint64_t>(in.gcount());
    done += got;
    if (got != want)
      file_error(path, cat("read failed after ", done, " of ", bytes, " data bytes"));
  }
}

std::optional<DType> dtype_from_descr(std::string_view descr) {
  if (descr == "<i4") return DType::int32;
  if (descr == "<u4") return DType::uint32;
  if (descr == "<i8") return DType::int64;
  if (descr == "<u8") return DType::uint64;
  if (descr == "<f4") return DType::float32;
  if (descr == "<f8") return DType::float64;
  return std::nullopt;
}

std::string_view descr_of(DType dtype) {
  switch (dtype) {
    case DType::int32: return "<i4";
    case DType::uint32: return "<u4";
    case DType::int64: return "<i8";
    case DType::uint64: return "<u8";
    case DType::float32: return "<f4";
    case DType::float64: return "<f8";
  }
  return "?";
}

constexpr std::string_view kSupportedDescrs = "<i4, <u4, <i8, <u8, <f4, <f8";

// A value in the Python-literal header dict: a string, a bare word (True, False, None), an
// integer, or a tuple/list of values.
struct PyValue {
  enum class Kind { string, word, integer, sequence } kind = Kind::word;
  std::string text;            // string contents, word, or integer digits
  std::uint64_t integer = 0;   // for integers (non-negative)
  bool negative = false;
  bool overflow = false;
  std::vector<PyValue> items;  // sequence
  std::string source;          // the literal as written, for messages
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::filesystem::path& path) : s_(text), path_(path) {}

  // Parses the header dict into (key, value) pairs.
  std::vector<std::pair<std::string, PyValue>> parse_dict() {
    std::vector<std::pair<std::string, PyValue>> entries;
    skip_space();
    if (!eat('{')) fail("header is not a Python dict literal");
    skip_space();
    while (!eat('}')) {
      const PyValue key = parse_value(0);
      if (key.kind != PyValue::Kind::string) fail(cat("header dict key ", key.source, " is not a string"));
      skip_space();
      if (!eat(':')) fail(cat("header: expected ':' after key '", key.text, "'"));
      entries.emplace_back(key.text, parse_value(0));
      skip_space();
      if (eat(',')) {
        skip_space();
        continue;
      }
      skip_space();
      if (!eat('}')) fail("header: expected ',' or '}' in the dict");
      break;
    }
    skip_space();
    if (pos_ != s_.size()) fail("header: unexpected text after the dict");
    return entries;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { file_error(path_, what); }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r' || s_[pos_] == '\0'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  PyValue parse_value(int depth) {
    if (depth > 16) fail("header: values nested too deeply");
    skip_space();
    if (pos_ >= s_.size()) fail("header ends in the middle of the dict");
    const std::size_t start = pos_;
    PyValue v;
    const char c = s_[pos_];
    if (c == '\'' || c == '"') {
      ++pos_;
      const std::size_t end = s_.find(c, pos_);
      if (end == std::string_view::npos) fail("header: unterminated string");
      v.kind = PyValue::Kind::string;
      v.text = std::string(s_.substr(pos_, end - pos_));
      pos_ = end + 1;
    } else if (c == '(' || c == '[') {
      const char close = c == '(' ? ')' : ']';
      ++pos_;
      v.kind = PyValue::Kind::sequence;
      skip_space();
      while (!eat(close)) {
        v.items.push_back(parse_value(depth + 1));
        skip_space();
        if (eat(',')) {
          skip_space();
          continue;
        }
        if (!eat(close)) fail(cat("header: expected ',' or '", close, "'"));
        break;
      }
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      v.kind = PyValue::Kind::integer;
      if (c == '-') {
        v.negative = true;
        ++pos_;
      }
      if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
        fail("header: malformed number");
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        const std::uint64_t d = static_cast<std::uint64_t>(s_[pos_] - '0');
        if (v.integer > (std::numeric_limits<std::uint64_t>::max() - d) / 10) v.overflow = true;
        v.integer = v.integer * 10 + d;
        ++pos_;
      }
      if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l')) ++pos_;  // Python 2 longs
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      v.kind = PyValue::Kind::word;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      v.text = std::string(s_.substr(start, pos_ - start));
    } else {
      fail(cat("header: unexpected character '", c, "'"));
    }
    v.source = std::string(s_.substr(start, pos_ - start));
    if (v.kind == PyValue::Kind::integer) v.text = v.source;
    return v;
  }

  std::string_view s_;
  const std::filesystem::path& path_;
  std::size_t pos_ = 0;
};

}  // namespace

namespace {

// A .npy file's header, checked against the file's size: what it holds and where the data starts.
struct NpyLayout {
  DType dtype = DType::float32;
  std::uint64_t count = 0;
  std::uint64_t data_start = 0;
};

NpyLayout read_npy_layout(const std::filesystem::path& path, std::ifstream& in) {
  const std::uint64_t file_size = checked_file_size(path);
  in = open_for_reading(path);

  // Preamble: magic, version, header length.
  constexpr char kMagic[] = "\x93NUMPY";
  unsigned char pre[12] = {};
  const std::uint64_t pre_available = std::min<std::uint64_t>(file_size, sizeof pre);
  in.read(reinterpret_cast<char*>(pre), static_cast<std::streamsize>(pre_available));
  if (static_cast<std::uint64_t>(in.gcount()) != pre_available)
    file_error(path, "cannot read the npy preamble");
  if (file_size < 10 || std::memcmp(pre, kMagic, 6) != 0)
    file_error(path, "not an npy file (bad magic; expected \\x93NUMPY)");
  const int major = pre[6], minor = pre[7];
  if (minor != 0 || major < 1 || major > 3)
    file_error(path, cat("unsupported npy format version ", major, ".", minor,
                         " (gpuk reads 1.0, 2.0 and 3.0)"));
  std::uint64_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<std::uint64_t>(pre[8]) | (static_cast<std::uint64_t>(pre[9]) << 8);
    header_start = 10;
  } else {
    if (file_size < 12) file_error(path, "file ends inside the npy preamble");
    header_len = static_cast<std::uint64_t>(pre[8]) | (static_cast<std::uint64_t>(pre[9]) << 8) |
                 (static_cast<std::uint64_t>(pre[10]) << 16) |
                 (static_cast<std::uint64_t>(pre[11]) << 24);
    header_start = 12;
  }
  if (header_len > file_size - header_start)
    file_error(path, cat("header length ", header_len, " runs past the end of the file (",
                         file_size, " bytes)"));
  constexpr std::uint64_t kMaxHeader = std::uint64_t{1} << 20;
  if (header_len > kMaxHeader)
    file_error(path, cat("header length ", header_len, " is implausibly large"));

  // Header dict.
  std::string header(static_cast<std::size_t>(header_len), '\0');
  in.seekg(static_cast<std::streamoff>(header_start));
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  if (static_cast<std::uint64_t>(in.gcount()) != header_len)
    file_error(path, "cannot read the npy header");
  const auto entries = HeaderParser(header, path).parse_dict();
  auto find = [&](std::string_view key) -> const PyValue* {
    for (const auto& [k, v] : entries)
      if (k == key) return &v;
    return nullptr;
  };
  const PyValue* descr = find("descr");
  const PyValue* fortran = find("fortran_order");
  const PyValue* shape = find("shape");
  if (!descr) file_error(path, "header has no 'descr' key");
  if (!fortran) file_error(path, "header has no 'fortran_order' key");
  if (!shape) file_error(path, "header has no 'shape' key");

  // dtype
  if (descr->kind != PyValue::Kind::string)
    file_error(path, cat("unsupported descr ", descr->source,
                         " (structured dtypes are not supported; gpuk reads ", kSupportedDescrs, ")"));
  const std::optional<DType> dtype = dtype_from_descr(descr->text);
  if (!dtype) {
    const std::string_view d = descr->text;
    if (!d.empty() && d[0] == '>' && dtype_from_descr(cat("<", d.substr(1))))
      file_error(path, cat("big-endian data ('", d, "') is not supported; save it as '<", d.substr(1),
                           "' (e.g. arr.astype('<", d.substr(1), "'))"));
    file_error(path, cat("unsupported descr '", d, "' (gpuk reads ", kSupportedDescrs, ")"));
  }

  // shape
  if (shape->kind != PyValue::Kind::sequence)
    file_error(path, cat("shape ", shape->source, " is not a tuple"));
  std::uint64_t count = 1;
  bool count_overflow = false;
  int extents_above_one = 0;
  for (const PyValue& dim : shape->items) {
    if (dim.kind != PyValue::Kind::integer || dim.negative)
      file_error(path, cat("shape ", shape->source, " has a bad dimension '", dim.source, "'"));
    if (dim.overflow)
      file_error(path, cat("shape ", shape->source, " overflows: dimension ", dim.source,
                           " does not fit in 64 bits"));
    if (__builtin_mul_overflow(count, dim.integer, &count)) count_overflow = true;
    if (dim.integer != 1) ++extents_above_one;
  }
  if (std::any_of(shape->items.begin(), shape->items.end(),
                  [](const PyValue& d) { return d.integer == 0; }))
    count_overflow = false, count = 0;  // a zero extent makes the product 0 whatever the rest

  // fortran_order
  if (fortran->kind != PyValue::Kind::word || (fortran->text != "True" && fortran->text != "False"))
    file_error(path, cat("fortran_order ", fortran->source, " is not True or False"));
  if (fortran->text == "True" && extents_above_one > 1)
    file_error(path, cat("fortran_order True with shape ", shape->source,
                         " is not supported (only C-order arrays, or 1-D ones)"));

  // Size checks, all before allocating.
  const std::uint64_t data_start = header_start + header_len;
  const std::uint64_t present = file_size - data_start;
  const std::uint64_t esize = dtype_size(*dtype);
  std::uint64_t expected = 0;
  if (count_overflow || __builtin_mul_overflow(count, esize, &expected))
    file_error(path, cat("shape ", shape->source, " of '", descr->text,
                         "' overflows a 64-bit byte count"));
  if (expected > present)
    file_error(path, cat("data is truncated: shape ", shape->source, " of '", descr->text,
                         "' needs ", expected, " bytes, but the file holds ", present));

  return {*dtype, count, data_start};
}

}  // namespace

HostArray read_npy(const std::filesystem::path& path) {
  std::ifstream in;
  const NpyLayout layout = read_npy_layout(path, in);
  HostArray array(layout.dtype, layout.count);
  in.seekg(static_cast<std::streamoff>(layout.data_start));
  read_exactly(in, path, array.data(), array.bytes());
  return array;
}

bool is_npy(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".npy";
}

FileContents inspect_file(const DataSpec& spec) {
  if (!spec.file) throw ConfigError("no input file given");
  const std::filesystem::path& path = *spec.file;
  if (is_npy(path)) {
    std::ifstream in;
    const NpyLayout layout = read_npy_layout(path, in);
    return {layout.dtype, layout.count};
  }
  if (!spec.raw_dtype)
    file_error(path, "raw file needs a dtype (not a .npy file, so its element type must be given as data.dtype)");
  const std::uint64_t size = checked_file_size(path);
  const std::uint64_t esize = dtype_size(*spec.raw_dtype);
  if (size == 0) file_error(path, "file is empty");
  if (size % esize != 0)
    file_error(path, cat("size ", size, " bytes is not a multiple of the ", esize, "-byte ",
                         dtype_name(*spec.raw_dtype), " element"));
  (void)open_for_reading(path);
  return {*spec.raw_dtype, size / esize};
}

void write_npy(const std::filesystem::path& path, const HostArray& array) {
  std::string header = cat("{'descr': '", descr_of(array.dtype()),
                           "', 'fortran_order': False, 'shape': (", array.size(), ",), }");
  // Pad with spaces so that the data starts on a 64-byte boundary; the header ends in '\n'.
  const std::size_t unpadded = 10 + header.size() + 1;
  constexpr std::size_t kHeaderAlignment = 64;
  header.append((kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment, ' ');
  header.push_back('\n');

  const auto len = static_cast<std::uint16_t>(header.size());
  const char preamble[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  // Atomically (a run killed while it wrote left a .npy whose header promised more than it held),
  // unless PATH is a FIFO or a device.
  write_output_file(path,
                    {std::string_view(preamble, sizeof preamble), header,
                     std::string_view(static_cast<const char*>(array.data()), array.bytes())},
                    "the result (.npy)");
}

HostArray read_raw(const std::filesystem::path& path, DType dtype) {
  const std::uint64_t size = checked_file_size(path);
  const std::uint64_t esize = dtype_size(dtype);
  if (size == 0) file_error(path, "file is empty");
  if (size % esize != 0)
    file_error(path, cat("size ", size, " bytes is not a multiple of the ", esize,
                         "-byte ", dtype_name(dtype), " element"));
  std::ifstream in = open_for_reading(path);
  HostArray array(dtype, size / esize);
  read_exactly(in, path, array.data(), size);
  return array;
}

HostArray load_file(const DataSpec& spec) {
  if (!spec.file) throw ConfigError("no input file given");
  const std::filesystem::path& path = *spec.file;
  if (is_npy(path)) return read_npy(path);
  if (!spec.raw_dtype)
    file_error(path, "raw file needs a dtype (not a .npy file, so its element type must be given)");
  return read_raw(path, *spec.raw_dtype);
}

}  // namespace gpuk

