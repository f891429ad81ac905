// A tuning matrix of declared kernels without a GPU: cells over named-size sets (each a declared
// kernel's tune config), shards run with the fake measurer (tests/tune/fake_cells.hpp), merged,
// exported, and the export read back by the variant lookup for exactly those sizes.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "builtins.hpp"
#include "gpuk/error.hpp"
#include "run/choose.hpp"
#include "run/prepare.hpp"
#include "tune/fake_cells.hpp"
#include "tune/matrix/matrix.hpp"

using namespace gpuk;

namespace {

using test::error_of;
using test::kernels;
using test::matrix_of;
using test::plugins;

const char* kMatrix = R"(family: kernel
warmup: 2
repeats: 7
reference: {kernel: stencil2d_naive}
data: {in: {generator: uniform, range: [-1, 1], seed: 7}}
operations:
  - operation: stencil2d
    sizes: [{nx: 1000, ny: 300}, {nx: 300, ny: 1000}, {nx: 4099, ny: 4097}]
    params: {block_size_x: [16, 32, 64], block_size_y: [2, 4, 8], tile_size_y: [1, 2]}
  - operation: matmul
    sizes: [{m: 256, n: 256, k: 256}, {m: 1999, n: 2001, k: 1001}]
    reference: {kernel: matmul_naive}
    data: {A: {seed: 3}}
    compare: {C: {atol: 1e-4, rtol: 1e-4}}
    params: {TILE_M: [32, 64], TILE_N: [32, 64], TILE_K: [16], WORK_M: [2, 4], WORK_N: [2, 4]}
  - operation: stencil2d
    sizes: {nx: 64, ny: 64}
    params: {block_size_x: [16, 32], block_size_y: [2, 4], tile_size_y: [1]}
)";

// kernel + params per key: what a cell's winner is.
std::map<std::string, std::string> winners(const std::vector<TuningEntry>& entries) {
  std::map<std::string, std::string> out;
  for (const auto& e : entries) {
    std::string params;
    for (const auto& [k, v] : e.params) params += " " + k + "=" + std::to_string(v);
    out[e.key.operation + " " + e.key.options] = e.kernel + params;
  }
  return out;
}

}  // namespace

TEST_CASE("a declared kernel's matrix: a cell per named-size set, each a declared kernel's tune config") {
  const TuneMatrix m = matrix_of(kMatrix);
  REQUIRE(m.cells.size() == 6);
  CHECK(m.family == "kernel");
  const MatrixCell& first = m.cells[0];
  CHECK(first.id == "stencil2d nx=1000 ny=300");
  CHECK(first.file == "stencil2d.nx-1000.ny-300.json");
  CHECK(first.spec.run.sizes == std::map<std::string, std::int64_t>{{"nx", 1000}, {"ny", 300}});
  CHECK(first.spec.run.size == 300000);
  CHECK(first.spec.run.reference_kernel == "stencil2d_naive");
  CHECK(first.spec.kernels == std::vector<std::string>{"stencil2d"});
  CHECK(first.spec.params.at("block_size_x") == std::vector<std::int64_t>{16, 32, 64});
  CHECK(first.spec.run.warmup == 2);
  CHECK(!first.spec.save);  // a matrix fills its results, not the user's database
  CHECK(m.cells[1].id == "stencil2d nx=300 ny=1000");
  const MatrixCell& mm = m.cells[3];
  CHECK(mm.id == "matmul k=256 m=256 n=256");
  CHECK(mm.spec.run.reference_kernel == "matmul_naive");
  CHECK(mm.spec.run.compare.at("C").atol == 1e-4);
  CHECK(mm.spec.run.arg_data.at("A").seed == 3);
  CHECK(m.cells[4].id == "matmul k=1001 m=1999 n=2001");
  // An entry's own data: replaces the top level's for its cells only: the next entry's cells
  // have the top level's again (the matrix's tree is not written through).
  CHECK(first.spec.run.arg_data.at("in").seed == 7);
  CHECK(m.cells[5].id == "stencil2d nx=64 ny=64");
  CHECK(m.cells[5].spec.run.arg_data.at("in").seed == 7);
  CHECK(m.cells[5].spec.run.reference_kernel == "stencil2d_naive");
  // Every cell's settings differ, so each has its own fingerprint.
  std::set<std::string> prints;
  for (const auto& cell : m.cells) prints.insert(cell_fingerprint(cell));
  CHECK(prints.size() == m.cells.size());
}

TEST_CASE("a declared kernel's matrix says what is wrong at the matrix file's line") {
  const std::string dtypes = error_of(
      "family: kernel\ndtypes: [float32]\noperations:\n  - operation: stencil2d\n    sizes: [{nx: 8, ny: 8}]\n");
  CHECK(dtypes.find("m.yaml:2:9: a declared kernel's cells are its named sizes") != std::string::npos);
  const std::string mixed = error_of("family: kernel\noperations:\n  - operation: stencil2d\n    sizes: [{nx: 8, ny: 8}, 64]\n");
  CHECK(mixed.find("m.yaml:4:29: sizes are all numbers (n) or all mappings") != std::string::npos);
  const std::string name = error_of("family: kernel\noperations:\n  - operation: stencil2d\n    sizes: [{nx: 8, nz: 8}]\n");
  CHECK(name.find("m.yaml:4:21: the kernel has no size 'nz'") != std::string::npos);
  const std::string first = error_of(
      "family: kernel\noperations:\n  - operation: stencil2d\n    kernels: [matmul]\n    sizes: [{nx: 8, ny: 8}]\n");
  CHECK(first.find("m.yaml:4:15: a declared kernel is its own operation") != std::string::npos);
  const std::string unverified = error_of("family: kernel\noperations:\n  - operation: stencil2d\n    sizes: [{nx: 8, ny: 8}]\n");
  CHECK(unverified.find("m.yaml:4:13: a tuning matrix exports verified winners, and this cell has nothing to verify "
                        "against: give reference:") != std::string::npos);
  const std::string twice = error_of("family: kernel\nreference: {kernel: stencil2d_naive}\noperations:\n"
                                     "  - operation: stencil2d\n    sizes: [{nx: 8, ny: 8}, {ny: 8, nx: 8}]\n");
  CHECK(twice.find("the cell 'stencil2d nx=8 ny=8' is in the matrix twice") != std::string::npos);
  // A number for a declared kernel's size: a family whose operations are declared kernels (it
  // lists none of its own) takes named sizes.
  const std::string plain = error_of("family: kernel\ndtypes: [float32]\noperations:\n  - operation: stencil2d\n    sizes: [64]\n");
  CHECK(plain.find("m.yaml:5:13: the kernel family's operations are declared kernels, whose cells are their named sizes") !=
        std::string::npos);
}

TEST_CASE("a declared kernel's matrix in two shards, merged, exported: the lookup runs each cell's winner") {
  const test::TempDir dir;
  const TuneMatrix m = matrix_of(kMatrix);
  const MatrixResults whole(dir.path() / "whole");
  run_matrix(m, whole, test::fake_cell_sweep);
  const auto expected = winners(matrix_entries(m, whole, nullptr, &kernels()));
  REQUIRE(expected.size() == 6);
  // The fake measurer's best differs by the cell's index: not every cell has one winner.
  std::set<std::string> distinct;
  for (const auto& [key, w] : expected) distinct.insert(w);
  CHECK(distinct.size() >= 4);

  std::vector<std::filesystem::path> dirs;
  for (int k = 0; k < 2; ++k) {
    dirs.push_back(dir.path() / ("shard-" + std::to_string(k)));
    CHECK(run_matrix(shard_of(m, {k, 2}), MatrixResults(dirs.back()), test::fake_cell_sweep).measured == 3);
  }
  CHECK(matrix_entries(m, MatrixResults(dirs[1])).size() == 3);
  const MatrixResults merged(dir.path() / "merged");
  const MergeSummary s = merge_matrix_results(m, dirs, merged);
  CHECK(s.cells == 6);
  CHECK(s.missing.empty());
  std::vector<std::string> missing;
  const auto entries = matrix_entries(m, merged, &missing, &kernels());
  CHECK(missing.empty());
  CHECK(winners(entries) == expected);

  // The export, read as a tuning file by `variant: auto`: each cell's winner for its sizes.
  const std::filesystem::path file = dir.path() / "extra" / "tuned" / "sm_99.json";
  TuningDb::merge_into(file, entries);
  const KernelLibrary library({test::kernels_dir(), dir.path() / "extra"});
  TuningSources tuning;
  add_shipped_tuning(tuning, library, "sm_99");
  REQUIRE(tuning.shipped.size() == 1);
  const auto choose = [&](const std::string& sizes) {
    const RunSpec spec = parse_run_spec("family: kernel\nkernel: stencil2d\nvariant: auto\nsizes: " + sizes + "\n",
                                        "c.yaml", plugins(), library);
    return choose_variant(problem_of(spec), variant_request(spec), plugins().get(spec.family), library,
                          test::test_gpu(), tuning);
  };
  // (No structured binding: CAPTURE's lambda may not name one in clang 14, the sanitizer build's.)
  for (const auto& cell : {std::pair{"{nx: 1000, ny: 300}", "stencil2d nx=1000 ny=300"},
                           std::pair{"{nx: 300, ny: 1000}", "stencil2d nx=300 ny=1000"},
                           std::pair{"{nx: 4099, ny: 4097}", "stencil2d nx=4099 ny=4097"}}) {
    const std::string sizes = cell.first, key = cell.second;
    CAPTURE(sizes);
    const Choice c = choose(sizes);
    CHECK(c.source == Choice::Source::shipped);
    std::string params;
    for (const auto& [k, v] : c.params) params += " " + k + "=" + std::to_string(v);
    CHECK("stencil2d" + params == expected.at(key));
  }
  // Sizes no cell measured are another problem: the declaration's defaults.
  CHECK(choose("{nx: 1000, ny: 301}").source == Choice::Source::defaults);
}

TEST_CASE("gpuk tune MATRIX --merge --export of a declared kernel's shards through the command line") {
  const test::TempDir dir;
  const std::string yaml = dir.write("m.yaml", kMatrix).string();
  const TuneMatrix m = load_tune_matrix(yaml, plugins(), kernels());
  const MatrixResults whole(dir.path() / "whole");
  run_matrix(m, whole, test::fake_cell_sweep);
  std::string shards;
  for (int k = 0; k < 2; ++k) {
    const std::filesystem::path d = dir.path() / ("shard-" + std::to_string(k));
    run_matrix(shard_of(m, {k, 2}), MatrixResults(d), test::fake_cell_sweep);
    shards += " " + d.string();
  }
  const auto merged = test::run_command(std::string(GPUK_EXE) + " --tuning-db " + (dir.path() / "db.json").string() +
                                        " tune " + yaml + " --merge" + shards + " --out " +
                                        (dir.path() / "merged").string() + " --export " +
                                        (dir.path() / "e.json").string());
  CAPTURE(merged.output);
  CHECK(merged.status == 0);
  CHECK(merged.output.find(": 6 of 6 cells;") != std::string::npos);
  CHECK(merged.output.find("matrix done: 6 ok;") != std::string::npos);
  CHECK(merged.output.find("exported 6 verified winners to") != std::string::npos);
  CHECK(winners(TuningDb::read(dir.path() / "e.json").entries()) == winners(matrix_entries(m, whole)));
  CHECK(!std::filesystem::exists(dir.path() / "db.json"));  // the user's database untouched
}

TEST_CASE("the shipped declared kernels' matrix: each cell verified against its naive kernel and timed against it") {
  const TuneMatrix m = load_tune_matrix(test::source_dir() / "configs" / "tune_matrix_kernel.yaml", plugins(), kernels());
  REQUIRE(m.cells.size() == 4);
  for (const auto& cell : m.cells) {
    CAPTURE(cell.id);
    CHECK(cell.spec.run.reference_kernel == cell.spec.run.operation + "_naive");
    CHECK(cell.spec.run.baseline_kernel == cell.spec.run.operation + "_naive");
    CHECK(cell.spec.run.verify);
    // Most of each cell's space runs on an H100 or H200 (the constraints and plans at its sizes).
    const Space space = Space::from_spec(cell.spec, kernels());
    const LaunchLimits limits = launch_limits(problem_of(cell.spec.run), test::test_gpu());
    std::uint64_t runnable = 0;
    for (std::uint64_t i = 0; i < space.size(); ++i) runnable += space.prune(space.at(i), {}, limits) ? 0 : 1;
    CHECK(runnable >= 16);
    CHECK(runnable * 4 >= space.size() * 3);
  }
  CHECK(m.cells.front().id == "stencil2d nx=4099 ny=4097");
  CHECK(m.cells.back().id == "matmul k=1001 m=1999 n=2001");
}

TEST_CASE("a declared cell whose winner names another kernel of the family, merged and exported: refused, named, exit 1") {
  const test::TempDir dir;
  const std::string yaml = dir.write("m.yaml", kMatrix).string();
  const TuneMatrix m = load_tune_matrix(yaml, plugins(), kernels());
  std::vector<std::filesystem::path> dirs;
  std::string shards;
  for (int k = 0; k < 2; ++k) {
    dirs.push_back(dir.path() / ("shard-" + std::to_string(k)));
    run_matrix(shard_of(m, {k, 2}), MatrixResults(dirs.back()), test::fake_cell_sweep);
    shards += " " + dirs.back().string();
  }
  const MatrixCell& cell = m.cells[0];  // stencil2d nx=1000 ny=300, in shard 0
  const MatrixResults shard(dirs[0]);
  const auto good = shard.read(cell);
  REQUIRE(good);
  // Another kernel of the family: other arrays and sizes (matmul), or the cell's own reference.
  for (const auto& other : {std::pair<std::string, std::map<std::string, std::int64_t>>{
                                "matmul", {{"TILE_M", 32}, {"TILE_N", 32}, {"TILE_K", 16}, {"WORK_M", 2}, {"WORK_N", 2}}},
                            std::pair<std::string, std::map<std::string, std::int64_t>>{"stencil2d_naive", {}}}) {
    const std::string kernel = other.first;
    CAPTURE(kernel);
    CellResult forged = *good;
    forged.winner->kernel = kernel;
    forged.winner->params = other.second;
    shard.write(cell, forged);
    const std::string why = "its winner is kernel " + kernel + ", not one the cell swept (stencil2d)";
    CHECK(winner_mismatch(m, cell, forged) == why);
    // A direct export refuses it ...
    std::vector<std::string> missing;
    const auto direct = matrix_entries(m, shard, &missing);
    CHECK(direct.size() == 2);
    CHECK(std::count(missing.begin(), missing.end(), cell.id + " (" + why + ")") == 1);
    // ... and so do the merge and the export of the merge.
    const std::filesystem::path merged = dir.path() / ("merged-" + kernel), exported = dir.path() / ("e-" + kernel + ".json");
    const auto r = test::run_command(std::string(GPUK_EXE) + " --tuning-db " + (dir.path() / "db.json").string() +
                                     " tune " + yaml + " --merge" + shards + " --out " + merged.string() + " --export " +
                                     exported.string());
    CAPTURE(r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find("gpuk: not merged: " + shard.cell_path(cell).string() + ": " + why) != std::string::npos);
    CHECK(r.output.find("exported 5 verified winners to " + exported.string() + "; 1 cell skipped: 1 missing") !=
          std::string::npos);
    const TuningDb exported_db = TuningDb::read(exported);
    for (const auto& e : exported_db.entries()) {
      CHECK(e.kernel == e.key.operation);
      CHECK(e.key.options != "nx=1000 ny=300");
    }
    CHECK_FALSE(std::filesystem::exists(exported.string() + ".lock"));
    // --allow-missing: the same export, exit 0.
    const auto allowed = test::run_command(std::string(GPUK_EXE) + " --tuning-db " + (dir.path() / "db.json").string() +
                                           " tune " + yaml + " --merge" + shards + " --out " + merged.string() +
                                           "-allowed --allow-missing");
    CAPTURE(allowed.output);
    CHECK(allowed.status == 0);
    CHECK(allowed.output.find("gpuk: not merged: " + shard.cell_path(cell).string()) != std::string::npos);
  }
}
