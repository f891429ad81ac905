// The tuning matrix without a GPU: its config read into cells (errors at the matrix file's
// line), the results directory and resume (an injected sweep: the real tune() with the fake
// measurer), and the export read back by the variant lookup as a shipped file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "builtins.hpp"
#include "device/device.hpp"
#include "fake_cells.hpp"
#include "gpuk/error.hpp"
#include "run/choose.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "tune/matrix/matrix.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

using test::error_of;
using test::kernels;
using test::matrix_of;
using test::plugins;

const char* kMatrix = R"(family: reduce
sizes: [2^10, 2^14]
dtypes: [float32, int32]
warmup: 2
repeats: 7
kernels: [onepass]
params: {BLOCK: [128, 256, 512], UNROLL: [1, 2, 4, 8], BLOCKS_PER_SM: [2], LOAD: [0], SPLIT: [0], WAVES: [1], FOLD: [1]}
operations:
  - operation: argmax
    abs: [false, true]
  - operation: sum
    dtypes: [float64]
    sizes: [2^20]
    kernels: [warp_shuffle]
    params: {BLOCK: [256], BLOCKS_PER_SM: [2, 4]}
)";

using test::replace;
using test::test_gpu;

// A cell swept by the real tune() with the fake measurer (fastest: BLOCK=256, UNROLL=4), as the
// GPU sweep reports it, with a baseline twice as slow as the winner.
CellResult fake_sweep(const MatrixCell& cell) {
  const Space space = Space::from_spec(cell.spec, kernels());
  test::FakeMeasurer measurer;
  TuneOptions options;
  options.recheck_top = 2;
  options.recheck_repeats = 5;
  TuneReport report =
      make_tune_report(cell.spec, options, tune(space, measurer, options), test_gpu(), 1 << 20, false, {});
  report.baseline = BaselineTiming{"cub::DeviceReduce::ArgMax", {2.0, 2.0, 2.0}, ""};
  return cell_result(cell, report, space);
}

}  // namespace

TEST_CASE("a tuning matrix is one cell per operation x option values x dtype x size, each a plain tune config") {
  CHECK(is_tune_matrix(kMatrix));
  CHECK_FALSE(is_tune_matrix("family: reduce\noperation: argmax\nsize: 2^20\n"));
  const TuneMatrix m = matrix_of(kMatrix);
  CHECK(m.family == "reduce");
  // argmax: 2 abs x 2 dtypes x 2 sizes; sum: its own dtype and size, abs at its default.
  REQUIRE(m.cells.size() == 9);
  std::vector<std::string> ids;
  for (const auto& c : m.cells) ids.push_back(c.id);
  CHECK(ids == std::vector<std::string>{
                   "argmax abs=false float32 2^10", "argmax abs=false float32 2^14", "argmax abs=false int32 2^10",
                   "argmax abs=false int32 2^14",   "argmax abs=true float32 2^10",  "argmax abs=true float32 2^14",
                   "argmax abs=true int32 2^10",    "argmax abs=true int32 2^14",    "sum abs=false float64 2^20"});
  const MatrixCell& first = m.cells[0];
  CHECK(first.index == 0);
  CHECK(first.line == 9);
  CHECK(first.file == "argmax.abs-false.float32.n1024.json");
  CHECK(first.spec.run.operation == "argmax");
  CHECK(first.spec.run.dtype == DType::float32);
  CHECK(first.spec.run.size == 1024);
  CHECK(first.spec.run.repeats == 7);
  CHECK(first.spec.run.warmup == 2);
  CHECK(first.spec.kernels == std::vector<std::string>{"onepass"});
  CHECK(first.spec.params.at("UNROLL") == std::vector<std::int64_t>{1, 2, 4, 8});
  CHECK_FALSE(first.spec.save);  // a matrix fills its results directory, not the user's database
  CHECK(first.spec.flush_l2 == FlushL2::off);  // timed as gpuk run times it and the baseline
  CHECK(m.cells[4].spec.run.option("abs") == "true");
  const MatrixCell& sum = m.cells[8];
  CHECK(sum.spec.kernels == std::vector<std::string>{"warp_shuffle"});  // the entry's space replaces the top's
  CHECK(sum.spec.params.at("BLOCKS_PER_SM") == std::vector<std::int64_t>{2, 4});
  CHECK(sum.spec.params.count("UNROLL") == 0);
  CHECK(sum.spec.run.size == std::uint64_t{1} << 20);

  // `dtypes: all` is every dtype of the family; a fingerprint changes with what the cell sweeps.
  const TuneMatrix all = matrix_of(replace(kMatrix, "dtypes: [float32, int32]", "dtypes: all"));
  CHECK(all.cells.size() == 2 * 6 * 2 + 1);
  const TuneMatrix other = matrix_of(replace(kMatrix, "repeats: 7", "repeats: 9"));
  CHECK(cell_fingerprint(other.cells[0]) != cell_fingerprint(m.cells[0]));
  CHECK(cell_fingerprint(matrix_of(kMatrix).cells[0]) == cell_fingerprint(m.cells[0]));
  MatrixCell reseeded = m.cells[0];
  reseeded.spec.seed = 5;  // --seed on the command line
  CHECK(cell_fingerprint(reseeded) != cell_fingerprint(m.cells[0]));
}

TEST_CASE("an entry's own params and constraints are its cells' alone: later entries and the top keep theirs") {
  // The entry that overrides comes first: its settings once leaked into every later entry (a
  // YAML node assigned through a handle the top level's settings shared).
  const TuneMatrix m = matrix_of(R"(family: reduce
sizes: [2^14]
dtypes: [float32]
kernels: [onepass]
params: {BLOCK: [128, 256], UNROLL: [1, 2], BLOCKS_PER_SM: [2]}
constraints:
  - BLOCK * UNROLL >= 128
operations:
  - operation: sum
    params: {BLOCK: [512], UNROLL: [4], BLOCKS_PER_SM: [4]}
    constraints:
      - BLOCK * UNROLL >= 2048
  - operation: argmax
  - operation: max
)");
  REQUIRE(m.cells.size() == 3);
  CHECK(m.cells[0].spec.params.at("BLOCK") == std::vector<std::int64_t>{512});
  REQUIRE(m.cells[0].spec.constraints.size() == 1);
  CHECK(m.cells[0].spec.constraints[0].expr.text() == "BLOCK * UNROLL >= 2048");
  for (std::size_t i : {1, 2}) {
    CAPTURE(m.cells[i].id);
    CHECK(m.cells[i].spec.params.at("BLOCK") == std::vector<std::int64_t>{128, 256});
    CHECK(m.cells[i].spec.params.at("UNROLL") == std::vector<std::int64_t>{1, 2});
    REQUIRE(m.cells[i].spec.constraints.size() == 1);
    CHECK(m.cells[i].spec.constraints[0].expr.text() == "BLOCK * UNROLL >= 128");
  }
}

TEST_CASE("a tuning matrix's errors name the matrix file's line and column") {
  CHECK(error_of(replace(kMatrix, "[float32, int32]", "[float32, int9]")) ==
        "m.yaml:3:19: unsupported dtype 'int9'; the reduce family supports int32, uint32, int64, uint64, float32, "
        "float64");
  CHECK(error_of(replace(kMatrix, "abs: [false, true]", "abs: [false, maybe]")) ==
        "m.yaml:10:18: abs must be true or false, not 'maybe'");
  CHECK(error_of(replace(kMatrix, "kernels: [warp_shuffle]", "kernels: [warp_shufle]")).rfind("m.yaml:14:15: no reduce kernel named 'warp_shufle' (did you mean 'warp_shuffle'?)", 0) == 0);
  CHECK(error_of(replace(kMatrix, "operation: sum", "operation: summ")).rfind("m.yaml:11:16: ", 0) == 0);
  CHECK(error_of(replace(kMatrix, "warmup: 2", "size: 2")) ==
        "m.yaml:4:7: a tuning matrix lists its cells: operations: [{operation: ...}, ...], dtypes: [...] and "
        "sizes: [...], not 'size'");
  CHECK(error_of(replace(kMatrix, "    dtypes: [float64]", "    dtype: float64")).rfind("m.yaml:12:5: unknown key 'dtype' in an entry of operations (did you mean 'dtypes'?)", 0) == 0);
  CHECK(error_of(replace(kMatrix, "sizes: [2^10, 2^14]", "sizes: [2^10, 2^10]")) ==
        "m.yaml:2:15: the cell 'argmax abs=false float32 2^10' is in the matrix twice (an earlier entry has it already)");
  CHECK(error_of(replace(kMatrix, "sizes: [2^10, 2^14]\n", "")) ==
        "m.yaml:8:5: no sizes: give sizes: [2^10, 2^14, ...] at the top or in this entry");
  CHECK(error_of(replace(kMatrix, "sizes: [2^10, 2^14]", "sizes: [2^10, [3]]")) ==
        "m.yaml:2:15: sizes: each item must be a single value");
  CHECK(error_of(replace(kMatrix, "{BLOCK: [256]", "{BLOCKZ: [256]")).rfind("m.yaml:15:14: no kernel being tuned has a parameter 'BLOCKZ'", 0) == 0);
  CHECK(error_of("family: reduce\noperations: []\nsizes: [1]\ndtypes: [float32]\n") ==
        "m.yaml:2:13: operations must be a non-empty list of entries, each with operation: and optionally its options, "
        "dtypes, sizes, kernels and params");
}

TEST_CASE("a second run of a tuning matrix measures only the cells missing") {
  test::TempDir dir;
  const TuneMatrix m = matrix_of(kMatrix);
  const MatrixResults results(dir.path() / "out");
  std::vector<std::string> swept;
  const CellSweep sweep = [&](const MatrixCell& cell) {
    swept.push_back(cell.id);
    if (cell.id == "argmax abs=true int32 2^14") throw DeviceError("it does not fit");  // fails the cell only
    return fake_sweep(cell);
  };
  std::vector<std::string> progress;
  MatrixSummary s = run_matrix(m, results, sweep, [&](const MatrixProgress& p) {
    if (p.result)
      progress.push_back(std::to_string(p.position) + "/" + std::to_string(p.total) + " " +
                         cell_status_name(p.result->status));
  });
  CHECK(swept.size() == 9);
  CHECK(s.measured == 9);
  CHECK(s.failed == 1);
  CHECK(progress.front() == "1/9 ok");
  CHECK(progress[7] == "8/9 failed");
  const auto ok = results.read(m.cells[0]);
  REQUIRE(ok);
  CHECK(ok->status == CellResult::Status::ok);
  CHECK(ok->winner_label == "onepass BLOCK=256 UNROLL=4 BLOCKS_PER_SM=2 LOAD=0 SPLIT=0 WAVES=1 FOLD=1");
  CHECK(ok->speedup() == doctest::Approx(2.0).epsilon(0.01));
  CHECK(ok->counts.at("ok") == 12);
  const auto failed = results.read(m.cells[7]);
  REQUIRE(failed);
  CHECK(failed->status == CellResult::Status::failed);
  CHECK(failed->message == "it does not fit");

  // Two results lost, one cell failed last time: the plan says so, and only those three run.
  std::filesystem::remove(results.cell_path(m.cells[2]));
  std::filesystem::remove(results.cell_path(m.cells[8]));
  MatrixPlan plan = plan_matrix(m, results);
  CHECK(plan.reused == 6);
  CHECK(plan.missing == 2);
  CHECK(plan.failed_before == 1);
  swept.clear();
  s = run_matrix(m, results, [&](const MatrixCell& cell) {
    swept.push_back(cell.id);
    return fake_sweep(cell);
  });
  CHECK(swept == std::vector<std::string>{m.cells[2].id, m.cells[7].id, m.cells[8].id});
  CHECK(s.skipped == 6);
  CHECK(plan_matrix(m, results).reused == 9);

  // A cell whose sweep lost the CUDA context: nothing recorded for it, the next process goes on there.
  std::filesystem::remove(results.cell_path(m.cells[3]));
  std::filesystem::remove(results.cell_path(m.cells[5]));
  swept.clear();
  CHECK_THROWS_AS(run_matrix(m, results,
                             [&](const MatrixCell& cell) -> CellResult {
                               swept.push_back(cell.id);
                               throw ContextLost("a variant faulted", {});
                             }),
                  ContextLost);
  CHECK(swept == std::vector<std::string>{m.cells[3].id});
  CHECK_FALSE(results.read(m.cells[3]));
  swept.clear();
  run_matrix(m, results, [&](const MatrixCell& cell) {
    swept.push_back(cell.id);
    return fake_sweep(cell);
  });
  CHECK(swept == std::vector<std::string>{m.cells[3].id, m.cells[5].id});

  // --stop-after: no cell starts once `stop` says so; the rest is left for the next run.
  for (std::size_t i : {1, 4, 6}) std::filesystem::remove(results.cell_path(m.cells[i]));
  swept.clear();
  s = run_matrix(
      m, results,
      [&](const MatrixCell& cell) {
        swept.push_back(cell.id);
        return fake_sweep(cell);
      },
      {}, [&] { return swept.size() == 1; });
  CHECK(swept == std::vector<std::string>{m.cells[1].id});
  CHECK(s.left == 2);
  CHECK(plan_matrix(m, results).missing == 2);

  // Other settings (more repeats): every cell is stale and measured again.
  const TuneMatrix changed = matrix_of(replace(kMatrix, "repeats: 7", "repeats: 8"));
  plan = plan_matrix(changed, results);
  CHECK(plan.stale == 7);
  CHECK(plan.missing == 2);  // left by --stop-after above
  CHECK(plan.reused == 0);
}

TEST_CASE("the matrix's export is a shipped file that the variant lookup reads") {
  test::TempDir dir;
  const TuneMatrix m = matrix_of(kMatrix);
  const MatrixResults results(dir.path() / "out");
  run_matrix(m, results, [&](const MatrixCell& cell) -> CellResult {
    if (cell.id == "argmax abs=false int32 2^14") return failed_cell(cell, "no GPU today");
    return fake_sweep(cell);
  });
  std::vector<std::string> missing;
  const auto entries = matrix_entries(m, results, &missing);
  CHECK(entries.size() == 8);
  CHECK(missing == std::vector<std::string>{"argmax abs=false int32 2^14"});
  const std::filesystem::path shipped = dir.path() / "extra" / "tuned" / "sm_99.json";
  TuningDb::merge_into(shipped, entries);

  const KernelLibrary library({test::kernels_dir(), dir.path() / "extra"});
  TuningSources tuning;
  add_shipped_tuning(tuning, library, "sm_99");
  REQUIRE(tuning.shipped.size() == 1);
  CHECK(tuning.warnings.empty());
  const auto choose = [&](const std::string& yaml) {
    const RunSpec spec = parse_run_spec(yaml, "c.yaml", plugins(), library);
    return choose_variant(problem_of(spec), variant_request(spec), plugins().get(spec.family), library, test_gpu(),
                          tuning);
  };
  // 2^12 is two buckets from the tuned 2^10 and 2^14: the larger wins the draw.
  Choice c = choose("family: reduce\noperation: argmax\ndtype: float32\nsize: 4096\n");
  CHECK(c.source == Choice::Source::shipped);
  CHECK(c.file->name == "onepass");
  CHECK(c.params == std::map<std::string, std::int64_t>{{"BLOCK", 256}, {"UNROLL", 4}, {"BLOCKS_PER_SM", 2},
                                                      {"LOAD", 0}, {"SPLIT", 0}, {"WAVES", 1}, {"FOLD", 1}});
  CHECK(c.why.find("n within 4x of the tuned 2^14") != std::string::npos);
  c = choose("family: reduce\noperation: sum\ndtype: float64\nsize: 2^21\n");
  CHECK(c.source == Choice::Source::shipped);
  CHECK(c.file->name == "warp_shuffle");
  // The failed cell exported nothing; its neighbour at 2^10 is within 4x of 2^12.
  c = choose("family: reduce\noperation: argmax\ndtype: int32\nsize: 2^12\n");
  CHECK(c.source == Choice::Source::shipped);
  CHECK(c.why.find("n within 4x of the tuned 2^10") != std::string::npos);
  // No entry within 4x: the family's choice or the defaults, as without a shipped file.
  c = choose("family: reduce\noperation: argmax\ndtype: int32\nsize: 2^17\n");
  CHECK(c.source == Choice::Source::defaults);
}

TEST_CASE("the shipped matrices cover every operation and dtype of their family, each cell a few variants") {
  DeviceInfo h100 = test_gpu();  // the H100's limits
  h100.cc_minor = 0;
  for (const char* name : {"tune_matrix_sort.yaml", "tune_matrix_reduce.yaml", "tune_matrix_search.yaml"}) {
    CAPTURE(name);
    const TuneMatrix m = load_tune_matrix(test::source_dir() / "configs" / name, plugins(), kernels());
    const FamilyPlugin& plugin = plugins().get(m.family);
    std::set<std::string> covered, sizes;
    for (const auto& cell : m.cells) {
      CAPTURE(cell.id);
      const RunSpec& r = cell.spec.run;
      covered.insert(r.operation + " " + std::string(dtype_name(r.dtype)));
      sizes.insert(size_text(r.size));
      // Every cell has something that can run, and not many things.
      const Space space = Space::from_spec(cell.spec, kernels());
      const Problem problem = problem_of(r);
      const auto leading = plugin.template_args(problem);
      const LaunchLimits limits = launch_limits(problem, h100);
      int runnable = 0;
      std::map<std::string, int> why;
      for (std::uint64_t i = 0; i < space.size(); ++i) {
        std::string reason;
        runnable += space.prune(space.at(i), leading, limits, nullptr, &reason) ? 0 : 1;
        ++why[reason];
      }
      if (runnable == 0)
        for (const auto& [reason, count] : why) MESSAGE(count << " pruned: " << reason);
      CHECK(runnable >= 1);
      CHECK(runnable <= 8);
    }
    for (const auto& operation : plugin.operations())
      for (DType t : plugin.dtypes()) CHECK(covered.count(operation + " " + std::string(dtype_name(t))) == 1);
    // Every bucket from 2^10 to 2^30 is within two of a tuned one (the lookup's factor 4).
    CHECK(sizes == std::set<std::string>{"2^12", "2^16", "2^20", "2^24", "2^28"});
  }
}

namespace {

using test::fake_cell_sweep;

std::map<std::string, std::string> winners(const std::vector<TuningEntry>& entries) {
  std::map<std::string, std::string> out;
  for (const auto& e : entries) {
    std::string params;
    for (const auto& [k, v] : e.params) params += k + "=" + std::to_string(v) + " ";
    out[e.key.operation + " " + e.key.options + " " + e.key.dtype + " " + std::to_string(e.key.bucket)] =
        e.kernel + " " + params;
  }
  return out;
}

}  // namespace

TEST_CASE("--shard K/N: every cell in exactly one shard, the same shares on every run, at most one apart") {
  const TuneMatrix m = matrix_of(kMatrix);
  for (int n : {1, 2, 3, 4, 9, 12}) {
    CAPTURE(n);
    std::map<std::string, int> owners;
    std::vector<std::size_t> sizes;
    for (int k = 0; k < n; ++k) {
      const TuneMatrix part = shard_of(m, {k, n});
      sizes.push_back(part.cells.size());
      for (const auto& cell : part.cells) {
        ++owners[cell.id];
        CHECK(in_shard(cell, {k, n}));
        CHECK(m.cells[cell.index].id == cell.id);  // each keeps its index, id and file
      }
      // Read again (another run, another host): the same cells.
      const TuneMatrix again = shard_of(matrix_of(kMatrix), {k, n});
      REQUIRE(again.cells.size() == part.cells.size());
      for (std::size_t i = 0; i < part.cells.size(); ++i) CHECK(again.cells[i].id == part.cells[i].id);
    }
    CHECK(owners.size() == m.cells.size());
    for (const auto& owner : owners) CHECK_MESSAGE(owner.second == 1, owner.first);  // no binding in a macro's lambda (clang)
    CHECK(*std::max_element(sizes.begin(), sizes.end()) - *std::min_element(sizes.begin(), sizes.end()) <= 1);
  }
  CHECK(parse_shard("2/3").index == 2);
  CHECK(parse_shard("2/3").count == 3);
  CHECK(parse_shard("0/1").count == 1);
  CHECK_THROWS_WITH_AS(parse_shard("3/3"),
                       "--shard 3/3: shards are counted from 0, so shard 3 of 3 does not exist (the last is 2/3)",
                       ConfigError);
  for (const char* bad : {"1", "1/0", "-1/3", "a/3", "1/3x", "/3", "1/"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_shard(bad), ConfigError);
  }
}

TEST_CASE("three shards merged give the same results and winners as one unsharded run") {
  test::TempDir dir;
  const TuneMatrix m = matrix_of(kMatrix);
  const MatrixResults whole(dir.path() / "whole");
  run_matrix(m, whole, fake_cell_sweep);
  const auto expected = winners(matrix_entries(m, whole));
  REQUIRE(expected.size() == 9);
  std::set<std::string> distinct;
  for (const auto& [cell, w] : expected) distinct.insert(w);
  CHECK(distinct.size() >= 3);  // the cells do not all have one winner

  std::vector<std::filesystem::path> dirs;
  for (int k = 0; k < 3; ++k) {
    dirs.push_back(dir.path() / ("shard-" + std::to_string(k)));
    const MatrixResults part(dirs.back());
    const MatrixSummary s = run_matrix(shard_of(m, {k, 3}), part, fake_cell_sweep);
    CHECK(s.measured == 3);
    // Each shard's journal travels in its directory (gpuk tune --shard keeps it there).
    std::filesystem::create_directories(dirs.back() / "journal");
    std::ofstream(dirs.back() / "journal" / "j.jsonl") << "{\"shared\":1}\n{\"shard\":" << k << "}\n";
  }
  // A shard alone has a third of the winners.
  CHECK(matrix_entries(m, MatrixResults(dirs[0])).size() == 3);

  const MatrixResults merged(dir.path() / "merged");
  const MergeSummary s = merge_matrix_results(m, dirs, merged);
  CHECK(s.cells == 9);
  CHECK(s.missing.empty());
  CHECK(s.duplicates == 0);
  CHECK(s.stale == 0);
  CHECK(s.gpus == std::vector<std::string>{"Test GPU"});
  CHECK(s.journal_lines == 4);  // the shared line once, each shard's own
  CHECK(winners(matrix_entries(m, merged)) == expected);
  for (const auto& cell : m.cells) {
    const auto a = whole.read(cell), b = merged.read(cell);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(b->status == a->status);
    CHECK(b->winner_label == a->winner_label);
    CHECK(b->fingerprint == a->fingerprint);
  }

  // Two shards only: the third's cells are missing, and say so; merging again into a shard's
  // own directory is fine (it is one of the inputs).
  const MatrixResults partial(dir.path() / "partial");
  const MergeSummary p = merge_matrix_results(m, {dirs[0], dirs[1]}, partial);
  CHECK(p.cells == 6);
  CHECK(p.missing.size() == 3);
  CHECK(merge_matrix_results(m, dirs, MatrixResults(dirs[0])).cells == 9);
  CHECK(winners(matrix_entries(m, MatrixResults(dirs[0]))) == expected);

  // A result of other settings is not merged; a failed one loses to an ok one.
  const TuneMatrix changed = matrix_of(replace(kMatrix, "repeats: 7", "repeats: 8"));
  const MergeSummary c = merge_matrix_results(changed, {dirs[1]}, MatrixResults(dir.path() / "changed"));
  CHECK(c.cells == 0);
  CHECK(c.stale == 3);  // shard 1's three cells, measured with 7 repeats
  MatrixResults(dirs[2]).write(m.cells[0], failed_cell(m.cells[0], "GPU gone"));
  const MatrixResults again(dir.path() / "again");
  const MergeSummary d = merge_matrix_results(m, {dirs[2], whole.dir()}, again);
  CHECK(d.duplicates >= 1);
  CHECK(again.read(m.cells[0])->status == CellResult::Status::ok);
  CHECK_THROWS_AS(merge_matrix_results(m, {dir.path() / "nowhere"}, again), ConfigError);
}

TEST_CASE("gpuk tune MATRIX --merge through the command line: the shards' winners exported as one run's") {
  test::TempDir dir;
  dir.write("m.yaml", kMatrix);
  const std::string yaml = (dir.path() / "m.yaml").string();
  const TuneMatrix m = load_tune_matrix(yaml, plugins(), kernels());
  const MatrixResults whole(dir.path() / "whole");
  run_matrix(m, whole, fake_cell_sweep);
  const auto expected = winners(matrix_entries(m, whole));
  std::string shards;
  for (int k = 0; k < 3; ++k) {
    const std::filesystem::path d = dir.path() / ("shard-" + std::to_string(k));
    run_matrix(shard_of(m, {k, 3}), MatrixResults(d), fake_cell_sweep);
    shards += " " + d.string();
  }
  const std::string gpuk = std::string(GPUK_EXE) + " --tuning-db " + (dir.path() / "db.json").string() + " tune " + yaml;
  const auto merged = test::run_command(gpuk + " --merge" + shards + " --out " + (dir.path() / "merged").string() +
                                        " --export " + (dir.path() / "e.json").string());
  CAPTURE(merged.output);
  CHECK(merged.status == 0);
  CHECK(merged.output.find("merged 3 directories into") != std::string::npos);
  CHECK(merged.output.find(": 9 of 9 cells;") != std::string::npos);
  CHECK(merged.output.find("matrix done: 9 ok;") != std::string::npos);
  CHECK(merged.output.find("exported 9 verified winners to") != std::string::npos);
  CHECK(winners(TuningDb::read(dir.path() / "e.json").entries()) == expected);

  // Two shards of three: the missing cells are named and the status says so.
  const auto partial = test::run_command(gpuk + " --merge " + (dir.path() / "shard-0").string() + " " +
                                         (dir.path() / "shard-2").string() + " --out " +
                                         (dir.path() / "partial").string());
  CAPTURE(partial.output);
  CHECK(partial.status == 1);
  CHECK(partial.output.find("3 cells without a result in any directory, e.g. argmax abs=false float32 2^14") !=
        std::string::npos);

  // Mistakes are said before anything runs.
  const auto bad = test::run_command(gpuk + " --shard 3/3");
  CHECK(bad.status == 2);
  CHECK(bad.output.find("shard 3 of 3 does not exist (the last is 2/3)") != std::string::npos);
  const auto plain = test::run_command(std::string(GPUK_EXE) + " tune " +
                                       (test::source_dir() / "configs" / "tune_sort.yaml").string() + " --shard 0/2");
  CHECK(plain.status == 2);
  CHECK(plain.output.find("--shard and --merge split and join a tuning matrix's cells") != std::string::npos);
  const auto both = test::run_command(gpuk + " --shard 0/2 --merge" + shards);
  CHECK(both.status == 2);
}
