// libFuzzer: a tuning matrix's cell file as the merge and the export read it (issue 45). Any file
// must end in a result that winner_mismatch judges, or a gpuk::Error naming what is wrong; the
// merge and the export of a directory holding it must say why they leave it out, and neither may
// ever pass on a winner that its file did not give as verified and ok, nor one the cell did not
// sweep. Each input is tried as it is and with the cell's own id and fingerprint put in (so the
// checks past them run), for a reduce cell and a declared kernel's cell.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "tune/matrix/matrix.hpp"
#include "util/install_dirs.hpp"

namespace {

namespace fs = std::filesystem;

const char* kReduce = R"(family: reduce
sizes: [2^10]
dtypes: [float32]
kernels: [onepass]
params: {BLOCK: [128, 256], UNROLL: [1, 2]}
operations:
  - operation: argmax
)";

const char* kDeclared = R"(family: kernel
reference: {kernel: stencil2d_naive}
operations:
  - operation: stencil2d
    sizes: [{nx: 64, ny: 64}]
    params: {block_size_x: [16, 32], block_size_y: [2, 4], tile_size_y: [1]}
)";

struct World {
  gpuk::PluginRegistry plugins{{gpuk::builtin_plugin_dir()}};
  gpuk::KernelLibrary kernels{{gpuk::builtin_kernel_dir()}};
  gpuk::TuneMatrix reduce = gpuk::parse_tune_matrix(kReduce, "reduce.yaml", plugins, kernels);
  gpuk::TuneMatrix declared = gpuk::parse_tune_matrix(kDeclared, "declared.yaml", plugins, kernels);
  fs::path dir = fs::temp_directory_path() / ("gpuk-fuzz-cells-" + std::to_string(::getpid()));
  ~World() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// What the file says, where it parses: only a verified ok result with a winner may be exported.
bool says_verified_ok(const std::string& text) {
  try {
    const gpuk::CellResult r = gpuk::parse_cell_result(text);
    return r.verified && r.status == gpuk::CellResult::Status::ok && r.winner;
  } catch (const gpuk::Error&) {
    return false;
  }
}

void try_file(const World& world, const gpuk::TuneMatrix& matrix, const std::string& text) {
  const gpuk::MatrixCell& cell = matrix.cells.front();
  try {
    const gpuk::CellResult r = gpuk::parse_cell_result(text);
    (void)gpuk::winner_mismatch(matrix, cell, r);
  } catch (const gpuk::Error&) {
  }
  std::error_code ec;
  fs::remove_all(world.dir, ec);
  const gpuk::MatrixResults in(world.dir / "in"), out(world.dir / "out");
  fs::create_directories(in.cell_path(cell).parent_path());
  std::ofstream(in.cell_path(cell), std::ios::binary) << text;
  const gpuk::MatrixExport e = gpuk::export_matrix(matrix, in);
  if (e.entries.size() + e.skipped.size() != 1) std::abort();
  if (!e.entries.empty()) {
    if (!says_verified_ok(text)) std::abort();  // a winner its file did not give as verified
    const auto& kernels = cell.spec.kernels;
    if (std::find(kernels.begin(), kernels.end(), e.entries.front().kernel) == kernels.end()) std::abort();
  } else if (e.skipped.front().detail.empty() && e.skipped.front().why == gpuk::SkippedCell::Why::refused) {
    std::abort();  // refused without a reason
  }
  try {
    const gpuk::MergeSummary m = gpuk::merge_matrix_results(matrix, {in.dir()}, out);
    if (m.cells + m.missing.size() != 1) std::abort();
    for (const auto& r : m.refused)
      if (r.why.empty()) std::abort();  // never silent about a file it leaves out
    // What was merged reads back as the cell's, and exports as the input did.
    if (m.cells == 1) {
      const auto back = out.load(cell);
      if (back.state != gpuk::CellFile::State::ok || !gpuk::winner_mismatch(matrix, cell, *back.result).empty()) std::abort();
      if (gpuk::export_matrix(matrix, out).entries.size() != e.entries.size()) std::abort();
    }
  } catch (const gpuk::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const World world;
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const gpuk::TuneMatrix* matrix : {&world.reduce, &world.declared}) {
    try_file(world, *matrix, text);
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_object()) {
      j["cell"] = matrix->cells.front().id;
      j["fingerprint"] = gpuk::cell_fingerprint(matrix->cells.front());
      try_file(world, *matrix, j.dump());
    }
  }
  return 0;
}
