// A config's data file is opened when the config is loaded; a .npy file says its own size and
// dtype, so a config (or `gpuk run --input`) need not.
#include <doctest/doctest.h>

#include "builtins.hpp"
#include "config/config.hpp"
#include "gpuk/error.hpp"

using namespace gpuk;

namespace {

using test::contains;

template <class F> std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

struct Files {
  test::TempDir dir;
  std::filesystem::path npy(const std::string& name, HostArray a) const {
    write_npy(dir.path() / name, a);
    return dir.path() / name;
  }
  RunSpec load(const std::string& yaml, const std::optional<std::filesystem::path>& input = {}) const {
    return load_run_spec(dir.write("c.yaml", yaml), test::plugins(), test::kernels(), input);
  }
};

const std::string kArgmaxHead = "family: reduce\noperation: argmax\n";

}  // namespace

TEST_CASE("a .npy data file gives the size and dtype a config leaves out") {
  Files f;
  f.npy("x.npy", test::array<std::int32_t>({5, -3, 9, 9, 1}));
  const RunSpec spec = f.load(kArgmaxHead + "data: {file: x.npy}\n");
  CHECK(spec.size == 5);
  CHECK(spec.dtype == DType::int32);
  CHECK(spec.data.file == f.dir.path() / "x.npy");
}

TEST_CASE("a config that states size and dtype must agree with the .npy header") {
  Files f;
  f.npy("x.npy", test::array<std::int32_t>({5, -3, 9, 9, 1}));
  CHECK(f.load(kArgmaxHead + "dtype: int32\nsize: 5\ndata: {file: x.npy}\n").size == 5);
  const std::string dtype = config_error([&] { f.load(kArgmaxHead + "dtype: float32\ndata: {file: x.npy}\n"); });
  CHECK(contains(dtype, "c.yaml:3:8: the data file holds 5 int32 elements, but the config asks for float32"));
  const std::string size = config_error([&] { f.load(kArgmaxHead + "size: 6\ndata: {file: x.npy}\n"); });
  CHECK(contains(size, "c.yaml:3:7: the data file holds 5 int32 elements, but the config asks for 6"));
}

TEST_CASE("a missing, unreadable or damaged data file fails when the config is loaded, at its line") {
  Files f;
  const std::string missing = config_error([&] { f.load(kArgmaxHead + "size: 5\ndata: {file: nothere.npy}\n"); });
  CAPTURE(missing);
  CHECK(contains(missing, "c.yaml:4:14: "));
  CHECK(contains(missing, "nothere.npy: no such file"));
  f.dir.write("bad.npy", "not numpy at all");
  CHECK(contains(config_error([&] { f.load(kArgmaxHead + "data: {file: bad.npy}\n"); }), "not an npy file"));
  CHECK(contains(config_error([&] { f.load(kArgmaxHead + "data: {file: nothere.npy}\n"); }), "no such file"));
  // Without a file, size is still required, and the message says what else would do.
  CHECK(contains(config_error([&] { f.load(kArgmaxHead); }), "missing 'size' (or a data.file to take it from)"));
}

TEST_CASE("a raw data file is sized from its bytes and data.dtype") {
  Files f;
  const std::uint32_t words[3] = {1, 2, 3};
  std::ofstream(f.dir.path() / "w.bin", std::ios::binary).write(reinterpret_cast<const char*>(words), sizeof words);
  const RunSpec spec = f.load(kArgmaxHead + "data: {file: w.bin, dtype: uint32}\n");
  CHECK(spec.size == 3);
  CHECK(spec.dtype == DType::uint32);
  CHECK(contains(config_error([&] { f.load(kArgmaxHead + "size: 3\ndata: {file: w.bin}\n"); }), "raw file needs a dtype"));
}

TEST_CASE("a dtype the family does not support is refused at the data file") {
  Files f;
  f.npy("h.npy", test::array<std::uint64_t>({1, 2}));  // search takes int32, uint32, int64, float32, float64
  const std::string e = config_error([&] { f.load("family: search\noperation: find\nvalue: 1\ndata: {file: h.npy}\n"); });
  CAPTURE(e);
  CHECK(contains(e, "c.yaml:4:14: the data file holds 2 uint64 elements"));
}

TEST_CASE("--input replaces the config's data, size and dtype with the array's") {
  Files f;
  const auto input = f.npy("mine.npy", test::array<double>({0.5, 2.5, -1}));
  const RunSpec spec =
      f.load(kArgmaxHead + "dtype: float32\nsize: 1000\ndata: {generator: normal, seed: 3}\n", input);
  CHECK(spec.size == 3);
  CHECK(spec.dtype == DType::float64);
  CHECK(spec.data.file == input);
  const std::string not_npy = config_error([&] { f.load(kArgmaxHead + "size: 10\n", f.dir.path() / "c.yaml"); });
  CHECK(contains(not_npy, "--input"));
  CHECK(contains(not_npy, "give a .npy file"));
}
