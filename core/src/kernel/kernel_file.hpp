// A kernel source file and the metadata block it starts with (docs/kernels.md describes it).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuk/dtype.hpp"
#include "kernel/expr.hpp"

namespace gpuk {

struct ParamSpec {
  std::string name;
  std::int64_t default_value = 0;
  std::vector<std::int64_t> values;  // allowed values, ascending
  int line = 0;                      // in the kernel file
};

struct Constraint {
  Expr expr;
  int line = 0;
};

struct LaunchSpec {
  std::string entry;  // the __global__ template's name
  Expr grid, block, shared_bytes;  // grid and block: the x dimension
  std::vector<Expr> grid_yz, block_yz;  // a declared kernel's y and z dimensions, if any (0 to 2 each)
  // A declared kernel's argument list for this launch, by name (its args and scratch arrays);
  // empty: every declared argument, in order.
  std::vector<std::string> args;
  // `when:` the launch runs only when this is non-zero for the problem (absent: always);
  // `repeat:` how many times it runs in a row (absent: once). The family decides what differs
  // between the repeats (a sort's digit passes).
  std::optional<Expr> when;
  std::optional<Expr> repeat;
  // A declared launch's own parameter values (`params: {num_blocks: 1}`), over the variant's for
  // this launch alone: its expressions, its arguments' values and its instantiation (template
  // arguments or -D definitions). Empty: the variant's.
  std::map<std::string, std::int64_t> params;
  int line = 0;
};

// How a variant's parameters reach its kernel: as template arguments (`entry<p1, p2>`, gpuk's
// convention) or as NVRTC -D definitions (the convention of files written for other tuners).
enum class ParamsAs { template_args, defines };

struct Declaration;  // kernel/declaration.hpp: a declared kernel's sizes, arguments, scratch, metrics

struct KernelFile {
  std::filesystem::path path;
  std::string name;    // the file's stem: "onepass"
  std::string family;  // "reduce"
  std::vector<std::string> operations;
  std::vector<std::string> operation_where;  // "path:line:col" of each of operations
  std::vector<DType> dtypes;  // those the file supports (all when the metadata names none)
  std::string summary, fixes;
  std::vector<ParamSpec> params;  // in template-argument order
  std::vector<Constraint> constraints;
  std::vector<LaunchSpec> launches;
  Expr scratch;  // scratch slots the family allocates for the kernel
  std::string source;
  ParamsAs params_as = ParamsAs::template_args;
  // A declared kernel's operation (docs/declared.md): its named sizes, arguments, scratch arrays,
  // bytes and metrics; null for a file of the three families' kind.
  std::shared_ptr<const Declaration> declaration;
  // A file with no metadata block and no declaration beside it (plain CUDA written for another
  // tuner): listed under its folder's family, run only with a config's `declare:`.
  bool plain = false;
  // Where the JIT finds the headers it includes (besides its own folder): the library's include
  // folders (KernelLibrary::include_dirs); empty for a file parsed on its own.
  std::vector<std::filesystem::path> include_dirs;
  // NVRTC options of every program of the file, after gpuk's own: a declaration's checked
  // compiler_options and its untuned defines as -DNAME=VALUE (kernel/compile_options.hpp). Part
  // of the compile cache's key.
  std::vector<std::string> compile_options;

  // Reads and validates a kernel file. Throws ConfigError "path:line:col: what" on a bad
  // metadata block (missing, not YAML, unknown keys, bad values, defaults not allowed). A file
  // without a metadata block takes its declaration from the YAML file beside it with the same
  // stem (kernel/declaration.hpp), or, without one, is a plain file.
  static KernelFile load(const std::filesystem::path& path);
  static KernelFile parse(const std::string& source, const std::filesystem::path& path);

  const ParamSpec* param(const std::string& name) const;
  bool supports(const std::string& operation) const;
  bool supports(DType dtype) const;
};

// Throws ConfigError "path:line:col: ..." (with did-you-mean) when `file` lists an operation its
// family does not have: it would otherwise be compiled silently for fewer kernels.
void check_operations(const KernelFile& file, const std::vector<std::string>& family_operations);

// The kernel files gpuk can see: the built-in kernels_src/ plus extra directories. Files in a
// later directory shadow same-named files of the same family in earlier ones (a copy to tweak).
class KernelLibrary {
 public:
  // Scans each directory recursively for *.cu (an "include" folder is skipped). Files whose
  // metadata is broken are kept as errors, so `list` and `check` can show them. Throws
  // ConfigError when others can write to a directory (util/safe_dirs.hpp).
  explicit KernelLibrary(std::vector<std::filesystem::path> dirs);

  const std::vector<std::filesystem::path>& dirs() const { return dirs_; }
  std::vector<std::filesystem::path> include_dirs() const;  // each dir's include/ that exists
  const std::vector<std::shared_ptr<const KernelFile>>& files() const { return files_; }
  const std::vector<std::string>& errors() const { return errors_; }

  std::vector<std::shared_ptr<const KernelFile>> family(const std::string& family) const;
  // Throws ConfigError listing the family's kernels when there is no such file, or saying that
  // the file of that name is plain CUDA (no metadata, no declaration beside it).
  std::shared_ptr<const KernelFile> find(const std::string& family, const std::string& name) const;
  // find(), or else a plain file of that name in any folder: what a config's declare: declares.
  std::shared_ptr<const KernelFile> find_declarable(const std::string& family, const std::string& name) const;

  // A kernel as a config declared it (its `declare:`): find() returns it instead of the file
  // from then on, in this process, so that every step of a run or sweep (choose, plan, compile)
  // sees the config's declaration.
  void declare(std::shared_ptr<const KernelFile> file) const;

 private:
  mutable std::vector<std::shared_ptr<const KernelFile>> declared_;
  std::vector<std::filesystem::path> dirs_;
  std::vector<std::shared_ptr<const KernelFile>> files_;
  std::vector<std::string> errors_;
};

// The directories gpuk reads kernels from: the built-in one, then $GPUK_KERNELS (':'-separated),
// then `extra` (from --kernels).
std::vector<std::filesystem::path> kernel_dirs(const std::vector<std::filesystem::path>& extra);

// One instantiation of a kernel file: the family's leading template arguments (element type,
// operation) followed by a value for each of the file's parameters.
class Variant {
 public:
  // Fills unspecified parameters with their defaults; throws ConfigError for unknown names,
  // values the metadata does not allow, and violated constraints that involve only parameters.
  Variant(std::shared_ptr<const KernelFile> file, std::vector<std::string> leading_args,
          const std::map<std::string, std::int64_t>& values);

  const KernelFile& file() const { return *file_; }
  const std::vector<std::pair<std::string, std::int64_t>>& params() const { return params_; }
  const std::vector<std::string>& leading_args() const { return leading_args_; }
  std::int64_t param(const std::string& name) const;
  // "onepass<R, 256, 4>"; with ParamsAs::defines the plain entry followed by its definitions,
  // "stencil2d -Dblock_size_x=32 -Dblock_size_y=8" (jit/jit.hpp splits them off).
  std::string name_expression(const LaunchSpec& launch) const;
  std::string label() const;                                     // "onepass BLOCK=256 UNROLL=4"
  // This variant with `launch`'s own parameter values (LaunchSpec::params) in place of its own:
  // what the launch's expressions and instantiation see. Its values are not checked against the
  // metadata (a launch may run a value the sweep does not tune, num_blocks = 1).
  Variant for_launch(const LaunchSpec& launch) const;

  // Looks a name up among the parameters, then in `extra` (n, sm_count, ...).
  std::optional<std::int64_t> lookup(std::string_view name,
                                     const std::map<std::string, std::int64_t, std::less<>>& extra) const;

 private:
  std::string instantiation(const LaunchSpec& launch) const;  // name_expression with this variant's own values
  std::shared_ptr<const KernelFile> file_;
  std::vector<std::string> leading_args_;
  std::vector<std::pair<std::string, std::int64_t>> params_;
};

// A variant's launches worked out for one problem size on one device: the launches whose
// `when` holds, in metadata order, each with its repeat count.
// One argument of a declared kernel's launch, resolved: a device array of the call (its index in
// DeviceCall::arrays), a part of the scratch (its byte offset), or a value (its bytes).
struct LaunchArg {
  enum class Kind : std::uint8_t { array, scratch, value };
  Kind kind = Kind::value;
  std::uint8_t size = 0;     // value: its bytes (4 or 8)
  std::uint32_t index = 0;   // array
  std::uint64_t bits = 0;    // value: its bytes; scratch: the byte offset
};

struct ResolvedLaunch {
  std::string name_expression;
  std::uint32_t grid = 1, block = 1, shared_bytes = 0;  // grid and block: x
  std::uint32_t repeat = 1;  // `repeat:`, evaluated: how many times in a row it runs
  std::uint32_t grid_y = 1, grid_z = 1, block_y = 1, block_z = 1;
  std::vector<LaunchArg> args;  // a declared kernel's, in kernel order; empty for the three families

  std::uint64_t threads() const { return std::uint64_t{block} * block_y * block_z; }
};
struct LaunchPlan {
  std::vector<ResolvedLaunch> launches;
  std::int64_t scratch_slots = 0;
  std::uint64_t scratch_bytes = 0;  // a declared kernel's scratch arrays, together
  // The variant's parameter values (Variant::params): what a Launcher sizes scratch by where
  // `scratch:` cannot, for a count that only its family knows (the search family's needles).
  std::vector<std::pair<std::string, std::int64_t>> params;

  // A parameter's value; 0 where the variant has no such parameter.
  std::int64_t param(std::string_view name) const {
    for (const auto& [p, value] : params)
      if (p == name) return value;
    return 0;
  }
};

// Dynamic shared memory a kernel gets without opting in (cuFuncSetAttribute); launch_kernel opts
// in above it, up to the device's limit (DeviceInfo::max_shared_per_block_optin).
inline constexpr int kSharedWithoutOptIn = 48 * 1024;

struct LaunchLimits {
  std::int64_t n = 0;
  int sm_count = 0;
  int elem_bytes = 0;
  int max_threads_per_block = 1024;
  int max_shared_bytes = kSharedWithoutOptIn;  // a device's: its opt-in limit
  std::map<std::string, std::int64_t> sizes;  // a declared kernel's named sizes (Problem::sizes)
};

// Evaluates when, repeat, grid, block, shared memory and scratch, and checks every constraint and
// device limit. Throws ConfigError naming the kernel file, the line and the expression; also when
// no launch's `when` holds.
LaunchPlan plan_launches(const Variant& variant, const LaunchLimits& limits);

// The first of the variant's constraints that is 0 for `limits` (n, elem_bytes, and sm_count
// when it is not 0), or nullptr when none is. A constraint that cannot be evaluated (it names
// sm_count and sm_count is 0, or divides by zero) is not judged here: plan_launches reports it.
const Constraint* broken_constraint(const Variant& variant, const LaunchLimits& limits);

// Samples of `file`'s parameters, the defaults first (launch_plan.cpp says which): what loading
// plans a file for, and what a declared kernel's lookup is checked for before the GPU.
std::vector<std::map<std::string, std::int64_t>> parameter_samples(const KernelFile& file);

// Throws ConfigError when no launch of `file` can run for any sample of its parameters, of n and of
// its dtypes (launch_plan.cpp says which samples); KernelFile::parse calls it, so that loading, and
// `gpuk check`, say so rather than a GPU at launch time.
void check_can_launch(const std::shared_ptr<const KernelFile>& file);

}  // namespace gpuk
