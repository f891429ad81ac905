// Host-side arrays and the input data gpuk runs on: generators, .npy files, raw binary files.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpuk/dtype.hpp"

namespace gpuk {

// A contiguous host array of `size()` elements of `dtype()`, in pages of its own (page-aligned,
// so that pin() can lock it alone), uninitialised on
// construction (large inputs are filled once, by a generator or a file read).
class HostArray {
 public:
  HostArray() = default;
  HostArray(DType dtype, std::uint64_t size);

  DType dtype() const { return dtype_; }
  std::uint64_t size() const { return size_; }
  std::size_t bytes() const { return static_cast<std::size_t>(size_) * dtype_size(dtype_); }
  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }

  // Page-locks the array's memory (cuMemHostRegister), so that copies to and from the device run
  // at the bus's speed instead of through the driver's pageable staging; undone when the array
  // is freed. Returns an empty string when it is (or was already) page-locked, else why not (no
  // driver, the locked-memory limit, GPUK_NO_PIN=1): the array then stays pageable and works
  // as before. Needs a current CUDA context (a gpuk::Device).
  std::string pin();
  bool pinned() const { return storage_.get_deleter().registered; }

  template <class T> std::span<T> as() {
    check_type(dtype_of<T>());
    return {static_cast<T*>(data()), static_cast<std::size_t>(size_)};
  }
  template <class T> std::span<const T> as() const {
    check_type(dtype_of<T>());
    return {static_cast<const T*>(data()), static_cast<std::size_t>(size_)};
  }

 private:
  void check_type(DType wanted) const;  // throws gpuk::Error on a mismatch
  struct FreeAligned {
    FreeAligned() noexcept : registered(false) {}
    bool registered;  // page-locked by pin(): unregistered before it is freed
    void operator()(std::byte* p) const;
  };
  DType dtype_ = DType::float32;
  std::uint64_t size_ = 0;
  std::unique_ptr<std::byte, FreeAligned> storage_;
};

// A run's input as a family's Workload sees it (FamilyPlugin::make_workload): the elements,
// read-only and shared (the workload keeps alive what it reads), and the seed of the config's
// data (a family draws its own positions from it: search's `value_at: random`).
class InputView {
 public:
  InputView(std::shared_ptr<const HostArray> array, std::uint64_t seed) : array_(std::move(array)), seed_(seed) {}
  // A view that does not own `array`, for a call that keeps no view of it (Searcher::target).
  static InputView borrowed(const HostArray& array, std::uint64_t seed) {
    return InputView(std::shared_ptr<const HostArray>(std::shared_ptr<const HostArray>(), &array), seed);
  }

  DType dtype() const { return array_->dtype(); }
  std::uint64_t size() const { return array_->size(); }
  std::size_t bytes() const { return array_->bytes(); }
  const void* data() const { return array_->data(); }
  template <class T> std::span<const T> as() const { return array_->template as<T>(); }
  std::uint64_t seed() const { return seed_; }

  // A declared kernel's data, by argument name: its input arrays, generated or read one by one,
  // and the expected outputs a reference of .npy files gives (the view's own array is then empty).
  using Named = std::map<std::string, std::shared_ptr<const HostArray>>;
  Named arrays, expected;
  const HostArray* array(const std::string& name) const {
    const auto it = arrays.find(name);
    return it == arrays.end() ? nullptr : it->second.get();
  }

 private:
  std::shared_ptr<const HostArray> array_;
  std::uint64_t seed_;
};

enum class Generator { uniform, normal, permutation, sorted, reversed, few_distinct };

// Where NaNs go (floating-point dtypes only): at the listed indices, and/or at `count` random
// distinct indices drawn from the seed.
struct NanSpec {
  std::vector<std::uint64_t> at;
  std::uint64_t count = 0;
};

struct DataSpec {
  Generator generator = Generator::uniform;
  // uniform, sorted, reversed, few_distinct: floats in [low, high), integers in [low, high].
  // Unset, each takes the dtype's default (uniform_range): floats [-1, 1), integers the dtype's
  // whole range (uint32: [0, 2^32 - 1]), so that an integer sort with no data settings sorts
  // keys that are nearly all distinct, not a handful.
  std::optional<double> low, high;
  double mean = 0.0, stddev = 1.0;   // normal (integers: rounded)
  std::uint64_t distinct = 16;       // few_distinct: values drawn from this many distinct ones
  NanSpec nan;
  std::uint64_t seed = 1;

  // Read the input from a file instead of generating it (`generator` is then ignored):
  // a .npy file (its own dtype and shape; 1-D, or any shape read flat in C order), or a raw
  // binary file of `raw_dtype` elements.
  std::optional<std::filesystem::path> file;
  std::optional<DType> raw_dtype;
};

std::string_view generator_name(Generator g);
std::optional<Generator> parse_generator(std::string_view name);

// The range uniform values of dtype are drawn from: spec.low / spec.high, or where unset floats'
// -1 / 1 and integers' lowest / highest value (as doubles: the generators clamp to the dtype, so
// int64's and uint64's 2^63 and 2^64 mean the highest value).
struct ValueRange {
  double low, high;
};
ValueRange uniform_range(const DataSpec& spec, DType dtype);

// What a run's input is, for its reports: the generator (or "file"), the range the values came
// from, the seed, and a bound on the number of distinct values where the spec gives one.
struct DataSummary {
  std::string generator;   // a generator's name, or "file"
  std::string range;       // "[0, 4294967295]", "[-1, 1)", "mean 0, stddev 1"; empty for a file
  std::uint64_t seed = 0;
  std::optional<std::uint64_t> distinct_at_most;  // permutation: exactly this many
  std::uint64_t nans = 0;  // NaNs put in (at most this many places: nan.at and nan.count may meet)
  std::string file;        // the data file, when the data came from one
  // A declared kernel's input array this describes ("" for the three families' one input), and
  // its other input arrays', in the declaration's order: each array has its own data.
  std::string array;
  std::vector<DataSummary> others;
  // One line: "uniform integers in [0, 4294967295], seed 1, ..."; a declared kernel's names each
  // input array: "A: uniform in [-1, 1), seed 3; B: file b.npy".
  std::string text() const;
};
DataSummary summarize_data(const DataSpec& spec, DType dtype, std::uint64_t n);

// Generates n elements of dtype. Deterministic for a given (spec, dtype, n), whatever the number
// of threads. Throws gpuk::ConfigError for impossible requests (NaN in an integer dtype, a NaN
// index >= n, low > high, distinct == 0, a permutation of more values than dtype can hold).
HostArray generate(const DataSpec& spec, DType dtype, std::uint64_t n);

// Loads spec.file (npy or raw). Throws gpuk::ConfigError naming the file on any problem.
HostArray load_file(const DataSpec& spec);

// What a data file holds, from a .npy file's header (checked against the file's size) or a raw
// file's size in spec.raw_dtype elements, without reading the data: a config is checked against
// it when it is loaded. Throws gpuk::ConfigError naming the file (missing, unreadable, bad header).
struct FileContents {
  DType dtype = DType::float32;
  std::uint64_t size = 0;
};
FileContents inspect_file(const DataSpec& spec);
bool is_npy(const std::filesystem::path& path);  // by its extension, any case

HostArray read_npy(const std::filesystem::path& path);
void write_npy(const std::filesystem::path& path, const HostArray& array);
HostArray read_raw(const std::filesystem::path& path, DType dtype);

}  // namespace gpuk
