// YAML that yaml-cpp would read silently differently from what its writer meant: two equal keys
// in one mapping (yaml-cpp keeps the first) and a second document after '---' (yaml-cpp reads
// only the first). Both are errors, at the place they stand, in configs and kernel metadata.
#include <doctest/doctest.h>

#include <chrono>

#include "builtins.hpp"
#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "util/text.hpp"

using namespace gpuk;

namespace {

const std::string kArgmax = "family: reduce\noperation: argmax\ndtype: float32\nsize: 1000\n";

std::string run_error(const std::string& yaml) {
  try {
    parse_run_spec(yaml, "c.yaml", test::plugins(), test::kernels());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string kernel_error(const std::string& metadata) {
  try {
    KernelFile::parse("/* gpuk\n" + metadata + "*/\ntemplate <class R> __global__ void mine() {}\n", "k.cu");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a config with a key given twice is refused at the second, naming the first") {
  CHECK(run_error(kArgmax).empty());
  const std::string top = run_error(kArgmax + "size: 2000\n");
  CHECK(top.find("c.yaml:5:1: duplicate key 'size' (first at c.yaml:4:1)") != std::string::npos);
  // In a nested mapping, in a flow mapping, among the parameters.
  CHECK(run_error(kArgmax + "data: {generator: uniform, seed: 1, seed: 2}\n").find("duplicate key 'seed'") !=
        std::string::npos);
  CHECK(run_error(kArgmax + "data:\n  generator: uniform\n  generator: normal\n").find("c.yaml:7:3: duplicate key") !=
        std::string::npos);
  CHECK(run_error(kArgmax + "kernel: onepass\nparams: {BLOCK: 256, BLOCK: 512}\n").find("duplicate key 'BLOCK'") !=
        std::string::npos);
  // Equal keys in different mappings, and one anchored mapping used twice, are fine.
  CHECK(run_error(kArgmax + "data: &d {generator: uniform, seed: 1}\n").empty());
  CHECK(run_error("x: &a {k: 1}\ny: *a\n").find("duplicate") == std::string::npos);
}

TEST_CASE("a config with a second YAML document is refused, not read in part") {
  const std::string e = run_error(kArgmax + "---\n" + kArgmax);
  CHECK(e.find("c.yaml:5:1: a second YAML document") != std::string::npos);
  // A document marker before the only document is fine.
  CHECK(run_error("---\n" + kArgmax).empty());
}

TEST_CASE("kernel metadata with a key given twice is refused, at top level and in params") {
  const std::string ok = "family: reduce\noperations: [max]\nlaunch:\n  - {entry: mine, grid: 1, block: 32}\n";
  CHECK(kernel_error(ok).empty());
  CHECK(kernel_error(ok + "family: search\n").find("k.cu:6:1: duplicate key 'family' (first at k.cu:2:1)") !=
        std::string::npos);
  CHECK(kernel_error(ok + "params:\n  B: {default: 1}\n  B: {default: 2}\n").find("duplicate key 'B'") !=
        std::string::npos);
  CHECK(kernel_error("family: reduce\noperations: [max]\nlaunch:\n  - {entry: mine, grid: 1, grid: 2, block: 32}\n")
            .find("duplicate key 'grid'") != std::string::npos);
}

TEST_CASE("the duplicate-key check reads an alias bomb in time linear in its text") {
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 12; ++i)
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + std::string("*a") + std::to_string(i - 1) +
            ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  const auto start = std::chrono::steady_clock::now();
  const std::string e = run_error(kArgmax + bomb);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5);
  CHECK(e.find("unknown key 'a0'") != std::string::npos);
}

TEST_CASE("messages show hostile text escaped and cut short") {
  CHECK(printable("size") == "size");
  CHECK(printable("a\x1b[2Jb") == "a\\x1b[2Jb");
  CHECK(printable("\xff\xfe") == "\\xff\\xfe");
  CHECK(printable("h\xc3\xa9") == "h\xc3\xa9");  // UTF-8 kept
  const std::string long_key = printable(std::string(100000, 'k'));
  CHECK(long_key.size() < 120);
  CHECK(long_key.find("(100000 bytes in all)") != std::string::npos);
  const std::string e = run_error(kArgmax + std::string(5000, 'z') + "\x1b: 1\n");
  CHECK(e.size() < 1000);
  CHECK(e.find('\x1b') == std::string::npos);
}

TEST_CASE("settings that contradict each other or generate nothing are refused, where they stand") {
  CHECK(run_error(kArgmax + "data: {generator: uniform, low: nan, high: 1}\n").find("low must be a finite number") !=
        std::string::npos);
  CHECK(run_error(kArgmax + "data: {generator: normal, mean: 0, stddev: inf}\n").find("stddev must be a finite") !=
        std::string::npos);
  CHECK(run_error(kArgmax + "data: {generator: uniform, high: -inf}\n").find("high must be a finite") !=
        std::string::npos);
  CHECK(run_error("family: reduce\noperation: argmax\ndata: {file: x.npy, seed: 3}\n")
            .find("c.yaml:3:27: 'seed' sets up generated data, but data.file gives the data") != std::string::npos);
}
