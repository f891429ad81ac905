// The tuning matrix's export keeps only winners that serve every size of their bucket: the
// lookup offers an entry tuned at 2^12 for all of 4,096..8,191, so a rank_bucket that holds
// 4,096 keys (n <= BLOCK * ITEMS) would make every sort of 4,097..8,191 keys warn (issue 27).
#include <doctest/doctest.h>

#include "builtins.hpp"
#include "helpers.hpp"
#include "kernel/kernel_file.hpp"
#include "tune/matrix/matrix.hpp"

using namespace gpuk;

namespace {

const char* kSortMatrix = R"(family: sort
sizes: [2^12]
dtypes: [uint32]
kernels: [rank_bucket]
operations:
  - operation: sort
)";

// The matrix's one cell, measured with `params` of rank_bucket as its winner.
std::vector<TuningEntry> exported(const test::TempDir& dir, const std::map<std::string, std::int64_t>& params,
                                  std::vector<std::string>* missing) {
  const TuneMatrix m = parse_tune_matrix(kSortMatrix, "m.yaml", test::plugins(), test::kernels());
  REQUIRE(m.cells.size() == 1);
  const MatrixCell& cell = m.cells.front();
  const MatrixResults results(dir.path() / "out");
  CellResult r;
  r.status = CellResult::Status::ok;
  r.cell = cell.id;
  r.fingerprint = cell_fingerprint(cell);
  r.family = "sort";
  r.operation = "sort";
  r.options = options_key(cell.spec.run.options);  // as a real cell file has it (export checks it)
  r.dtype = "uint32";
  r.size = 4096;
  TuningEntry e;
  e.key = {"Test GPU", "sm_99", "sort", "sort", options_key(cell.spec.run.options), "uint32", 12};
  e.kernel = "rank_bucket";
  e.params = params;
  e.median_ms = 0.006;
  e.size = 4096;
  r.winner = e;
  results.write(cell, r);
  return matrix_entries(m, results, missing, &test::kernels());
}

}  // namespace

TEST_CASE("the matrix export leaves out a winner that cannot serve every n of its bucket, saying why") {
  const test::TempDir dir;
  std::vector<std::string> missing;
  // BLOCK 512 x ITEMS 8 = 4,096 keys: right at 2^12, not at 8,191.
  auto entries = exported(dir, {{"BLOCK", 512}, {"ITEMS", 8}, {"BUCKET_BITS", 12}, {"SPLIT", 16}, {"SHARE", 1}}, &missing);
  CHECK(entries.empty());
  REQUIRE(missing.size() == 1);
  CHECK(missing.front().find("breaks 'n <= BLOCK * ITEMS' for n = ") != std::string::npos);
  // BLOCK 1024 x ITEMS 8 = 8,192 keys: the whole bucket.
  missing.clear();
  entries = exported(dir, {{"BLOCK", 1024}, {"ITEMS", 8}, {"BUCKET_BITS", 12}, {"SPLIT", 16}, {"SHARE", 1}}, &missing);
  CHECK(entries.size() == 1);
  CHECK(missing.empty());
}
