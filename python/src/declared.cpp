#include "declared.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "api/engine_internals.hpp"
#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"
#include "plugin/problem.hpp"
#include "util/yaml_util.hpp"

namespace nb = nanobind;

namespace gpuk::python {

std::vector<std::string> dtype_names(const std::vector<DType>& dtypes) {
  std::vector<std::string> out;
  for (DType d : dtypes) out.emplace_back(dtype_name(d));
  return out;
}

nb::dict kernel_file_dict(const KernelFile& f) {
  nb::dict d;
  d["name"] = f.name;
  d["family"] = f.family;
  d["path"] = f.path.string();
  d["summary"] = f.summary;
  d["operations"] = f.operations;
  d["dtypes"] = dtype_names(f.dtypes);
  nb::list params;
  for (const auto& p : f.params) {
    nb::dict pd;
    pd["name"] = p.name;
    pd["default"] = p.default_value;
    pd["values"] = p.values;
    params.append(pd);
  }
  d["params"] = params;
  std::vector<std::string> constraints;
  for (const auto& c : f.constraints) constraints.push_back(c.expr.text());
  d["constraints"] = constraints;
  return d;
}

namespace {

const char* role_name(ArgRole r) {
  switch (r) {
    case ArgRole::in: return "in";
    case ArgRole::out: return "out";
    case ArgRole::inout: return "inout";
  }
  return "?";
}

nb::dict kernel_dict(const KernelFile& f) {
  const Declaration& d = *f.declaration;
  nb::dict out = kernel_file_dict(f);
  out["sizes"] = d.sizes;
  out["params_as"] = f.params_as == ParamsAs::defines ? "defines" : "template";
  nb::list arrays, scalars;
  for (const DeclaredArg& a : d.args) {
    nb::dict ad;
    ad["name"] = a.name;
    ad["dtype"] = std::string(dtype_name(a.dtype));
    if (a.array) {
      ad["role"] = role_name(a.role);
      ad["length"] = a.length.text();
      arrays.append(ad);
    } else {
      if (a.value) ad["value"] = a.value->text();
      else ad["value"] = a.literal;
      scalars.append(ad);
    }
  }
  out["arrays"] = arrays;
  out["scalars"] = scalars;
  return out;
}

std::shared_ptr<const KernelFile> find_declared(const Engine& engine, const std::string& name) {
  auto file = EngineInternals::kernels(engine).find(kDeclaredFamily, name);
  if (!file->declaration)
    throw ConfigError("kernel " + name + " (" + file->path.string() + ") has no declaration: give it as declare=, in " +
                      sidecar_of(file->path).filename().string() +
                      " beside it, or in a metadata block (docs/declared.md)");
  return file;
}

}  // namespace

nb::dict declared_kernel(const Engine& engine, const std::string& name) {
  return kernel_dict(*find_declared(engine, name));
}

nb::dict declared_config(const Engine& engine, const std::string& path) {
  const RunSpec spec = load_run_spec(path, EngineInternals::plugins(engine), EngineInternals::kernels(engine));
  if (spec.family != kDeclaredFamily || !spec.declared)
    throw ConfigError(path + ": a config of the " + spec.family + " family, not of a declared kernel (family: " +
                      kDeclaredFamily + ", docs/declared.md); use gpuk.run or Engine.prepare for it");
  nb::dict out;
  out["kernel"] = spec.kernel;
  out["sizes"] = spec.sizes;
  out["params"] = spec.params;
  out["pick"] = spec.pick == RunSpec::Pick::lookup ? "lookup" : spec.pick == RunSpec::Pick::named ? "named" : "defaults";
  out["declaration"] = kernel_dict(*spec.declared);
  return out;
}

nb::dict declare_kernel(const Engine& engine, const std::string& name, const std::string& declare) {
  const KernelLibrary& kernels = EngineInternals::kernels(engine);
  const auto file = kernels.find_declarable(kDeclaredFamily, name);
  yaml::Source src;
  src.path = "declare=";
  const YAML::Node node = src.parse(declare);
  if (!node.IsMap()) throw ConfigError("declare= must be a mapping of a declaration's keys (docs/declared.md)");
  auto declared = std::make_shared<KernelFile>(gpuk::declare_kernel(*file, src, node));
  declared->family = kDeclaredFamily;
  kernels.declare(declared);
  return kernel_dict(*declared);
}

std::vector<ArraySlot> declared_arrays(const Engine& engine, const std::string& name,
                                       const std::map<std::string, std::int64_t>& sizes) {
  const FamilyPlugin& plugin = EngineInternals::plugins(engine).get(kDeclaredFamily);
  const Problem problem = make_declared_problem(plugin, find_declared(engine, name), sizes);
  return plugin.make_launcher(problem)->arrays();
}

}  // namespace gpuk::python
