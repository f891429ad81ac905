// Run-time compilation of kernel files with NVRTC, straight to CUBIN, with an on-disk cache.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_file.hpp"

namespace gpuk {

class NvrtcProcesses;
struct IncludeTree;

struct CompiledKernels {
  std::vector<char> cubin;
  std::vector<std::string> name_expressions;
  std::vector<std::string> lowered_names;  // same order as name_expressions
  std::string log;                         // NVRTC's warnings, if any
  bool from_cache = false;
  std::string cache_key;

  const std::string& lowered(const std::string& name_expression) const;
};

std::string nvrtc_version();  // "13.0"

// Content-keyed cache of compiled CUBINs. Entries are written to a temporary file and renamed
// into place, so a reader never sees half an entry; a damaged entry is detected by its checksum
// and rebuilt. The directory is created private to the user (0700); when it cannot be written, or
// others can write to it (a planted CUBIN would run), the cache is off and gpuk warns once.
// Temporary files of writers that were killed are removed when a cache is opened.
class CompileCache {
 public:
  explicit CompileCache(std::optional<std::filesystem::path> dir);
  static std::filesystem::path default_dir();  // $GPUK_CACHE_DIR, $XDG_CACHE_HOME/gpuk, ~/.cache/gpuk

  bool enabled() const { return dir_.has_value(); }
  const std::optional<std::filesystem::path>& dir() const { return dir_; }
  std::optional<CompiledKernels> load(const std::string& key) const;
  void store(const CompiledKernels& compiled) const;
  std::filesystem::path entry_path(const std::string& key) const;

 private:
  std::optional<std::filesystem::path> dir_;
};

struct JitOptions {
  std::string arch = "sm_90";               // the GPU's own architecture: CUBIN, no PTX JIT
  std::vector<std::filesystem::path> include_dirs;
  std::vector<std::string> extra_options;   // passed to NVRTC as they are
  bool line_info = true;                    // -lineinfo, for compute-sanitizer and profilers
};

// The options every gpuk JIT compiles with: CUBIN for `arch`, the kernel files' include
// directories (the Runtime's JIT, the tuner's, the tools').
JitOptions jit_options(const std::string& arch, const KernelLibrary& kernels);

// The name expressions of one variant split into the programs that compile them: one per set of
// -D definitions ("stencil2d -Dblock_size_x=32": a params_as: defines file, whose launches may
// each override parameters: LaunchSpec::params), in their first name's order. Names without
// definitions are one program.
std::vector<std::vector<std::string>> programs_by_defines(const std::vector<std::string>& name_expressions);

class Jit {
 public:
  Jit(JitOptions options, const CompileCache* cache);

  // Compiles every name expression of one kernel file in one NVRTC program (or takes it from the
  // cache). Throws CompileError with the file's path, line, column and the offending line.
  // `processes`: NVRTC runs in one of them (jit/nvrtc_processes.hpp), else in this thread.
  CompiledKernels compile(const KernelFile& file, const std::vector<std::string>& name_expressions,
                          NvrtcProcesses* processes = nullptr) const;

  // The cache key: a hash of the source and every header it includes, the name expressions, the
  // options, the NVRTC version and the architecture.
  std::string cache_key(const KernelFile& file, const std::vector<std::string>& name_expressions) const;

  const JitOptions& options() const { return options_; }

 private:
  std::vector<std::string> nvrtc_options() const;
  std::string cache_key(const KernelFile& file, const std::vector<std::string>& name_expressions,
                        const IncludeTree& tree) const;
  JitOptions options_;
  const CompileCache* cache_;
};

// Turns NVRTC's "path(12): error: ..." log into "path:12:5: error: ..." followed by the source
// line and a caret, for the lines of `program` (the kernel file), using its source.
std::string format_compile_log(const std::string& log, const std::string& source, const std::string& program);

}  // namespace gpuk
