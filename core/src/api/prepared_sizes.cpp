// PreparedSizes (gpuk/gpuk.hpp): an Operation per size bucket of [1, max_n], prepared together,
// so that no call of a prepared handle chooses, compiles, loads or allocates.
#include <algorithm>
#include <bit>

#include "api/api_state.hpp"
#include "gpuk/error.hpp"
#include "plugin/problem.hpp"

namespace gpuk {

PreparedSizes::PreparedSizes(std::string what, std::uint64_t max_n, std::vector<Operation> operations)
    : what_(std::move(what)), max_n_(max_n), operations_(std::move(operations)) {}

namespace {
constexpr std::uint64_t aligned(std::uint64_t bytes) { return (bytes + 255) / 256 * 256; }
// A bucket's share of the caller's scratch: never empty (an Operation launches with some).
std::uint64_t share_of(const Operation& op) { return aligned(std::max<std::uint64_t>(1, op.scratch_bytes())); }
}  // namespace

std::uint64_t PreparedSizes::scratch_bytes() const {
  std::uint64_t bytes = 0;
  for (const Operation& op : operations_) bytes += share_of(op);
  return bytes;
}

std::uint64_t PreparedSizes::held_bytes() const {
  std::uint64_t bytes = 0;
  for (const Operation& op : operations_) bytes += op.held_bytes();
  return bytes;
}

void PreparedSizes::use_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) {
  const std::string who = what_.empty() ? std::string("this handle") : what_;
  if (operations_.empty()) return;  // serves n = 0 only: needs none
  if (!scratch) throw ConfigError(who + ": the scratch is a null device pointer");
  if (scratch % 256 != 0)
    throw ConfigError(who + ": the scratch must be 256-byte aligned (cudaMalloc's and cuMemAlloc's are)");
  if (bytes < scratch_bytes())
    throw ConfigError(who + " needs " + std::to_string(scratch_bytes()) + " bytes of scratch (scratch_bytes()), not " +
                      std::to_string(bytes));
  CUdeviceptr at = scratch;
  for (Operation& op : operations_) {
    const std::uint64_t share = share_of(op);
    op.use_scratch(at, share, stream);
    at += share;
  }
}

Operation& PreparedSizes::at(std::uint64_t n) {
  if (n > max_n_)
    throw ConfigError((what_.empty() ? std::string("this handle") : what_) + " was prepared for n up to " +
                      std::to_string(max_n_) + "; n = " + std::to_string(n) + " needs a handle prepared for it");
  return operations_[std::bit_width(n) - 1];  // n's bucket [2^k, 2^(k+1)): k = bit_width(n) - 1
}

void PreparedSizes::launch(DeviceArrays arrays, std::uint64_t n, CUstream stream, const Scalar* scalar) {
  if (n == 0) return;
  at(n).launch(arrays, n, stream, scalar);
}

std::vector<std::byte> PreparedSizes::launch_and_read(DeviceArrays arrays, std::uint64_t n, CUstream stream,
                                                      const Scalar* scalar) {
  if (n == 0) return {};
  return at(n).launch_and_read(arrays, n, stream, scalar);
}

PreparedSizes Engine::prepare_sizes(const OperationSpec& spec) const {
  // The whole spec is checked once, before the GPU, with n = 1 standing for "some n".
  OperationSpec one = spec;
  one.n = std::max<std::uint64_t>(spec.n, 1);
  const FamilyPlugin& plugin = state_->plugins.get(spec.family);
  const Problem problem = make_problem(plugin, spec.operation, spec.dtype, spec.options, one.n);
  std::string what = problem.family + " " + problem.operation;
  std::vector<Operation> operations;
  for (std::uint64_t first = 1; spec.n > 0 && first <= spec.n; first <<= 1) {
    one.n = first;
    operations.push_back(prepare(one));
    if (first > (spec.n >> 1)) break;  // the last bucket (and no overflow of first << 1)
  }
  return PreparedSizes(std::move(what), spec.n, std::move(operations));
}

}  // namespace gpuk
