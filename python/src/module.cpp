// gpuk._gpuk: the thin binding of the library API (gpuk/gpuk.hpp) that the pure-Python package
// (python/gpuk/) builds on. Arrays cross as device pointers (integers); the Python layer turns
// DLPack, __cuda_array_interface__ and NumPy arrays into them. The GIL is released while gpuk
// prepares (compiles) and while it launches or waits on the device.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/engine_internals.hpp"
#include "array_call.hpp"
#include "cuda_memory.hpp"
#include "declared.hpp"
#include "device/device.hpp"
#include "dlpack.hpp"
#include "memory_binding.hpp"
#include "tune_binding.hpp"
#include "gpuk/gpuk.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "plugin/problem.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace gpuk::python {
namespace {

PyObject* g_error = nullptr;
PyObject* g_config_error = nullptr;
PyObject* g_device_error = nullptr;
PyObject* g_no_device_error = nullptr;
PyObject* g_compile_error = nullptr;

PyObject* new_exception(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = std::string("gpuk.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const NoDeviceError& e) {
    PyErr_SetString(g_no_device_error, e.what());
  } catch (const DeviceError& e) {
    PyErr_SetString(g_device_error, e.what());
  } catch (const ConfigError& e) {
    PyErr_SetString(g_config_error, e.what());
  } catch (const CompileError& e) {
    PyErr_SetString(g_compile_error, e.what());
  } catch (const Error& e) {
    PyErr_SetString(g_error, e.what());
  }
}

DType dtype_named(const std::string& name) {
  const auto d = parse_dtype(name);
  if (!d) throw ConfigError("unknown dtype '" + name + "' (int32, uint32, int64, uint64, float32, float64)");
  return *d;
}

const char* kind_name(OptionSpec::Kind k) {
  switch (k) {
    case OptionSpec::Kind::boolean: return "boolean";
    case OptionSpec::Kind::integer: return "integer";
    case OptionSpec::Kind::number: return "number";
    case OptionSpec::Kind::choice: return "choice";
  }
  return "?";
}

nb::dict family_dict(const FamilyPlugin& p, const PluginRegistry& plugins) {
  nb::dict d;
  d["name"] = p.name();
  d["description"] = p.description();
  d["plugin"] = plugins.path_of(p.name()).string();
  d["operations"] = p.operations();
  d["dtypes"] = dtype_names(p.dtypes());
  nb::list options;
  for (const auto& o : p.options()) {
    nb::dict od;
    od["name"] = o.name;
    od["kind"] = kind_name(o.kind);
    od["default"] = o.default_value;
    od["choices"] = o.choices;
    od["help"] = o.help;
    options.append(od);
  }
  d["options"] = options;
  d["default_kernel"] = p.default_kernel();
  return d;
}

// gpuk::Engine with the warnings it gave (a stale tuning entry passed over, a plugin that did not
// load), kept until the Python layer takes them: core calls no Python while the GIL is released.
struct Warnings {
  std::mutex mutex;
  std::vector<std::string> messages;
};
struct PyEngine {
  std::shared_ptr<Warnings> warnings;
  std::unique_ptr<Engine> engine;
};

// A scalar argument as its dtype's bits (the Python layer packs it exactly in the dtype); a
// second value (a range's hi) makes it a pair.
std::optional<Scalar> scalar_of(const std::optional<std::string>& dtype, std::uint64_t bits,
                                const std::optional<std::uint64_t>& second) {
  if (!dtype) return std::nullopt;
  Scalar s;
  s.dtype = dtype_named(*dtype);
  s.bits = bits;
  if (second) {
    s.second = *second;
    s.count = 2;
  }
  return s;
}

// gpuk.Error and its subclasses, and the translator that raises them for gpuk's C++ errors.
void bind_errors(nb::module_& m) {
  g_error = new_exception(m, "Error", PyExc_RuntimeError, "Every error gpuk reports (gpuk::Error).");
  {
    nb::object bases = nb::make_tuple(nb::handle(g_error), nb::handle(PyExc_ValueError));
    g_config_error = new_exception(m, "ConfigError", bases.ptr(),
                                   "A bad config, kernel file, argument or array: the message names the file:line:col "
                                   "where there is one (gpuk's exit status 2).");
  }
  g_device_error = new_exception(m, "DeviceError", g_error, "A CUDA driver or NVRTC failure.");
  g_no_device_error = new_exception(m, "NoDeviceError", g_device_error,
                                    "No NVIDIA driver or no GPU: nothing that needs one can run (exit status 5).");
  g_compile_error = new_exception(m, "CompileError", g_error,
                                  "A kernel did not compile; the message carries NVRTC's log with file:line:column.");
  nb::register_exception_translator(translate);
}

nb::list slots_list(const std::vector<ArraySlot>& slots) {
  nb::list out;
  for (const auto& a : slots) {
    nb::dict d;
    d["name"] = a.name;
    d["output"] = a.output;
    d["type"] = a.type;
    d["bytes"] = a.bytes;
    d["host_result"] = a.host_result;
    out.append(d);
  }
  return out;
}

nb::object scalar_dict(const std::optional<ScalarSlot>& s) {
  if (!s) return nb::none();
  nb::dict d;
  d["name"] = s->name;
  d["dtype"] = std::string(dtype_name(s->dtype));
  d["count"] = s->count;
  return d;
}

// launch and launch_and_read, the same on an Operation and on PreparedSizes (gpuk.hpp gives both
// the same signatures); the GIL released while they run.
template <class Handle>
void def_launches(nb::class_<Handle>& c, const char* launch_doc) {
  c.def(
       "launch",
       [](Handle& h, const std::vector<CUdeviceptr>& arrays, std::uint64_t n, std::uintptr_t stream,
          const std::optional<std::string>& scalar_dtype, std::uint64_t scalar_bits,
          const std::optional<std::uint64_t>& scalar_second) {
         const std::optional<Scalar> s = scalar_of(scalar_dtype, scalar_bits, scalar_second);
         nb::gil_scoped_release release;
         h.launch(DeviceArrays(arrays.data(), arrays.size()), n, reinterpret_cast<CUstream>(stream),
                  s ? &*s : nullptr);
       },
       "arrays"_a, "n"_a, "stream"_a = 0, "scalar_dtype"_a = nb::none(), "scalar_bits"_a = 0,
       "scalar_second"_a = nb::none(), launch_doc)
      .def(
          "launch_and_read",
          [](Handle& h, const std::vector<CUdeviceptr>& arrays, std::uint64_t n, std::uintptr_t stream,
             const std::optional<std::string>& scalar_dtype, std::uint64_t scalar_bits,
             const std::optional<std::uint64_t>& scalar_second) {
            const std::optional<Scalar> s = scalar_of(scalar_dtype, scalar_bits, scalar_second);
            std::vector<std::byte> bytes;
            {
              nb::gil_scoped_release release;
              bytes = h.launch_and_read(DeviceArrays(arrays.data(), arrays.size()), n,
                                        reinterpret_cast<CUstream>(stream), s ? &*s : nullptr);
            }
            return nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
          },
          "arrays"_a, "n"_a, "stream"_a = 0, "scalar_dtype"_a = nb::none(), "scalar_bits"_a = 0,
       "scalar_second"_a = nb::none(),
          "launch(), then copies the small answer back and waits for the stream; returns its bytes.");
}

void bind_operation(nb::module_& m) {
  nb::class_<Operation> c(m, "Operation", "A prepared variant (gpuk::Operation): compiled, loaded, checked.");
  c.def_prop_ro("arrays", [](const Operation& op) { return slots_list(op.arrays()); })
      .def_prop_ro("scalar", [](const Operation& op) { return scalar_dict(op.scalar()); })
      .def_prop_ro("min_n", &Operation::min_n)
      .def_prop_ro("max_n", &Operation::max_n)
      .def_prop_ro("variant", &Operation::variant)
      .def_prop_ro("chosen", &Operation::chosen)
      .def_prop_ro("warnings", &Operation::warnings)
      .def_prop_ro("scratch_bytes", &Operation::scratch_bytes);
  def_launches(c, "Enqueues the variant on `stream` for n elements of `arrays` (device pointers, in `arrays` order).");
  c.def(
      "launch_repeated",
      [](Operation& op, const std::vector<CUdeviceptr>& arrays, std::uint64_t n, std::uintptr_t stream, int count) {
        const DeviceArrays a(arrays.data(), arrays.size());
        nb::gil_scoped_release release;
        for (int i = 0; i < count; ++i) op.launch(a, n, reinterpret_cast<CUstream>(stream));
      },
      "arrays"_a, "n"_a, "stream"_a, "count"_a,
      "gpuk::Operation::launch `count` times in a C++ loop: the C++ call's cost, timed from the same process as "
      "the Python calls (tools/bench/bench_api.py).");
  c.def(
      "call_arrays",
      [](Operation& op, nb::handle inputs, nb::handle out, std::uintptr_t stream, int device) {
        PyObject* result = call_arrays(op, inputs.ptr(), out.ptr(), stream, device);
        if (!result) throw nb::python_error();
        return nb::steal(result);
      },
      "inputs"_a, "out"_a.none(), "stream"_a, "device"_a,
      "The array path in one call: the device arrays of `inputs` (a tuple) and `out` (None, an array or a "
      "tuple) read and checked, then launched on `stream`. None: launched; bytes: the answer read back; "
      "NotImplemented: the Python layer's general path (host arrays, a value, anything to explain).");
}

// Engine's Operations of one family operation, found per call in C++ (the family functions).
void bind_dispatch(nb::module_& m) {
  nb::class_<Dispatch>(m, "Dispatch", "The prepared Operations of one family operation and options, by dtype, "
                                      "size bucket, stream and thread: the family functions' one call into C++.")
      .def(nb::init<int>(), "device"_a)
      .def(
          "add",
          [](Dispatch& d, const std::string& dtype, std::uintptr_t stream, unsigned long thread, nb::handle holder) {
            Operation* op = nb::cast<Operation*>(holder.attr("_native"));
            d.add(dtype_named(dtype), stream, thread, holder.ptr(), op);
          },
          "dtype"_a, "stream"_a, "thread"_a, "operation"_a,
          "Serves `operation` (a gpuk.Operation) for its dtype and size bucket on `stream` from `thread`.")
      .def(
          "call",
          [](Dispatch& d, nb::handle inputs, nb::handle out, std::uintptr_t stream) {
            PyObject* result = d.call(inputs.ptr(), out.ptr(), stream);
            if (!result) throw nb::python_error();
            return nb::steal(result);
          },
          "inputs"_a, "out"_a.none(), "stream"_a,
          "As Operation.call_arrays, with the Operation found; a read answer is (bytes, the gpuk.Operation).")
      .def("__len__", &Dispatch::size);
  nb::class_<ShapeDispatch>(m, "ShapeDispatch", "A declared kernel's prepared Operations by the shapes of a call's "
                                                "arrays, its size keywords, stream and thread: gpuk.Kernel's one call "
                                                "into C++.")
      .def(nb::init<int>(), "device"_a)
      .def(
          "add",
          [](ShapeDispatch& d, nb::handle arrays, nb::handle extra, std::uintptr_t stream, nb::handle holder) {
            Operation* op = nb::cast<Operation*>(holder.attr("_native"));
            return d.add(arrays.ptr(), extra.ptr(), stream, holder.ptr(), op);
          },
          "arrays"_a, "extra"_a, "stream"_a, "operation"_a,
          "Serves `operation` (a gpuk.Operation) for arrays of these shapes, `extra` and `stream` from this thread; "
          "False when the arrays are not all device arrays the fast path reads.")
      .def(
          "call",
          [](ShapeDispatch& d, nb::handle arrays, nb::handle extra, std::uintptr_t stream) {
            PyObject* result = d.call(arrays.ptr(), extra.ptr(), stream);
            if (!result) throw nb::python_error();
            return nb::steal(result);
          },
          "arrays"_a, "extra"_a, "stream"_a, "None: launched; NotImplemented: the general path's turn.")
      .def("__len__", &ShapeDispatch::size);
}

// gpuk::PreparedSizes: what every prepared handle of the C++ API is (gpuk::sort::prepare_pairs,
// gpuk::reduce::prepare_segmented_argmax, ...), on device pointers.
void bind_prepared_sizes(nb::module_& m) {
  nb::class_<PreparedSizes> c(m, "PreparedSizes",
                              "Operations for every n up to max_n (gpuk::PreparedSizes), all prepared when made.");
  c.def_prop_ro("max_n", &PreparedSizes::max_n)
      .def_prop_ro("step", &PreparedSizes::step)
      .def_prop_ro("scratch_bytes", &PreparedSizes::scratch_bytes)
      .def_prop_ro("held_bytes", &PreparedSizes::held_bytes)
      .def_prop_ro("variants",
                   [](const PreparedSizes& p) {
                     std::vector<std::string> out;
                     for (const Operation& op : p.operations()) out.push_back(op.variant());
                     return out;
                   })
      .def_prop_ro("arrays",
                   [](const PreparedSizes& p) -> nb::object {
                     if (p.operations().empty()) return nb::none();
                     return slots_list(p.operations().back().arrays());
                   })
      .def_prop_ro("scalar",
                   [](const PreparedSizes& p) -> nb::object {
                     if (p.operations().empty()) return nb::none();
                     return scalar_dict(p.operations().back().scalar());
                   })
      .def(
          "use_scratch",
          [](PreparedSizes& p, CUdeviceptr scratch, std::uint64_t bytes, std::uintptr_t stream) {
            nb::gil_scoped_release release;
            p.use_scratch(scratch, bytes, reinterpret_cast<CUstream>(stream));
          },
          "scratch"_a, "bytes"_a, "stream"_a = 0,
          "The caller's device memory as every bucket's scratch (at least scratch_bytes, 256-byte aligned).");
  def_launches(c, "Enqueues n's bucket's Operation (n = 0: nothing); neither compiles nor allocates.");
}

// Engine.prepare's and prepare_sizes's arguments as the OperationSpec they name.
OperationSpec operation_spec(const std::string& family, const std::string& operation, const std::string& dtype,
                             std::uint64_t n, const std::map<std::string, std::string>& options,
                             const std::optional<std::string>& kernel, const std::map<std::string, std::int64_t>& params,
                             const std::map<std::string, std::int64_t>& sizes = {}) {
  OperationSpec spec;
  spec.sizes = sizes;
  spec.family = family;
  spec.operation = operation;
  spec.dtype = dtype_named(dtype);
  spec.n = n;
  spec.options = options;
  spec.kernel = kernel;
  spec.params = params;
  return spec;
}

void bind_engine(nb::module_& m) {
  nb::class_<PyEngine>(m, "Engine", "gpuk::Engine: loads the plugins and kernel files; opens the GPU on first use.")
      .def(
          "__init__",
          [](PyEngine* self, int device, const std::vector<std::string>& kernel_dirs,
             const std::vector<std::string>& plugin_dirs, const std::optional<std::string>& cache_dir, bool no_cache,
             const std::optional<std::string>& tuning_db, const std::string& tuning,
             const std::optional<std::string>& tuning_file) {
            auto warnings = std::make_shared<Warnings>();
            EngineOptions o;
            o.device = device;
            for (const auto& d : kernel_dirs) o.kernel_dirs.emplace_back(d);
            for (const auto& d : plugin_dirs) o.plugin_dirs.emplace_back(d);
            if (cache_dir) o.cache_dir = *cache_dir;
            o.no_cache = no_cache;
            if (tuning_db) o.tuning_db = *tuning_db;
            // The TuningPolicy by name (the Python layer checks the names).
            if (tuning == "shipped_only") o.tuning = TuningPolicy::shipped_only();
            else if (tuning == "none") o.tuning = TuningPolicy::none();
            else if (tuning == "file") o.tuning = TuningPolicy::from_file(tuning_file.value_or(""));
            else if (tuning != "user_database") throw ConfigError("unknown tuning policy '" + tuning + "'");
            o.on_warning = [warnings](const std::string& message) {
              const std::lock_guard<std::mutex> lock(warnings->mutex);
              warnings->messages.push_back(message);
            };
            auto engine = std::make_unique<Engine>(std::move(o));  // may throw: nothing built yet
            new (self) PyEngine{warnings, std::move(engine)};
          },
          "device"_a = 0, "kernel_dirs"_a = std::vector<std::string>{}, "plugin_dirs"_a = std::vector<std::string>{},
          "cache_dir"_a = nb::none(), "no_cache"_a = false, "tuning_db"_a = nb::none(),
          "tuning"_a = "user_database", "tuning_file"_a = nb::none())
      .def("take_warnings",
           [](PyEngine& e) {
             const std::lock_guard<std::mutex> lock(e.warnings->mutex);
             std::vector<std::string> out;
             out.swap(e.warnings->messages);
             return out;
           },
           "The warnings given since the last call (and clears them).")
      .def(
          "prepare",
          [](const PyEngine& e, const std::string& family, const std::string& operation, const std::string& dtype,
             std::uint64_t n, const std::map<std::string, std::string>& options, const std::optional<std::string>& kernel,
             const std::map<std::string, std::int64_t>& params, const std::map<std::string, std::int64_t>& sizes) {
            const OperationSpec spec = operation_spec(family, operation, dtype, n, options, kernel, params, sizes);
            nb::gil_scoped_release release;
            return e.engine->prepare(spec);
          },
          "family"_a, "operation"_a, "dtype"_a, "n"_a, "options"_a = std::map<std::string, std::string>{},
          "kernel"_a = nb::none(), "params"_a = std::map<std::string, std::int64_t>{},
          "sizes"_a = std::map<std::string, std::int64_t>{},
          "gpuk::Engine::prepare; `sizes` (a declared kernel's named sizes, OperationSpec::sizes) prepares the "
          "declared kernel `kernel` (or `operation`) for exactly those sizes.")
      .def(
          "declared_kernel", [](const PyEngine& e, const std::string& name) { return declared_kernel(*e.engine, name); },
          "name"_a, "A declared kernel's declaration (sizes, arrays, scalars, parameters), without the GPU.")
      .def(
          "declared_config", [](const PyEngine& e, const std::string& path) { return declared_config(*e.engine, path); },
          "path"_a, "A declared kernel's run config: its kernel, sizes, parameters, how the variant is picked.")
      .def(
          "declare_kernel",
          [](const PyEngine& e, const std::string& name, const std::string& declare) {
            return declare_kernel(*e.engine, name, declare);
          },
          "name"_a, "declare"_a, "A declaration's keys (YAML or JSON text) over kernel `name`'s, for this Engine.")
      .def(
          "declared_arrays",
          [](const PyEngine& e, const std::string& name, const std::map<std::string, std::int64_t>& sizes) {
            return slots_list(declared_arrays(*e.engine, name, sizes));
          },
          "name"_a, "sizes"_a, "The arrays a call of the declared kernel takes for these sizes, without the GPU.")
      .def(
          "prepare_sizes",
          [](const PyEngine& e, const std::string& family, const std::string& operation, const std::string& dtype,
             std::uint64_t max_n, const std::map<std::string, std::string>& options,
             const std::optional<std::string>& kernel, const std::map<std::string, std::int64_t>& params,
             bool allocate_scratch, std::uint64_t step) {
            OperationSpec spec = operation_spec(family, operation, dtype, max_n, options, kernel, params);
            spec.allocate_scratch = allocate_scratch;
            nb::gil_scoped_release release;
            // A unique_ptr: PreparedSizes moves (its Operations do) and is never copied.
            return std::make_unique<PreparedSizes>(e.engine->prepare_sizes(spec, step));
          },
          "family"_a, "operation"_a, "dtype"_a, "max_n"_a, "options"_a = std::map<std::string, std::string>{},
          "kernel"_a = nb::none(), "params"_a = std::map<std::string, std::int64_t>{}, "allocate_scratch"_a = true,
          "step"_a = 1)
      .def(
          "describe",
          [](const PyEngine& e, const std::string& family, const std::string& operation, const std::string& dtype,
             std::uint64_t n, const std::map<std::string, std::string>& options) {
            // What prepare() would check and the arrays it would take, from the plugin alone.
            const FamilyPlugin& plugin = EngineInternals::plugins(*e.engine).get(family);
            Problem problem = make_problem(plugin, operation, dtype_named(dtype), options, n);
            problem.max_n = bucket_last(n);
            const auto launcher = plugin.make_launcher(problem);
            return nb::make_tuple(slots_list(launcher->arrays()), scalar_dict(launcher->scalar()));
          },
          "family"_a, "operation"_a, "dtype"_a, "n"_a, "options"_a = std::map<std::string, std::string>{},
          "The arrays and the value a call of this operation takes (as Operation.arrays and .scalar), "
          "checked as prepare() checks the spec, without the GPU.")
      .def("families",
           [](const PyEngine& e) {
             nb::list out;
             for (const FamilyPlugin* p : EngineInternals::plugins(*e.engine).all()) out.append(family_dict(*p, EngineInternals::plugins(*e.engine)));
             return out;
           })
      .def("plugin_errors", [](const PyEngine& e) { return EngineInternals::plugins(*e.engine).errors(); })
      .def("kernel_files",
           [](const PyEngine& e) {
             nb::list out;
             for (const auto& f : EngineInternals::kernels(*e.engine).files()) out.append(kernel_file_dict(*f));
             return out;
           })
      .def("kernel_errors", [](const PyEngine& e) { return EngineInternals::kernels(*e.engine).errors(); })
      .def("kernel_dirs",
           [](const PyEngine& e) {
             std::vector<std::string> out;
             for (const auto& d : EngineInternals::kernels(*e.engine).dirs()) out.push_back(d.string());
             return out;
           })
      .def("device_info", [](const PyEngine& e) {
        const DeviceInfo* info = nullptr;
        {
          nb::gil_scoped_release release;
          info = &EngineInternals::device(*e.engine);
        }
        nb::dict d;
        d["ordinal"] = info->ordinal;
        d["name"] = info->name;
        d["arch"] = info->arch();
        d["sm_count"] = info->sm_count;
        d["total_memory"] = info->total_memory;
        d["peak_bandwidth_gbs"] = info->peak_bandwidth_gbs;
        d["driver_version"] = info->driver_version;
        d["pci_bus_id"] = info->pci_bus_id;
        return d;
      });
}

// Device memory, DLPack views and streams: what the Python layer moves arrays with.
}  // namespace
}  // namespace gpuk::python

NB_MODULE(_gpuk, m) {
  using namespace gpuk;
  using namespace gpuk::python;
  m.doc() = "gpuk's C++ library API (gpuk/gpuk.hpp), bound for the gpuk package; use `import gpuk`.";
  bind_errors(m);
  // The default Engine lives in a module global until the interpreter's teardown, whose order
  // nanobind's leak check cannot see through; the package drops it at exit (atexit) anyway.
  nb::set_leak_warnings(false);
  m.def("version", &gpuk_version, "The gpuk version the module was built from.");
  m.def("bucket_first", &bucket_first, "n"_a);
  m.def("bucket_last", &bucket_last, "n"_a);
  bind_operation(m);
  bind_prepared_sizes(m);
  bind_engine(m);
  bind_memory(m);
  bind_dispatch(m);
  bind_tune(m);
}
