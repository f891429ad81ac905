// gpuk as a library: the one header an application includes (docs/api.md).
//
//   gpuk::Engine engine;                                   // device 0, the CLI's directories
//   gpuk::Operation argmax = engine.prepare({"reduce", "argmax", gpuk::DType::float32, {}, n});
//   argmax.launch({d_in, d_out}, n, stream);               // asynchronous, on the caller's stream
//
// prepare() chooses the variant as `gpuk run` does (the named kernel, else the fastest known:
// run/choose.hpp), compiles it (or takes it from the on-disk cache), loads it, checks it against
// the device and allocates its scratch. launch() then enqueues its kernels on device pointers the
// caller owns, on the caller's CUstream (a cudaStream_t is one): no copies, no host
// synchronisation, the answer written to device memory. Errors are exceptions of gpuk/error.hpp,
// with the words `gpuk run` uses.
//
// Threads: an Engine may be shared; several threads may prepare and launch at once (compiled
// modules are shared process-wide). One Operation keeps state between its launches (scratch,
// its last plans), so it serves one stream, from one thread, at a time: prepare one per stream.
// Engine::launch does that for you (one Operation per spec, size bucket and stream, in a bounded
// cache: EngineOptions::cache_max_*, Engine::release_cached). Prepared handles
// (gpuk::sort::prepare_pairs, ...: PreparedSizes) prepare every size up to a max_n at once.
//
// The families' typed calls (gpuk::reduce::argmax, gpuk::search::find, gpuk::sort::keys, ...)
// are in their plugins' headers: gpuk/reduce.hpp, gpuk/search.hpp, gpuk/sort.hpp.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "gpuk/dtype.hpp"
#include "gpuk/error.hpp"

namespace gpuk {

// One device address: a CUdeviceptr, or any pointer to device memory (a float*, a Best<float>*),
// so that launch({d_in, d_best}, ...) needs no casts. A null pointer (nullptr, 0) stays 0.
struct DeviceAddress {
  CUdeviceptr value = 0;
  constexpr DeviceAddress(CUdeviceptr address) : value(address) {}
  constexpr DeviceAddress(std::nullptr_t) {}
  constexpr DeviceAddress(int address) : value(static_cast<CUdeviceptr>(address)) {}  // a literal 0
  template <class T> DeviceAddress(T* pointer) : value(reinterpret_cast<CUdeviceptr>(pointer)) {}
};

// The device arrays of a call, in the Operation's arrays() order: a pointer and a count (what
// std::span<const CUdeviceptr> is in C++20; gpuk's public headers are C++17). Made from a
// C array, a std::vector, std::array or std::span of CUdeviceptr, or a pointer and a size;
// a braced list of typed pointers goes through the initializer_list overloads.
class DeviceArrays {
 public:
  constexpr DeviceArrays(const CUdeviceptr* data, std::size_t size) : data_(data), size_(size) {}
  template <std::size_t N> constexpr DeviceArrays(const CUdeviceptr (&arrays)[N]) : data_(arrays), size_(N) {}
  template <class C, class = std::enable_if_t<std::is_convertible_v<decltype(std::declval<const C&>().data()),
                                                                    const CUdeviceptr*>>>
  constexpr DeviceArrays(const C& arrays) : data_(arrays.data()), size_(arrays.size()) {}

  constexpr const CUdeviceptr* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr const CUdeviceptr* begin() const { return data_; }
  constexpr const CUdeviceptr* end() const { return data_ + size_; }
  constexpr const CUdeviceptr& operator[](std::size_t i) const { return data_[i]; }

 private:
  const CUdeviceptr* data_;
  std::size_t size_;
};

// A braced list's addresses as CUdeviceptr, for the initializer_list overloads (no allocation:
// no operation takes more than kMax arrays).
class DeviceAddressList {
 public:
  static constexpr std::size_t kMax = 8;
  DeviceAddressList(std::initializer_list<DeviceAddress> list) : size_(list.size()) {
    if (size_ > kMax) throw ConfigError("a call takes at most " + std::to_string(kMax) + " arrays, not " + std::to_string(size_));
    std::size_t i = 0;
    for (const DeviceAddress& a : list) values_[i++] = a.value;
  }
  operator DeviceArrays() const { return {values_, size_}; }

 private:
  CUdeviceptr values_[kMax] = {};
  std::size_t size_;
};

// One device array an operation reads or writes: what a launch takes, in the Launcher's order.
struct ArraySlot {
  std::string name;          // "input", "result", "keys_out"
  bool output = false;       // written by the operation
  std::string type;          // "float32", or a result's layout: "{float32 value; int64 index at byte 8}"
  std::uint64_t bytes = 0;   // for the prepared n
  bool host_result = false;  // a small answer that the library's synchronous call copies back
};

// A value an operation takes by value, besides its arrays (search: the value searched for; a
// range's two bounds, lo then hi: count 2).
struct ScalarSlot {
  std::string name;
  DType dtype = DType::float32;
  int count = 1;  // how many values of the dtype: 1 or 2
};

// One or two values of a dtype, as their bits (ScalarSlot's argument): data() points at `count`
// 8-byte words, value i's bits in word i (the launcher packs them as the kernel takes them).
struct Scalar {
  DType dtype = DType::float32;
  std::uint64_t bits = 0;    // the first value
  std::uint64_t second = 0;  // the second value (count 2); the word right after `bits`
  int count = 1;
  template <class T> static Scalar of(T v) {
    Scalar s;
    s.dtype = dtype_of<T>();
    std::memcpy(&s.bits, &v, sizeof v);
    return s;
  }
  template <class T> static Scalar pair(T first, T second) {
    Scalar s = of(first);
    std::memcpy(&s.second, &second, sizeof second);
    s.count = 2;
    return s;
  }
  const void* data() const { return &bits; }
};
static_assert(offsetof(Scalar, second) == offsetof(Scalar, bits) + sizeof(std::uint64_t));

// Which tuning files pick an Engine's variants (docs/api.md, "Pinning the variant"). The default
// is the CLI's lookup: the user's tuning database, then the file shipped for the GPU's
// architecture, then the family's choice and the defaults. An application that must not change
// with what its user tuned pins it: shipped_only (the shipped file, the family's choice, the
// defaults: what a fresh install does), file (this file where the user's database would be,
// then the shipped file; a missing or damaged file is a ConfigError, as `--tuning FILE` is), or
// none (no tuning file at all: the family's choice and the defaults).
struct TuningPolicy {
  enum class Source { user_database, shipped_only, file, none };
  Source source = Source::user_database;
  std::filesystem::path file;  // Source::file's

  static TuningPolicy user_database() { return {}; }
  static TuningPolicy shipped_only() { return {Source::shipped_only, {}}; }
  static TuningPolicy from_file(std::filesystem::path path) { return {Source::file, std::move(path)}; }
  static TuningPolicy none() { return {Source::none, {}}; }
};

// Device memory for the scratch of Engine::launch's cached Operations (the typed calls'), from
// the application's pool instead of gpuk's cuMemAlloc (docs/api.md, "Memory"). allocate(bytes,
// stream) returns at least `bytes` on the Engine's device, 256-byte aligned (a stream-ordered pool
// may allocate on `stream`, the call's); free(pointer, bytes) gives it back when the cache frees
// the Operation, after the device has finished with it (or when the Engine is destroyed, which
// does not wait). Either may be called from any thread that makes a typed call.
struct ScratchAllocator {
  std::function<CUdeviceptr(std::uint64_t bytes, CUstream stream)> allocate;
  std::function<void(CUdeviceptr pointer, std::uint64_t bytes)> free;
};

// Where an Engine finds things; every default is the CLI's (README, "The command line").
struct EngineOptions {
  int device = 0;                                    // CUDA device ordinal
  std::vector<std::filesystem::path> kernel_dirs;    // after the built-in one and $GPUK_KERNELS
  std::vector<std::filesystem::path> plugin_dirs;    // after the built-in one and $GPUK_PLUGINS
  std::optional<std::filesystem::path> cache_dir;    // default $GPUK_CACHE_DIR, else ~/.cache/gpuk
  bool no_cache = false;                             // compile without the on-disk cache
  std::optional<std::filesystem::path> tuning_db;    // default $GPUK_TUNING_DB, else in the cache dir
  TuningPolicy tuning;                               // which tuning files pick variants (above)
  // Warnings (a stale tuning entry passed over, a plugin that did not load). Default: one line
  // "gpuk: warning: ..." on stderr.
  std::function<void(const std::string&)> on_warning;
  // Engine::launch's cache (the typed calls'): one prepared Operation per spec, size bucket and
  // stream, at most cache_max_operations of them holding at most cache_max_bytes of device
  // memory; the least recently used go first (docs/api.md, "Memory"). The one just used stays.
  std::size_t cache_max_operations = 64;
  std::uint64_t cache_max_bytes = std::uint64_t{1} << 30;  // counting the allocator's scratch too
  // The cache's scratch from the application's allocator; none: gpuk allocates it.
  std::optional<ScratchAllocator> scratch_allocator;
};

// The directory of the libgpuk_core this program loaded (PREFIX/lib, or build/lib): where the
// plugins and kernel files an Engine finds by default lie, relative to it.
std::filesystem::path library_dir();

// The first and last n of n's power-of-two size bucket [2^k, 2^(k+1)): the sizes an Operation
// prepared for n serves.
std::uint64_t bucket_first(std::uint64_t n);
std::uint64_t bucket_last(std::uint64_t n);

// What to prepare: a config's problem, without its data.
struct OperationSpec {
  std::string family;     // "reduce"
  std::string operation;  // "argmax"
  DType dtype = DType::float32;
  std::map<std::string, std::string> options;  // the family's options ("abs": "true"); others default
  std::uint64_t n = 0;                         // elements; the Operation serves n's size bucket
  std::optional<std::string> kernel;           // run exactly this kernel file; default: the lookup
  std::map<std::string, std::int64_t> params;  // its parameters (the others at their defaults)
  bool allocate_scratch = true;                // false: the caller passes it (Operation::use_scratch)
  // A declared kernel (the `kernel` family, docs/declared.md): its named sizes, every one. `kernel`
  // names it (or `operation` does); n is left 0. The Operation serves exactly these sizes: launch
  // it with n = max_n() and its arrays in the declaration's order.
  std::map<std::string, std::int64_t> sizes;
};

// Who provides a prepared handle's scratch: the handle (allocated when it is made), or the
// caller (use_scratch(), before the first call: an application's memory pool stays in charge).
enum class Scratch { owned, caller };

class Operation {
 public:
  Operation(Operation&&) noexcept;
  Operation& operator=(Operation&&) noexcept;
  ~Operation();

  // The arrays launch() takes, in order (names, input or output, layout, bytes for the prepared n).
  const std::vector<ArraySlot>& arrays() const;
  // The value launch() takes besides them, if any (search: the value searched for).
  const std::optional<ScalarSlot>& scalar() const;
  // The sizes this Operation serves: the power-of-two bucket of the n it was prepared for.
  std::uint64_t min_n() const;
  std::uint64_t max_n() const;
  const std::string& variant() const;  // "onepass BLOCK=256 UNROLL=1 BLOCKS_PER_SM=4"
  const std::string& chosen() const;   // why this variant (the report's `chosen` line)
  const std::vector<std::string>& warnings() const;
  std::uint64_t scratch_bytes() const;  // what use_scratch needs

  // Replaces the Operation's scratch with the caller's (at least scratch_bytes(), kept alive by
  // the caller while the Operation is used), initialised on `stream`; frees its own.
  void use_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream);

  // Enqueues the variant on `stream` for n elements (in [min_n(), max_n()]) of `arrays` (device
  // pointers in arrays() order). Returns at once: no copy, no synchronisation. Throws
  // ConfigError for a wrong count of arrays, a null pointer, an n outside the bucket, a missing
  // or mistyped scalar; DeviceError when the driver refuses the launch.
  void launch(DeviceArrays arrays, std::uint64_t n, CUstream stream, const Scalar* scalar = nullptr);
  void launch(std::initializer_list<DeviceAddress> arrays, std::uint64_t n, CUstream stream,
              const Scalar* scalar = nullptr) {
    launch(DeviceAddressList(arrays), n, stream, scalar);
  }
  // launch(), then copies the small answer (the arrays() entry marked host_result) to the host
  // and waits for the stream. That entry may be 0: the Operation then writes the answer to a
  // buffer of its own. Throws ConfigError for an operation without one (a sort).
  std::vector<std::byte> launch_and_read(DeviceArrays arrays, std::uint64_t n, CUstream stream,
                                         const Scalar* scalar = nullptr);
  std::vector<std::byte> launch_and_read(std::initializer_list<DeviceAddress> arrays, std::uint64_t n, CUstream stream,
                                         const Scalar* scalar = nullptr) {
    return launch_and_read(DeviceAddressList(arrays), n, stream, scalar);
  }
  // The device memory this Operation owns (its scratch, its result buffer): what it frees.
  std::uint64_t held_bytes() const;

  struct State;  // opaque: core/src/api
  explicit Operation(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

// Operations for every n in [1, max_n]: one per size bucket, all prepared (chosen, compiled,
// loaded, their scratch allocated) when it is made, freed when it is destroyed. What the
// families' prepared handles (gpuk::sort::prepare_pairs, ...) hold. Like an Operation it serves
// one stream at a time (any stream), from one thread at a time.
class PreparedSizes {
 public:
  PreparedSizes() = default;  // serves no n but 0
  // operations[i]: the size bucket [2^(first_bucket + i), 2^(first_bucket + i + 1)); every n
  // served is a multiple of `step` (Engine::prepare_sizes).
  PreparedSizes(std::string what, std::uint64_t max_n, std::vector<Operation> operations, std::uint64_t step = 1,
                int first_bucket = 0);
  PreparedSizes(PreparedSizes&&) noexcept = default;  // moves, as its Operations do; never copied
  PreparedSizes& operator=(PreparedSizes&&) noexcept = default;
  PreparedSizes(const PreparedSizes&) = delete;
  PreparedSizes& operator=(const PreparedSizes&) = delete;

  std::uint64_t max_n() const { return max_n_; }
  std::uint64_t step() const { return step_; }
  // The scratch of every bucket together (each bucket's share 256-byte aligned): what it holds
  // when it allocated its own, what use_scratch() takes when prepared with allocate_scratch false.
  std::uint64_t scratch_bytes() const;
  // The device memory it owns: its own scratch, if any, and result buffers.
  std::uint64_t held_bytes() const;
  // The caller's scratch for every bucket (at least scratch_bytes(), kept alive by the caller
  // while the handle is used), carved into each bucket's share and initialised on `stream`.
  void use_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream);
  const std::vector<Operation>& operations() const { return operations_; }

  // n = 0: nothing is launched; n in [1, max_n]: its bucket's Operation launches; a larger n,
  // or one that is not a multiple of step(): ConfigError. launch_and_read of n = 0 returns no bytes.
  void launch(DeviceArrays arrays, std::uint64_t n, CUstream stream, const Scalar* scalar = nullptr);
  std::vector<std::byte> launch_and_read(DeviceArrays arrays, std::uint64_t n, CUstream stream,
                                         const Scalar* scalar = nullptr);
  void launch(std::initializer_list<DeviceAddress> arrays, std::uint64_t n, CUstream stream,
              const Scalar* scalar = nullptr) {
    launch(DeviceAddressList(arrays), n, stream, scalar);
  }
  std::vector<std::byte> launch_and_read(std::initializer_list<DeviceAddress> arrays, std::uint64_t n, CUstream stream,
                                         const Scalar* scalar = nullptr) {
    return launch_and_read(DeviceAddressList(arrays), n, stream, scalar);
  }

 private:
  Operation& at(std::uint64_t n);
  std::string what_;
  std::uint64_t max_n_ = 0;
  std::uint64_t step_ = 1;
  int first_bucket_ = 0;
  std::vector<Operation> operations_;  // [k - first_bucket_]: the bucket [2^k, 2^(k+1))
};

class Engine;

// What every family's prepared handle is (gpuk::sort::prepare_pairs, gpuk::reduce::prepare_argmax,
// gpuk::search::prepare_find, ...): a PreparedSizes for one spec, its scratch owned or the
// caller's (Scratch::caller: use_scratch() before the first call; docs/api.md, "Caller-owned
// scratch"). The families' handles add the typed calls.
class PreparedHandle {
 public:
  // step: every n served is a multiple of it (Engine::prepare_sizes).
  PreparedHandle(const Engine& e, OperationSpec spec, Scratch scratch, std::uint64_t step = 1);
  std::uint64_t max_n() const { return sizes_.max_n(); }
  // The scratch its Operations need together: what it holds, or what use_scratch() takes.
  std::uint64_t scratch_bytes() const { return sizes_.scratch_bytes(); }
  // The device memory it owns: its scratch (unless the caller's) and the result buffers of the
  // host-returning calls (allocated by the first of them).
  std::uint64_t held_bytes() const { return sizes_.held_bytes(); }
  // Scratch::caller: the caller's device memory (at least scratch_bytes(), 256-byte aligned,
  // alive and used by nothing else while the handle may run), initialised on `stream`.
  void use_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) { sizes_.use_scratch(scratch, bytes, stream); }
  template <class T> void use_scratch(T* scratch, std::uint64_t bytes, CUstream stream) {
    use_scratch(reinterpret_cast<CUdeviceptr>(scratch), bytes, stream);
  }
  const PreparedSizes& sizes() const { return sizes_; }

 protected:
  PreparedSizes sizes_;
};

// The GPU an Engine runs on (Engine::device()), as the driver describes it, and the NVRTC gpuk
// compiles for it with: what a report's head says, and what an application sizes its work by.
struct DeviceDescription {
  int ordinal = 0;                 // the CUDA device ordinal (EngineOptions::device)
  std::string name;                // "NVIDIA H100 80GB HBM3"
  std::string arch;                // "sm_90": the architecture gpuk compiles for
  int cc_major = 0, cc_minor = 0;  // its compute capability, 9.0
  int sm_count = 0;                // streaming multiprocessors
  std::uint64_t total_memory = 0;  // bytes of device memory
  std::uint64_t l2_bytes = 0;      // bytes of L2 cache
  double peak_bandwidth_gbs = 0;   // 2 x memory clock x bus width: the datasheet figure, GB/s
  std::string pci_bus_id;          // "0000:1B:00.0" ("" when the driver does not say)
  int driver_version = 0;          // the driver's CUDA version, 1000 x major + 10 x minor: 13000
  std::string nvrtc_version;       // "13.0": the NVRTC gpuk compiles with
};

class Engine {
 public:
  // Loads the plugins and reads the kernel files; the GPU is opened on the first prepare().
  explicit Engine(EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  // A moved-from Engine may only be destroyed or assigned to. Operations and prepared handles
  // keep what they need of their Engine alive: they may outlive it.
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;

  // A ready Operation for spec.n's size bucket. Checks the spec before it touches the GPU
  // (an unknown family, operation, option or kernel, a dtype the family lacks, n = 0, a
  // parameter value the metadata does not allow: ConfigError with the config's words).
  Operation prepare(const OperationSpec& spec) const;

  // An Operation for each size bucket of [1, spec.n] (spec.n: the largest n it will serve), all
  // prepared now: spec is checked as prepare() checks it, spec.n = 0 gives one serving nothing.
  // step > 1: every n served is a multiple of step (interleaved data's elements per pixel, a
  // problem that refuses other sizes): each bucket is prepared at its first multiple of step,
  // and the buckets below step, which hold none, are left out.
  PreparedSizes prepare_sizes(const OperationSpec& spec, std::uint64_t step = 1) const;

  // prepare() once per spec, size bucket and stream (kept in a bounded cache: EngineOptions),
  // then launch: what the families' typed calls use. The arrays are checked before anything is
  // prepared.
  void launch(const OperationSpec& spec, DeviceArrays arrays, CUstream stream,
              const Scalar* scalar = nullptr) const;
  std::vector<std::byte> launch_and_read(const OperationSpec& spec, DeviceArrays arrays,
                                         CUstream stream, const Scalar* scalar = nullptr) const;
  void launch(const OperationSpec& spec, std::initializer_list<DeviceAddress> arrays, CUstream stream,
              const Scalar* scalar = nullptr) const {
    launch(spec, DeviceAddressList(arrays), stream, scalar);
  }
  std::vector<std::byte> launch_and_read(const OperationSpec& spec, std::initializer_list<DeviceAddress> arrays,
                                         CUstream stream, const Scalar* scalar = nullptr) const {
    return launch_and_read(spec, DeviceAddressList(arrays), stream, scalar);
  }

  // Engine::launch's cache: how many Operations it holds, and their device memory.
  std::size_t cached_operations() const;
  std::uint64_t cached_bytes() const;
  // Frees every cached Operation, after the device has finished the work enqueued so far (a
  // context synchronisation, when any was cached). Later calls prepare again.
  void release_cached() const;

  // Where this Engine found its files (what `gpuk list` shows): the families whose plugins
  // loaded, a family's plugin file, and a family's kernel files.
  std::vector<std::string> families() const;
  std::filesystem::path plugin_path(const std::string& family) const;
  std::vector<std::filesystem::path> kernel_files(const std::string& family) const;
  std::string device_name() const;  // "NVIDIA H100 80GB HBM3"; opens the GPU if it is not open yet
  // The GPU this Engine runs on (above); opens it if it is not open yet. Throws NoDeviceError
  // when there is none, or no GPU of EngineOptions::device.
  DeviceDescription device() const;

  struct State;  // opaque: core/src/api

 private:
  friend struct EngineInternals;  // core's own types, for code built inside gpuk's tree (api/engine_internals.hpp)
  std::shared_ptr<State> state_;
};

inline PreparedHandle::PreparedHandle(const Engine& e, OperationSpec spec, Scratch scratch, std::uint64_t step) {
  spec.allocate_scratch = scratch == Scratch::owned;
  sizes_ = e.prepare_sizes(spec, step);
}

}  // namespace gpuk
