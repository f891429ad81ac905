// PreparedSizes (gpuk/gpuk.hpp): an Operation per size bucket of [1, max_n], prepared together,
// so that no call of a prepared handle chooses, compiles, loads or allocates.
#include <algorithm>
#include <bit>

#include "api/api_state.hpp"
#include "gpuk/error.hpp"
#include "plugin/problem.hpp"

namespace gpuk {

PreparedSizes::PreparedSizes(std::string what, std::uint64_t max_n, std::vector<Operation> operations,
                             std::uint64_t step, int first_bucket)
    : what_(std::move(what)), max_n_(max_n), step_(std::max<std::uint64_t>(1, step)), first_bucket_(first_bucket),
      operations_(std::move(operations)) {}

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

namespace {
// An n above max_n or not a multiple of step: the words, out of the hot path.
[[noreturn]] void refuse(const std::string& what, std::uint64_t max_n, std::uint64_t step, std::uint64_t n) {
  const std::string who = what.empty() ? std::string("this handle") : what;
  if (n > max_n)
    throw ConfigError(who + " was prepared for n up to " + std::to_string(max_n) + "; n = " + std::to_string(n) +
                      " needs a handle prepared for it");
  throw ConfigError(who + " serves multiples of " + std::to_string(step) + " elements; n = " + std::to_string(n) +
                    " is not one");
}
}  // namespace

Operation& PreparedSizes::at(std::uint64_t n) {
  // The hot path of every handle's call: two comparisons, the words only when they are needed.
  if (n > max_n_ || (step_ != 1 && n % step_ != 0)) refuse(what_, max_n_, step_, n);
  // n's bucket [2^k, 2^(k+1)): k = bit_width(n) - 1; a multiple of step is never below the first.
  return operations_[static_cast<std::size_t>(std::bit_width(n) - 1 - first_bucket_)];
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

PreparedSizes Engine::prepare_sizes(const OperationSpec& spec, std::uint64_t step) const {
  // The whole spec is checked once, before the GPU, with n = step standing for "some n".
  OperationSpec one = spec;
  one.n = std::max<std::uint64_t>(step, 1);
  const FamilyPlugin& plugin = state_->plugins.get(spec.family);
  const Problem problem = make_problem(plugin, spec.operation, spec.dtype, spec.options, one.n);
  if (step == 0) throw ConfigError("prepare_sizes: step must be at least 1, not 0");
  std::string what = problem.family + " " + problem.operation;
  std::vector<Operation> operations;
  const int first_bucket = std::bit_width(step) - 1;  // buckets below step's hold no multiple of it
  for (std::uint64_t first = std::uint64_t{1} << first_bucket; spec.n >= step && first <= spec.n; first <<= 1) {
    // The bucket's first multiple of step (step itself in step's bucket; within 2 * first above).
    one.n = (first + step - 1) / step * step;
    if (one.n > spec.n) break;  // the last bucket holds no multiple of step up to spec.n
    operations.push_back(prepare(one));
    if (first > (spec.n >> 1)) break;  // the last bucket (and no overflow of first << 1)
  }
  return PreparedSizes(std::move(what), spec.n, std::move(operations), step, first_bucket);
}

}  // namespace gpuk
