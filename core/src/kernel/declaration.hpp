// A declared kernel: a kernel of any signature whose operation is written in YAML (docs/declared.md)
// instead of a family's C++: its named sizes, its arguments in kernel order, its scratch arrays,
// the bytes it moves and its metrics. The declaration comes from the kernel file's metadata block,
// else from the YAML file beside it with the same stem, and a config's `declare:` overrides it
// key by key; its params, constraints and launches fill the KernelFile as a metadata block would.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuk/dtype.hpp"
#include "kernel/constants.hpp"
#include "kernel/expr.hpp"
#include "kernel/kernel_file.hpp"
#include "kernel/metric_expr.hpp"
#include "util/yaml_util.hpp"

namespace gpuk {

enum class ArgRole { in, out, inout };

struct DeclaredArg {
  std::string name;
  bool array = true;  // else a scalar passed by value
  DType dtype = DType::float32;
  ArgRole role = ArgRole::in;  // arrays
  Expr length;                 // arrays: elements, an expression of the sizes
  // Scalars: an expression of the sizes and parameters (integer dtypes), or a literal (floats).
  std::optional<Expr> value;
  double literal = 0;
  std::string where;  // "path:line:col" of its entry
};

struct DeclaredScratch {
  std::string name;
  DType dtype = DType::float32;
  Expr length;  // elements, an expression of the sizes and parameters
  std::string where;  // "path:line:col" of its entry
};

struct DeclaredMetric {
  std::string name;  // "GFLOP/s"
  MetricExpr expression;  // of the sizes, the parameters and `seconds` (floating point)
  std::string where;
};

struct Declaration {
  std::vector<std::string> sizes;  // named problem sizes, in order
  std::vector<DeclaredArg> args;   // in kernel order
  std::vector<DeclaredScratch> scratch;
  std::optional<Expr> bytes;  // bytes moved, for GB/s; absent: the arrays' sizes added up
  std::vector<DeclaredMetric> metrics;
  std::vector<DeclaredConstant> constants;  // __constant__ symbols and their data (kernel/constants.hpp)
  // The files the launch: and constraints: keys were read from (the kernel file, the YAML beside
  // it, a config), for the errors of a plan at their lines.
  std::filesystem::path launches_from, constraints_from;

  const DeclaredArg* arg(const std::string& name) const;
  std::vector<const DeclaredArg*> arrays() const;  // the array arguments, in order: DeviceCall::arrays
  // "name dtype[length], ..."; and whether `other` takes the same arrays (names, dtypes, lengths,
  // in order), as a reference, a baseline and the kernels of one sweep must.
  std::string arrays_text() const;
  bool same_arrays(const Declaration& other) const;
};

// The keys of a declaration (family, summary, sizes, params_as, params, constraints, args,
// scratch, launch, bytes, metrics, constants).
const std::vector<std::string>& declaration_keys();

// Fills `file` (its source and path set) from a declaration's keys: params, constraints,
// launches (1 to 3 dimensions, their argument lists), params_as and the Declaration. Every
// expression's names are checked against the sizes and parameters. Throws ConfigError
// "path:line:col: what" at the key's own file.
using DeclarationKeys = std::map<std::string, std::pair<const yaml::Source*, YAML::Node>>;
void apply_declaration(KernelFile& file, const DeclarationKeys& keys);

// The path of the declaration beside a kernel file: stencil2d.cu -> stencil2d.yaml.
std::filesystem::path sidecar_of(const std::filesystem::path& kernel_path);

// `file` declared again with `declare` (a config's mapping, read from `src`) over its own keys:
// what a config that declares its kernel runs. Throws ConfigError at the key that is wrong.
KernelFile declare_kernel(const KernelFile& file, const yaml::Source& src, const YAML::Node& declare);

// An expression of the named sizes alone (an array's length, the bytes moved). Throws ConfigError.
std::int64_t eval_sizes(const Expr& expr, const std::map<std::string, std::int64_t>& sizes);

// The value of `name` for a declared variant: its parameters, its sizes, sm_count. Its errors
// (an overflow, a division by zero) name `where` ("path:line:col" of the entry) and `what`.
std::int64_t eval_declared(const Expr& expr, const Variant& variant, const std::map<std::string, std::int64_t>& sizes,
                           const std::string& where, const std::string& what);

}  // namespace gpuk
