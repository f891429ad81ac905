// What one operation computes, without the data: family, operation, element type, the family's
// options and the number of elements. A run (RunSpec) and a library call (OperationSpec) both
// reduce to one; the plugins and the choice of a variant see only this.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "data/compare_rule.hpp"
#include "gpuk/dtype.hpp"

namespace gpuk {

class FamilyPlugin;
class HostArray;
struct Declaration;

// A declared kernel's constant memory: the bytes of each `__constant__` symbol by its name
// (kernel/constants.hpp).
using ConstantValues = std::map<std::string, std::shared_ptr<const HostArray>>;

struct Problem {
  std::string family;
  std::string operation;
  DType dtype = DType::float32;
  std::map<std::string, std::string> options;  // every option of the family, defaults filled in
  std::uint64_t n = 0;                         // elements
  // The largest n the prepared variant must serve: n for a run; for the library API, the last n
  // of n's power-of-two size bucket (an Operation is reused across its bucket).
  std::uint64_t max_n = 0;
  // A declared kernel's operation (kernel/declaration.hpp): its named sizes (n is their product),
  // its declaration (arguments, scratch, bytes, metrics) and how each output is compared. Empty
  // for the three families, whose operations are written in C++.
  std::map<std::string, std::int64_t> sizes;
  std::shared_ptr<const Declaration> declaration;
  std::map<std::string, CompareRule> compare;
  // The run's constants (kernel/constants.hpp: constant_values); null without any.
  std::shared_ptr<const ConstantValues> constants;

  // Throws Error when the family has no such option.
  const std::string& option(const std::string& name) const;
  bool option_bool(const std::string& name) const { return option(name) == "true"; }
};

// A problem checked against the family, with the same words a config's errors use (without
// the config's file and line): an operation the family lacks (with "did you mean"), a dtype it
// does not support, an unknown option or a value it does not allow, n = 0, and the family's own
// check of its options (FamilyPlugin::check). Options not given take their defaults. Throws
// ConfigError.
Problem make_problem(const FamilyPlugin& plugin, const std::string& operation, DType dtype,
                     const std::map<std::string, std::string>& options, std::uint64_t n);

// A declared kernel's problem (docs/declared.md): `file`'s declaration for these named sizes
// (every declared size, nothing else; n is their product). Throws ConfigError.
struct KernelFile;
Problem make_declared_problem(const FamilyPlugin& plugin, const std::shared_ptr<const KernelFile>& file,
                              const std::map<std::string, std::int64_t>& sizes);

// The sentences make_problem and the config reader share.
std::string no_such_operation(const FamilyPlugin& plugin, const std::string& operation);
std::string unsupported_dtype(const FamilyPlugin& plugin, const std::string& dtype);

}  // namespace gpuk
