// What gpuk.Kernel (python/gpuk/_kernel.py) needs to know about a declared kernel (the `kernel`
// family, docs/declared.md) without a GPU: its declaration (sizes, arrays, scalars, parameters),
// a run config's choice of kernel, sizes and parameters, a declaration given from Python, and the
// arrays a call takes for given sizes.
#pragma once
#include <nanobind/nanobind.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpuk/gpuk.hpp"

namespace gpuk {
struct KernelFile;
}

namespace gpuk::python {

// "float32", ... for each dtype.
std::vector<std::string> dtype_names(const std::vector<DType>& dtypes);

// Every kernel file's dict (module.cpp; Engine.kernel_files()): {name, family, path, summary,
// operations, dtypes, params: [{name, default, values}], constraints}.
nanobind::dict kernel_file_dict(const KernelFile& f);

// The family whose kernels are declared.
inline constexpr const char* kDeclaredFamily = "kernel";

// kernel_file_dict's keys and {sizes, params_as, arrays: [{name, dtype, role, length}],
// scalars: [{name, dtype, value}]}. ConfigError when there
// is no such kernel, or it has no declaration.
nanobind::dict declared_kernel(const Engine& engine, const std::string& name);

// A run config of the family (`gpuk run`'s, docs/declared.md): {kernel, sizes, params, pick:
// "lookup" | "named" | "defaults", declaration: declared_kernel's dict}. A config's `declare:`
// holds for this Engine from then on (KernelLibrary::declare), as for the CLI's run.
nanobind::dict declared_config(const Engine& engine, const std::string& path);

// `declare` (YAML or JSON text: a declaration's keys) over kernel `name`'s own, for this Engine
// from then on, as a config's `declare:`; the declared kernel's dict.
nanobind::dict declare_kernel(const Engine& engine, const std::string& name, const std::string& declare);

// The arrays a call takes for these sizes (as Operation.arrays: name, output, dtype, bytes),
// checked as Engine::prepare checks them, without the GPU.
std::vector<ArraySlot> declared_arrays(const Engine& engine, const std::string& name,
                                       const std::map<std::string, std::int64_t>& sizes);

}  // namespace gpuk::python
