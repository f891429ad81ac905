// Whether a cell file may stand for its cell: the one check that a run's plan, the merge of shards
// and the export make of every cell file they read. A cell file is data from a disk, a copy from
// another host or a hand edit: its verdict, kernel, parameters and sizes are checked against the
// matrix, never taken from the file (docs/reliability.md, "What a merge and an export check").
#include <algorithm>

#include "gpuk/dtype.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "tune/matrix/matrix.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

std::string numbers(const std::vector<std::int64_t>& values) {
  std::vector<std::string> out;
  for (auto v : values) out.push_back(std::to_string(v));
  return join(out);
}

// Why `e`'s variant cannot serve every n of its size bucket (the lookup offers an entry tuned at
// 2^12 for 4,096..8,191), or "" when it can. Constraints are checked at the bucket's ends and
// middle; those naming sm_count are left to the lookup, which knows the GPU. A declared kernel's
// entry serves only the named sizes of its key (`run`'s): its constraints are checked there.
std::string outside_its_bucket(const Variant& variant, const TuningEntry& e, const RunSpec& run) {
  const auto dtype = parse_dtype(e.key.dtype);
  const std::int64_t low = std::int64_t{1} << e.key.bucket, high = 2 * low - 1;
  std::vector<std::int64_t> ns = {low, low + low / 2, high};
  if (!run.sizes.empty()) ns = {static_cast<std::int64_t>(run.size)};
  for (const std::int64_t n : ns) {
    LaunchLimits limits;
    limits.n = n;
    limits.elem_bytes = dtype ? static_cast<int>(dtype_size(*dtype)) : 0;
    limits.sizes = run.sizes;
    if (const Constraint* c = broken_constraint(variant, limits))
      return variant.label() + " breaks '" + c->expr.text() + "' for " +
             (run.sizes.empty() ? "n = " + std::to_string(n) : options_key(run.options));
  }
  return "";
}

std::string problem_text(const std::string& family, const std::string& operation, const std::string& options,
                         const std::string& dtype) {
  return printable(family + " " + operation + (options.empty() ? "" : " " + options) + " " + dtype, 200);
}

}  // namespace

std::string entry_mismatch(const MatrixCell& cell, const TuningEntry& e, const KernelLibrary& kernels) {
  const TuneSpec& spec = cell.spec;
  // A kernel the cell did not sweep: a declared cell of `scale` whose file named `stencil2d` (other
  // arrays, other sizes) was exported under `scale`.
  if (std::find(spec.kernels.begin(), spec.kernels.end(), e.kernel) == spec.kernels.end())
    return "its winner is kernel " + printable(e.kernel, 80) + ", not one the cell swept (" + join(spec.kernels) + ")";
  try {
    const auto file = kernels.find(spec.run.family, e.kernel);
    // Every parameter of the kernel, each with a value the cell swept (the config's list, else the
    // metadata's): a winner the sweep could not have measured is not the cell's.
    for (const auto& p : file->params) {
      const auto it = e.params.find(p.name);
      if (it == e.params.end()) return "its winner gives no value for " + p.name + " of " + file->name;
      const auto swept = spec.params.find(p.name);
      const std::vector<std::int64_t>& values = swept == spec.params.end() ? p.values : swept->second;
      if (std::find(values.begin(), values.end(), it->second) == values.end())
        return "its winner's " + p.name + " = " + std::to_string(it->second) + " is not a value the cell swept (" +
               numbers(values) + ")";
    }
    // Unknown parameters, values the metadata does not allow and the constraints between
    // parameters: as a run of the entry would check them.
    const Variant variant(file, {}, e.params);
    return outside_its_bucket(variant, e, spec.run);
  } catch (const ConfigError& error) {
    return printable(error.what(), 400);
  }
}

std::string winner_mismatch(const TuneMatrix& matrix, const MatrixCell& cell, const CellResult& r,
                            const KernelLibrary* kernels) {
  if (r.winner && !r.verified) return "its file says \"verified\": false";
  if ((r.status == CellResult::Status::ok) != r.winner.has_value())
    return std::string("its status is \"") + cell_status_name(r.status) + "\" " +
           (r.winner ? "with a winner" : "without a winner");
  const RunSpec& s = cell.spec.run;
  const std::string options = options_key(s.options), dtype(dtype_name(s.dtype));
  const std::string cell_is = problem_text(s.family, s.operation, options, dtype) + " at n = " + std::to_string(s.size);
  if (r.family != s.family || r.operation != s.operation || r.options != options || r.dtype != dtype || r.size != s.size)
    return "its file is of " + problem_text(r.family, r.operation, r.options, r.dtype) + " at n = " +
           std::to_string(r.size) + ", the cell " + cell_is;
  // The variants a group of kinds chooses among: only kernels the cell swept.
  for (const auto& v : r.variants)
    if (std::find(cell.spec.kernels.begin(), cell.spec.kernels.end(), v.kernel) == cell.spec.kernels.end())
      return "its variants name kernel " + printable(v.kernel, 80) + ", not one the cell swept (" +
             join(cell.spec.kernels) + ")";
  if (!r.winner) return "";
  const TuningKey& k = r.winner->key;
  if (k.family != s.family || k.operation != s.operation || k.options != options || k.dtype != dtype ||
      k.bucket != size_bucket(s.size))
    return "its winner is an entry of " + problem_text(k.family, k.operation, k.options, k.dtype) + " at 2^" +
           std::to_string(k.bucket) + ", the cell " + cell_is;
  if (k.objective != objective_name(cell.spec.objective))
    return "its winner is ranked by " + printable(k.objective, 40) + ", the cell by " + objective_name(cell.spec.objective);
  if (!kernels) kernels = matrix.kernels;
  if (!kernels) throw Error("winner_mismatch of " + cell.id + ": no kernel library to check the winner against");
  return entry_mismatch(cell, *r.winner, *kernels);
}

}  // namespace gpuk
