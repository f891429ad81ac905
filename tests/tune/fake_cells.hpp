// A tuning matrix's cell swept without a GPU: the real tune() with the fake measurer, as the GPU
// sweep reports it, each cell with its own winner; and a matrix read from its text. Shared by the
// matrix tests and the fake shard tool of the Slurm test (tests/tune/slurm_shards.sh).
#pragma once
#include <cmath>

#include "builtins.hpp"
#include "gpuk/error.hpp"
#include "device/device.hpp"
#include "tune/matrix/matrix.hpp"
#include "tune_helpers.hpp"

namespace gpuk::test {

// The matrix the trust tests sweep and then tamper with: argmax (abs false and true) and argmin,
// two BLOCKs by two UNROLLs each.
inline const char* kTrustMatrix = R"(family: reduce
sizes: [2^10]
dtypes: [float32]
warmup: 2
repeats: 7
kernels: [onepass]
params: {BLOCK: [128, 256], UNROLL: [1, 2], BLOCKS_PER_SM: [2]}
operations:
  - operation: argmax
    abs: [false, true]
  - operation: argmin
)";

// A matrix config's text read as the file m.yaml, with the built-in plugins and kernels; or the
// ConfigError it raises ("(no error)" when none).
inline TuneMatrix matrix_of(const std::string& text) { return parse_tune_matrix(text, "m.yaml", plugins(), kernels()); }

inline std::string error_of(const std::string& text) {
  try {
    matrix_of(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// The fastest BLOCK is 128, 256 or 512 by the cell's index (then the smallest UNROLL), so that
// cells have different winners. A kernel without BLOCK (a declared kernel's: block_size_x,
// TILE_M, ...): each parameter's best is 2^3, 2^4 or 2^5 by the cell's index and its place.
inline CellResult fake_cell_sweep(const MatrixCell& cell) {
  const Space space = Space::from_spec(cell.spec, kernels());
  FakeMeasurer measurer;
  measurer.sizes = cell.spec.run.sizes;
  const double best_log2 = 7.0 + static_cast<double>(cell.index % 3);
  const auto index = static_cast<double>(cell.index);
  measurer.outcome = [best_log2, index](const std::map<std::string, std::int64_t>& p) {
    Outcome o;
    double c = 1.0;
    if (p.count("BLOCK")) {
      c += 0.1 * std::pow(std::log2(static_cast<double>(p.at("BLOCK"))) - best_log2, 2) +
           (p.count("UNROLL") ? 0.01 * static_cast<double>(p.at("UNROLL")) : 0.0);
    } else {
      double place = 0;
      for (const auto& [name, v] : p)
        c += 0.1 * std::pow(std::log2(static_cast<double>(v)) - 3 - std::fmod(index + place++, 3.0), 2);
    }
    o.samples = {c, c, c, c, c};
    return o;
  };
  TuneOptions options;
  options.recheck_top = 2;
  options.recheck_repeats = 5;
  TuneReport report =
      make_tune_report(cell.spec, options, tune(space, measurer, options), test_gpu(), 1 << 20, false, {});
  return cell_result(cell, report, space);
}

}  // namespace gpuk::test
