// Variants that compile to the same machine code: a template parameter of an entry that its code
// never names (BLOCKS_PER_SM of reduce/onepass.cu, which only shapes the grid) cannot change what
// NVRTC makes of it, so every value of it gives the same kernel under another name. A sweep
// compiles each such kernel once (tune/measure/bulk_compiler.hpp) instead of once per value.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "kernel/kernel_file.hpp"

namespace gpuk {

// The arguments of a name expression "entry<a<b, c>, 256, 4>" at its top level: {"a<b, c>", "256", "4"}.
std::vector<std::string> template_arguments(const std::string& expression);

// What a kernel file's entries do not use, read from its source: for each entry, the metadata
// parameters whose name (the entry's own template parameter's name) appears neither in the
// entry's declarator (__launch_bounds__ included) nor in its body nor in any #define of the file
// or of the headers it includes. Conservative: nothing is dropped from an entry whose name occurs
// more than once in the code (a declaration beside the definition, a specialisation), whose
// template has a pack or another parameter count than the metadata implies, and from no entry of
// a file that names __func__, __FUNCTION__, __PRETTY_FUNCTION__ or assert (the function's name,
// which holds every argument, would be in the code) or includes a header not found on
// `file.include_dirs` beside the file's own directory.
class SameCode {
 public:
  explicit SameCode(const KernelFile& file);

  // `name_expression` with the arguments of the parameters its entry does not use replaced by the
  // metadata defaults: the name of a kernel with the same machine code (the expression itself
  // when its entry uses every parameter, or is not one of the file's).
  std::string canonical(const std::string& name_expression) const;
  // The metadata parameters `entry` does not use, by name (empty for an unknown entry).
  std::vector<std::string> unused(const std::string& entry) const;

 private:
  struct Entry {
    std::string name;
    std::vector<bool> unused;  // per metadata parameter
    std::size_t template_params = 0;
  };
  const KernelFile& file_;
  std::vector<Entry> entries_;
};

// The names one NVRTC program needs for `names`: each one's SameCode::canonical, once each, in
// order of first use; at[i] is names[i]'s index in `compile`.
struct SharedNames {
  std::vector<std::string> compile;
  std::vector<std::size_t> at;
  bool shares() const { return compile.size() != at.size(); }
  // Whether any name is compiled under another name.
  bool renamed = false;
};
SharedNames shared_names(const SameCode& same, const std::vector<std::string>& names);

}  // namespace gpuk
