// Kernel Tuner's kinds of kernels declared on a GPU, through the command line (each run a child
// `gpuk` under `timeout`): a convolution reading its filter from __constant__ memory and a
// point-in-polygon test reading float2 vertices from it, each against a naive kernel that reads
// the same values from global memory (so a constant not written, or written wrong, fails); a
// sparse matrix of three sizes whose product would have been taken for its memory need; a
// reduction pipeline whose second launch runs the same kernel with num_blocks = 1, swept and
// ranked by GB/s; partial sums verified by their total; a sweep's verification on the GPU (within
// the compare rule, and an in-out array left as it was). Without a GPU it exits 77 (skipped).
#include <doctest/doctest.h>

#include <fstream>
#include <regex>

#include "declared/declared_cli.hpp"

namespace fs = std::filesystem;

namespace {

using gpuk::test::declared_dir;
using gpuk::test::has;

gpuk::test::CommandResult gpuk_cli(const std::string& args, int limit = 60) { return gpuk::test::declared_gpuk(args, "", limit); }

fs::path config(const std::string& name) { return declared_dir() / "configs" / (name + ".yaml"); }

}  // namespace

TEST_CASE("__constant__ arrays filled from the declaration: a convolution's filter and pnpoly's float2 vertices") {
  for (const char* name : {"conv_cmem", "pnpoly_cmem"}) {
    CAPTURE(name);
    const auto r = gpuk_cli("run " + config(name).string());
    CAPTURE(r.output);
    CHECK(r.status == 0);
    CHECK(has(r.output, "verify      PASS"));
  }
  // Other values in d_filter than in filter: the outputs differ, so the constants are what the
  // kernel reads.
  const fs::path other = gpuk::test::declared_scratch().dir / "conv_other.yaml";
  std::ofstream(other) << "family: kernel\nkernel: conv_cmem\nsizes: {w: 300, h: 200}\n"
                          "data:\n  filter: {seed: 11}\n  d_filter: {seed: 12}\nreference: {kernel: conv_naive}\n";
  const auto o = gpuk_cli("run " + other.string());
  CAPTURE(o.output);
  CHECK(o.status == 3);
  CHECK(has(o.output, "verify      FAIL  mismatch: output: "));
  // A sweep: every variant's module gets the constants (one module per CUBIN and constants).
  const fs::path tune = gpuk::test::declared_scratch().dir / "tune_conv.yaml";
  std::ofstream(tune) << "family: kernel\nkernels: [conv_cmem]\nsizes: {w: 1021, h: 509}\n"
                         "data:\n  filter: {seed: 11}\nreference: {kernel: conv_naive}\n"
                         "compare: {output: {atol: 1e-6, rtol: 1e-6}}\nwarmup: 1\nrepeats: 5\nsave: false\n";
  const auto t = gpuk_cli("tune " + tune.string(), 120);
  CAPTURE(t.output);
  CHECK(t.status == 0);
  CHECK(has(t.output, "4 variants measured"));
  CHECK(!has(t.output, "wrong answer"));
}

TEST_CASE("spmv of 131072 rows, 65536 columns and 8589934 non-zeros runs: its memory need is its arrays") {
  const auto r = gpuk_cli("run " + config("spmv_csr").string(), 120);
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "verify      PASS"));
}

TEST_CASE("a reduction pipeline (the same kernel again with num_blocks = 1) tuned as one, ranked by GB/s") {
  const auto t = gpuk_cli("tune " + config("tune_reduce_kt").string(), 120);
  CAPTURE(t.output);
  CHECK(t.status == 0);
  CHECK(has(t.output, "9 variants measured"));
  CHECK(has(t.output, "ranked by GB/s (higher is better)"));
  CHECK(!has(t.output, "wrong answer"));
  const auto p = gpuk_cli("run " + config("reduce_partial").string());
  CAPTURE(p.output);
  CHECK(p.status == 0);
  CHECK(has(p.output, "verify      PASS  partial: the total of 1024 elements"));
}

TEST_CASE("a sweep verifies on the GPU: outputs within the compare rule, and a large in-out array left as it was") {
  // column_sums: the sums differ in their last bits between splits, within the rule of the
  // reference's; x (4 million floats, declared inout) keeps its bytes.
  const auto t = gpuk_cli("tune " + config("tune_column_sums").string(), 120);
  CAPTURE(t.output);
  CHECK(t.status == 0);
  CHECK(has(t.output, "6 variants measured"));
  CHECK(!has(t.output, "wrong answer"));
  // The first variant is verified on the host; of the others, those of split 1 have its bytes, and
  // the rest are within the rule on the GPU once its kernels are loaded (compiled beside the
  // sweep; the host compares until then).
  const std::regex note(R"(verified on the GPU: (\d) of 6 variants \((\d) with the bytes of the first verified answer, (\d) within the compare rule)");
  std::smatch m;
  REQUIRE(std::regex_search(t.output, m, note));
  CHECK(std::stoi(m[1]) == std::stoi(m[2]) + std::stoi(m[3]));
  CHECK(std::stoi(m[2]) <= 1);
  CHECK(std::stoi(m[3]) >= 1);
  // x is not restored before the timed runs of the variants found to leave it as it was (all but
  // the first, whose answer is the one kept), and was found unchanged after them.
  const std::regex unrestored(R"((\d) variants? timed without restoring the in-out inputs that their verified run left unchanged \(checked unchanged after the runs\))");
  REQUIRE(std::regex_search(t.output, m, unrestored));
  CHECK(std::stoi(m[1]) >= 1);
  // Compared by their total, the sums go to the host; x, the same bytes as the verified
  // answer's, is neither copied back nor compared there.
  const fs::path by_total = gpuk::test::declared_scratch().dir / "tune_column_totals.yaml";
  std::ofstream(by_total) << "family: kernel\nkernels: [column_sums]\nsizes: {n: 4096, m: 1001}\n"
                             "data:\n  x: {generator: uniform, range: [0, 1], seed: 12}\n"
                             "reference: {kernel: column_sums_ref}\ncompare: {sums: {sum: true, atol: 1, rtol: 1e-5}}\n"
                             "strategy: exhaustive\nwarmup: 1\nrepeats: 5\nsave: false\n";
  const auto s = gpuk_cli("tune " + by_total.string() + " --fresh", 120);
  CAPTURE(s.output);
  CHECK(s.status == 0);
  CHECK(has(s.output, "6 variants measured"));
  CHECK(has(s.output, "(4 of them only in the outputs whose bytes differed)"));
  CHECK(has(s.output, "6 measured now"));
}

TEST_CASE("a variant whose timed runs change an in-out input its verified run left as it was is timed again with it restored") {
  const auto t = gpuk_cli("tune " + config("tune_column_sums_late_write").string(), 120);
  CAPTURE(t.output);
  CHECK(t.status == 0);
  CHECK(has(t.output, "6 variants measured"));
  CHECK(!has(t.output, "wrong answer"));
  const std::regex again(R"((\d) variants? timed without restoring the in-out inputs that their verified run left unchanged \((\d) timed again with them restored: an input changed during the runs\))");
  std::smatch m;
  REQUIRE(std::regex_search(t.output, m, again));
  CHECK(std::stoi(m[2]) >= 1);
  CHECK(std::stoi(m[2]) == std::stoi(m[1]));  // every one of them changes x once timed
}
