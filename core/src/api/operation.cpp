// The library API's Operation: a prepared variant launched on the caller's device pointers and
// stream. The hot path checks its arguments, makes the context current if it is not, and
// enqueues the kernels; it plans again only when n changes.
#include <algorithm>
#include <cstring>

#include "api/api_state.hpp"
#include "gpuk/error.hpp"

namespace gpuk {

Operation::State::~State() {
  if (!context || device_hung()) return;
  CUcontext current = nullptr;
  if (driver().cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != context) driver().cuCtxSetCurrent(context);
}

Operation::Operation(std::unique_ptr<State> state) : state_(std::move(state)) {}
Operation::Operation(Operation&&) noexcept = default;
Operation& Operation::operator=(Operation&&) noexcept = default;
Operation::~Operation() = default;

const std::vector<ArraySlot>& Operation::arrays() const { return state_->slots; }
const std::optional<ScalarSlot>& Operation::scalar() const { return state_->scalar; }
std::uint64_t Operation::min_n() const { return state_->min_n; }
std::uint64_t Operation::max_n() const { return state_->max_n; }
const std::string& Operation::variant() const { return state_->label; }
const std::string& Operation::chosen() const { return state_->choice.why; }
const std::vector<std::string>& Operation::warnings() const { return state_->choice.warnings; }
std::uint64_t Operation::scratch_bytes() const { return state_->scratch_needed; }
std::uint64_t Operation::held_bytes() const { return state_->own_scratch.bytes() + state_->own_result.bytes(); }

void Operation::State::plan_for(std::uint64_t n) {
  for (EarlierPlan& e : earlier)
    if (e.n == n) {  // planned before: swapped in, the current one taking its place
      std::swap(e.n, planned_n);
      std::swap(e.plan, plan);
      std::swap(e.functions, functions);
      return;
    }
  EarlierPlan next = new_plan(n);
  EarlierPlan& oldest = earlier[next_earlier];
  next_earlier = (next_earlier + 1) % kEarlierPlans;
  oldest = {planned_n, std::move(plan), std::move(functions)};
  planned_n = n;
  plan = std::move(next.plan);
  functions = std::move(next.functions);
}

Operation::State::EarlierPlan Operation::State::new_plan(std::uint64_t n) const {
  Problem at = problem;
  at.n = n;
  const LaunchLimits limits = launch_limits(at, info);
  EarlierPlan next{n, plan_launches(*variant, limits), {}};
  if (const auto misfit = check_fit(next.plan, kernels, limits, info, where)) throw ConfigError(misfit->detail);
  if (scratch && launcher->scratch_bytes(next.plan) > scratch_bytes)
    throw ConfigError(where + ": n = " + std::to_string(n) + " needs " +
                      std::to_string(launcher->scratch_bytes(next.plan)) + " bytes of scratch; the Operation has " +
                      std::to_string(scratch_bytes));
  next.functions = bind(next.plan, kernels);
  return next;
}

void Operation::use_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) {
  State& s = *state_;
  if (!scratch) throw ConfigError(s.what + ": the scratch is a null device pointer");
  if (bytes < s.scratch_needed)
    throw ConfigError(s.what + ": " + s.label + " needs " + std::to_string(s.scratch_needed) + " bytes of scratch, not " +
                      std::to_string(bytes));
  s.engine->device();  // current on this thread
  s.launcher->init_scratch(scratch, bytes, stream);
  s.own_scratch = DeviceBuffer();
  s.scratch = scratch;
  s.scratch_bytes = bytes;
  // Plans kept from before were checked against the old scratch: made again when next needed.
  for (State::EarlierPlan& e : s.earlier) e.n = 0;
}

namespace {

// Why a call is refused: the words, built only when a call is wrong (out of the hot path).
[[noreturn]] void refuse(const Operation::State& s, DeviceArrays arrays, std::uint64_t n, const Scalar* scalar) {
  check_arrays(s.what, s.slots, arrays, false);
  if (n < s.min_n || n > s.max_n) {
    if (n == 0) throw ConfigError("size must be at least 1, not 0");
    throw ConfigError(s.what + " was prepared for n in [" + std::to_string(s.min_n) + ", " + std::to_string(s.max_n) +
                      "] (its size bucket); n = " + std::to_string(n) + " needs an Operation of its own");
  }
  if (s.scalar && !scalar)
    throw ConfigError(s.what + " takes the " + s.scalar->name + " (" + std::string(dtype_name(s.scalar->dtype)) +
                      ") besides its arrays; none was given");
  if (s.scalar && scalar->dtype != s.scalar->dtype)
    throw ConfigError(s.what + " of " + std::string(dtype_name(s.problem.dtype)) + " takes a " +
                      std::string(dtype_name(s.scalar->dtype)) + " " + s.scalar->name + ", not a " +
                      std::string(dtype_name(scalar->dtype)) + " one");
  if (s.scalar && scalar->count != s.scalar->count)
    throw ConfigError(s.what + " takes " + std::to_string(s.scalar->count) + " " + s.scalar->name + " value" +
                      (s.scalar->count == 1 ? "" : "s") + ", not " + std::to_string(scalar->count));
  if (!s.scratch) throw ConfigError(s.what + ": no scratch yet: give it one with use_scratch()");
  throw Error(s.what + ": a call was refused for no reason it can name");  // unreachable: the checks agree
}

// The caller had another context current (another device's, or one of cuCtxCreate): a stream
// made in it cannot run this device's kernels, and the driver would only say "invalid handle" at
// the launch. The default streams belong to whichever context is current.
void make_current(const DriverApi& api, const Operation::State& s, CUstream stream) {
  if (stream && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD) {
    CUcontext of_stream = nullptr;
    if (api.cuStreamGetCtx(stream, &of_stream) == CUDA_SUCCESS && of_stream != s.context)
      throw ConfigError(s.what + ": the stream belongs to another CUDA context; gpuk runs in device " +
                        std::to_string(s.info.ordinal) +
                        "'s primary context (the CUDA runtime's): make the stream there (cudaSetDevice(" +
                        std::to_string(s.info.ordinal) + "), cudaStreamCreate), not in a context of cuCtxCreate "
                        "or another device's");
  }
  GPUK_CU(api.cuCtxSetCurrent(s.context));
}

}  // namespace

void Operation::launch(DeviceArrays arrays, std::uint64_t n, CUstream stream, const Scalar* scalar) {
  State& s = *state_;
  // The hot path of every call (a prepared handle's too): one test per condition, and the
  // words of a refusal only when one fails (refuse()).
  bool ok = arrays.size() == s.slots.size() && n >= s.min_n && n <= s.max_n && s.scratch != 0 &&
            (!s.scalar || (scalar && scalar->dtype == s.scalar->dtype && scalar->count == s.scalar->count));
  for (std::size_t i = 0; ok && i < arrays.size(); ++i) ok = arrays[i] != 0;
  if (!ok) refuse(s, arrays, n, scalar);
  const DriverApi& api = driver();
  CUcontext current = nullptr;
  GPUK_CU(api.cuCtxGetCurrent(&current));
  if (current != s.context) make_current(api, s, stream);
  if (n != s.planned_n) s.plan_for(n);
  const LaunchTarget target{s.plan, s.functions.data(), stream, s.where};
  const DeviceCall call{arrays.data(), n, s.scratch, s.scratch_bytes, scalar ? scalar->data() : nullptr};
  s.launcher->launch(target, call);
}

std::vector<std::byte> Operation::launch_and_read(DeviceArrays arrays, std::uint64_t n,
                                                  CUstream stream, const Scalar* scalar) {
  State& s = *state_;
  std::size_t result = s.slots.size();
  for (std::size_t i = 0; i < s.slots.size(); ++i)
    if (s.slots[i].host_result) result = i;
  if (result == s.slots.size())
    throw ConfigError(s.what + " has no small answer to read back: its results are the device arrays it writes");
  check_arrays(s.what, s.slots, arrays, true);
  CUdeviceptr call[DeviceAddressList::kMax] = {};  // every operation takes at most kMax arrays
  if (arrays.size() > DeviceAddressList::kMax)
    throw ConfigError(s.what + " takes more arrays than a call can pass (" + std::to_string(arrays.size()) + ")");
  std::copy(arrays.begin(), arrays.end(), call);
  if (!call[result]) {
    if (!s.own_result.get()) {
      s.engine->device();
      s.own_result = DeviceBuffer(s.slots[result].bytes);
    }
    call[result] = s.own_result.get();
  }
  launch(DeviceArrays(call, arrays.size()), n, stream, scalar);
  std::vector<std::byte> bytes(s.slots[result].bytes);
  GPUK_CU(driver().cuMemcpyDtoHAsync(bytes.data(), call[result], bytes.size(), stream), s.where);
  GPUK_CU(driver().cuStreamSynchronize(stream), "after running " + s.where);
  return bytes;
}

}  // namespace gpuk
