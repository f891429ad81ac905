// The fake shard tool of the Slurm test (tests/tune/slurm_shards.sh): a tuning matrix's share run
// as `gpuk tune MATRIX --shard K/N --out DIR` runs it, with the fake measurer instead of a GPU,
// and a comparison of two exported tuning files' winners.
//
//   gpuk_fake_shard MATRIX K/N DIR      the share's cells into DIR (as run_matrix writes them)
//   gpuk_fake_shard --same A.json B.json  exit 0 when both files hold the same winners
#include <iostream>
#include <map>

#include "fake_cells.hpp"
#include "gpuk/error.hpp"

using namespace gpuk;

namespace {

std::map<TuningKey, std::pair<std::string, std::map<std::string, std::int64_t>>> winners(const char* path) {
  std::map<TuningKey, std::pair<std::string, std::map<std::string, std::int64_t>>> out;
  const TuningDb db = TuningDb::read(path);
  for (const auto& e : db.entries()) out[e.key] = {e.kernel, e.params};
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 4 && std::string(argv[1]) == "--same") {
      const auto a = winners(argv[2]), b = winners(argv[3]);
      std::cout << argv[2] << ": " << a.size() << " winners; " << argv[3] << ": " << b.size() << " winners; "
                << (a == b && !a.empty() ? "the same" : "DIFFERENT") << "\n";
      return a == b && !a.empty() ? 0 : 1;
    }
    if (argc != 4) {
      std::cerr << "usage: gpuk_fake_shard MATRIX K/N DIR | gpuk_fake_shard --same A.json B.json\n";
      return 2;
    }
    const TuneMatrix m = load_tune_matrix(argv[1], test::plugins(), test::kernels());
    const TuneMatrix part = shard_of(m, parse_shard(argv[2]));
    const MatrixSummary s = run_matrix(part, MatrixResults(argv[3]), test::fake_cell_sweep);
    std::cout << "shard " << argv[2] << ": " << s.measured << " of " << m.cells.size() << " cells measured into "
              << argv[3] << "\n";
    return s.failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "gpuk_fake_shard: " << e.what() << "\n";
    return 1;
  }
}
