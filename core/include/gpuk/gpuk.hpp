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
// the last plan), so it serves one stream, from one thread, at a time: prepare one per stream.
// Engine::launch does that for you (one Operation per spec, size bucket and stream).
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
#include <span>
#include <string>
#include <vector>

#include "gpuk/dtype.hpp"
#include "gpuk/error.hpp"

namespace gpuk {

class KernelLibrary;
class PluginRegistry;
struct DeviceInfo;

// One device array an operation reads or writes: what a launch takes, in the Launcher's order.
struct ArraySlot {
  std::string name;          // "input", "result", "keys_out"
  bool output = false;       // written by the operation
  std::string type;          // "float32", or a result's layout: "{float32 value; int64 index at byte 8}"
  std::uint64_t bytes = 0;   // for the prepared n
  bool host_result = false;  // a small answer that the library's synchronous call copies back
};

// A value an operation takes by value, besides its arrays (search: the value searched for).
struct ScalarSlot {
  std::string name;
  DType dtype = DType::float32;
};

// One value of a dtype, as its bits (ScalarSlot's argument).
struct Scalar {
  DType dtype = DType::float32;
  std::uint64_t bits = 0;
  template <class T> static Scalar of(T v) {
    Scalar s;
    s.dtype = dtype_of<T>();
    std::memcpy(&s.bits, &v, sizeof v);
    return s;
  }
  const void* data() const { return &bits; }
};

// Where an Engine finds things; every default is the CLI's (README, "The command line").
struct EngineOptions {
  int device = 0;                                    // CUDA device ordinal
  std::vector<std::filesystem::path> kernel_dirs;    // after the built-in one and $GPUK_KERNELS
  std::vector<std::filesystem::path> plugin_dirs;    // after the built-in one and $GPUK_PLUGINS
  std::optional<std::filesystem::path> cache_dir;    // default $GPUK_CACHE_DIR, else ~/.cache/gpuk
  bool no_cache = false;                             // compile without the on-disk cache
  std::optional<std::filesystem::path> tuning_db;    // default $GPUK_TUNING_DB, else in the cache dir
  // Warnings (a stale tuning entry passed over, a plugin that did not load). Default: one line
  // "gpuk: warning: ..." on stderr.
  std::function<void(const std::string&)> on_warning;
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
};

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
  void launch(std::span<const CUdeviceptr> arrays, std::uint64_t n, CUstream stream, const Scalar* scalar = nullptr);
  void launch(std::initializer_list<CUdeviceptr> arrays, std::uint64_t n, CUstream stream,
              const Scalar* scalar = nullptr) {
    launch(std::span<const CUdeviceptr>(arrays.begin(), arrays.size()), n, stream, scalar);
  }
  // launch(), then copies the small answer (the arrays() entry marked host_result) to the host
  // and waits for the stream. That entry may be 0: the Operation then writes the answer to a
  // buffer of its own. Throws ConfigError for an operation without one (a sort).
  std::vector<std::byte> launch_and_read(std::span<const CUdeviceptr> arrays, std::uint64_t n, CUstream stream,
                                         const Scalar* scalar = nullptr);

  struct State;  // opaque: core/src/api
  explicit Operation(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

class Engine {
 public:
  // Loads the plugins and reads the kernel files; the GPU is opened on the first prepare().
  explicit Engine(EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // A ready Operation for spec.n's size bucket. Checks the spec before it touches the GPU
  // (an unknown family, operation, option or kernel, a dtype the family lacks, n = 0, a
  // parameter value the metadata does not allow: ConfigError with the config's words).
  Operation prepare(const OperationSpec& spec) const;

  // prepare() once per spec, size bucket and stream (kept for the Engine's life), then launch:
  // what the families' typed calls use. The arrays are checked before anything is prepared.
  void launch(const OperationSpec& spec, std::span<const CUdeviceptr> arrays, CUstream stream,
              const Scalar* scalar = nullptr) const;
  std::vector<std::byte> launch_and_read(const OperationSpec& spec, std::span<const CUdeviceptr> arrays,
                                         CUstream stream, const Scalar* scalar = nullptr) const;

  // Where this Engine found its files (what `gpuk list` shows): the families whose plugins
  // loaded, a family's plugin file, and a family's kernel files.
  std::vector<std::string> families() const;
  std::filesystem::path plugin_path(const std::string& family) const;
  std::vector<std::filesystem::path> kernel_files(const std::string& family) const;
  std::string device_name() const;  // "NVIDIA H100 80GB HBM3"; opens the GPU if it is not open yet

  // Core's own types, for code built inside gpuk's tree (tools, tests): their headers are not
  // installed.
  const PluginRegistry& plugins() const;
  const KernelLibrary& kernels() const;
  const DeviceInfo& device() const;  // opens the GPU if it is not open yet

  struct State;  // opaque: core/src/api

 private:
  std::shared_ptr<State> state_;
};

}  // namespace gpuk
