// Constant memory of a declared kernel (docs/declared.md, "Constant memory"): the `__constant__`
// symbols a declaration names with their data, the values a run gives them (from the declaration,
// the config's data: or the caller's memory), and the values each module is loaded with.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "data/data.hpp"
#include "gpuk/dtype.hpp"
#include "kernel/expr.hpp"
#include "plugin/problem.hpp"  // ConstantValues: the bytes of each constant by its name
#include "util/yaml_util.hpp"

namespace gpuk {

struct Declaration;
struct KernelFile;

// Constant memory holds 64 KiB for every symbol of a module together.
constexpr std::uint64_t kConstantMemoryBytes = 65536;

struct DeclaredConstant {
  std::string name;  // the __constant__ symbol, at global scope (its name unmangled)
  DType dtype = DType::float32;
  Expr length;                    // elements, an expression of the sizes (float2[n]: float32, 2 * n)
  std::optional<DataSpec> data;   // generated or a .npy file; absent: the config or the caller gives it
  std::string where;              // "path:line:col" of its entry
};

// The `constants:` key: a list of {name, array: DTYPE, length: EXPR (of the sizes), data: {...}}.
// Names must be identifiers not in `taken` (the sizes, arguments and scratch); each is added.
std::vector<DeclaredConstant> parse_constants(const yaml::Source& src, const YAML::Node& node,
                                              const std::vector<std::string>& sizes, std::set<std::string>& taken);

// The run's constants for `decl` at `sizes`: per declared constant, the caller's array in `given`
// (the C++ API's and Python's bytes in memory), else the config's `data` for it, else the
// declaration's data, generated or read. Each is checked against its declared dtype and length, a
// name `given` has that the declaration lacks is refused, and the whole against the 64 KiB of
// constant memory. nullptr when the declaration has none. Throws ConfigError naming the constant.
std::shared_ptr<const ConstantValues> constant_values(const Declaration& decl,
                                                      const std::map<std::string, std::int64_t>& sizes,
                                                      const std::map<std::string, DataSpec>& data = {},
                                                      const ConstantValues& given = {});

// The constants a module of `file` is loaded with: those its declaration names, each the run's
// value (`run`, from constant_values of the run's kernel) where the run has one, else its own
// declaration's data at `sizes` (a reference kernel that declares a constant the kernel does not).
// nullptr when the file declares none.
std::shared_ptr<const ConstantValues> module_constants(const KernelFile& file,
                                                       const std::map<std::string, std::int64_t>& sizes,
                                                       const ConstantValues* run);

// `bytes` of `dtype` elements copied from `data`: a constant's value from memory. Throws
// ConfigError when bytes is not a whole number of elements.
std::shared_ptr<const HostArray> host_array_from(DType dtype, const void* data, std::size_t bytes);

// A hash of the values (names and bytes), and whether two sets are the same (the module cache).
std::size_t constants_hash(const ConstantValues* values);
bool same_constants(const ConstantValues* a, const ConstantValues* b);

}  // namespace gpuk
