// gpuk._gpuk.tune_kernel: the library's tuning call (gpuk/tuning.hpp) on Python values, for the
// Kernel Tuner facade (python/gpuk/kernel_tuner/). The config is a dict of a declared tune
// config's keys; the arrays are NumPy arrays, scalars, or anything NumPy reads, and device arrays
// (__cuda_array_interface__) copied to the host. The GIL is released while gpuk tunes; a verify
// function takes it again, in the worker process that measured the variant.
#include "tune_binding.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuda_memory.hpp"
#include "gpuk/error.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/tuning.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace gpuk::python {

namespace {

// A Python value as JSON (which is YAML): dicts with string keys, lists, tuples, numbers (NumPy's
// scalars too), strings, booleans and None.
nlohmann::json json_of(nb::handle v, const std::string& where) {
  if (v.is_none()) return nullptr;
  if (PyBool_Check(v.ptr())) return nb::cast<bool>(v);
  if (PyLong_Check(v.ptr())) return nb::cast<long long>(v);
  if (PyFloat_Check(v.ptr())) return nb::cast<double>(v);
  if (PyUnicode_Check(v.ptr())) return nb::cast<std::string>(v);
  if (PyDict_Check(v.ptr())) {
    nlohmann::json out = nlohmann::json::object();
    for (auto [key, value] : nb::borrow<nb::dict>(v)) {
      if (!PyUnicode_Check(key.ptr())) throw ConfigError(where + ": a key that is not a string: " + nb::cast<std::string>(nb::str(key)));
      const std::string k = nb::cast<std::string>(key);
      out[k] = json_of(value, where + "." + k);
    }
    return out;
  }
  if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
    nlohmann::json out = nlohmann::json::array();
    std::size_t i = 0;
    for (nb::handle item : v) out.push_back(json_of(item, where + "[" + std::to_string(i++) + "]"));
    return out;
  }
  if (nb::hasattr(v, "item") && nb::hasattr(v, "dtype")) return json_of(v.attr("item")(), where);  // a NumPy scalar
  throw ConfigError(where + ": a " + nb::cast<std::string>(nb::str(v.type().attr("__name__"))) +
                    " is not a config value (dicts, lists, numbers, strings, booleans, None)");
}

DType dtype_of_typestr(const std::string& typestr, const std::string& what) {
  // NumPy's array-interface type strings: byte order, kind, size ("<f4").
  const std::string t = typestr.size() == 3 && (typestr[0] == '<' || typestr[0] == '=' || typestr[0] == '|')
                            ? typestr.substr(1) : typestr;
  if (t == "f4") return DType::float32;
  if (t == "f8") return DType::float64;
  if (t == "i4") return DType::int32;
  if (t == "u4") return DType::uint32;
  if (t == "i8") return DType::int64;
  if (t == "u8") return DType::uint64;
  throw ConfigError(what + ": dtype '" + typestr + "' is not one gpuk takes (int32, uint32, int64, uint64, float32, float64)");
}

// The host arrays of one call: NumPy arrays kept alive, device arrays' copies.
struct HostArrays {
  std::vector<nb::object> kept;
  std::vector<std::unique_ptr<std::vector<std::byte>>> copies;

  HostView view(nb::handle value, const std::string& what) {
    if (nb::hasattr(value, "__cuda_array_interface__")) {
      const nb::dict cai = nb::borrow<nb::dict>(value.attr("__cuda_array_interface__"));
      if (cai.contains("strides") && !cai["strides"].is_none())
        throw ConfigError(what + ": a strided device array; pass a contiguous one");
      std::uint64_t size = 1;
      for (nb::handle extent : cai["shape"]) size *= nb::cast<std::uint64_t>(extent);
      const DType dtype = dtype_of_typestr(nb::cast<std::string>(cai["typestr"]), what);
      const auto ptr = nb::cast<std::uintptr_t>(nb::borrow<nb::tuple>(cai["data"])[0]);
      auto copy = std::make_unique<std::vector<std::byte>>(size * dtype_size(dtype));
      if (!copy->empty()) copy_to_host(device_of_pointer(ptr), ptr, copy->data(), copy->size(), 0);
      copies.push_back(std::move(copy));
      return {dtype, size, copies.back()->data()};
    }
    nb::object array = nb::module_::import_("numpy").attr("ascontiguousarray")(value);
    kept.push_back(array);
    const nb::dict ai = nb::borrow<nb::dict>(array.attr("__array_interface__"));
    const DType dtype = dtype_of_typestr(nb::cast<std::string>(ai["typestr"]), what);
    const auto ptr = nb::cast<std::uintptr_t>(nb::borrow<nb::tuple>(ai["data"])[0]);
    return {dtype, nb::cast<std::uint64_t>(array.attr("size")), reinterpret_cast<const void*>(ptr)};
  }
};

nb::object numpy_of(const HostView& v) {
  nb::bytes bytes(static_cast<const char*>(v.data), v.size * dtype_size(v.dtype));
  return nb::module_::import_("numpy").attr("frombuffer")(bytes, "dtype"_a = std::string(dtype_name(v.dtype)));
}

// The Python verify function as the C++ call's: verify(expected, got) with dicts of NumPy arrays
// by argument name; True/False, or (bool, message); an exception fails the variant with its text.
TuneVerify verify_of(nb::object function) {
  // Its last reference may go where the GIL is released: the deleter takes it.
  std::shared_ptr<nb::object> held(new nb::object(std::move(function)), [](nb::object* o) {
    nb::gil_scoped_acquire gil;
    delete o;
  });
  return [held](const std::map<std::string, HostView>& expected, const std::map<std::string, HostView>& got,
                std::string& message) {
    nb::gil_scoped_acquire gil;
    try {
      nb::dict e, g;
      for (const auto& [name, v] : expected) e[name.c_str()] = numpy_of(v);
      for (const auto& [name, v] : got) g[name.c_str()] = numpy_of(v);
      nb::object r = (*held)(e, g);
      if (nb::isinstance<nb::tuple>(r) && nb::len(r) == 2) {
        message = nb::cast<std::string>(nb::str(nb::borrow<nb::tuple>(r)[1]));
        return nb::cast<bool>(nb::bool_(nb::borrow<nb::tuple>(r)[0]));
      }
      return nb::cast<bool>(nb::bool_(r));
    } catch (nb::python_error& e) {
      message = std::string("the verify function raised ") + e.what();
      return false;
    }
  };
}

nb::dict result_dict(const TunedVariant& v) {
  nb::dict d;
  d["params"] = v.params;
  d["kernel"] = v.kernel;
  d["time"] = v.time_ms;
  d["times"] = v.times_ms;
  d["metrics"] = v.metrics;
  d["status"] = variant_status_name(v.status);
  d["reason"] = v.reason;
  d["verified"] = v.verified ? nb::cast(*v.verified) : nb::none();
  d["registers"] = v.registers;
  d["compile_time"] = v.compile_ms;
  d["verification_time"] = v.verification_ms;
  d["benchmark_time"] = v.benchmark_ms;
  return d;
}

nb::dict results_dict(const TuneResults& r) {
  nb::list results;
  for (const auto& v : r.results) results.append(result_dict(v));
  nb::dict device;
  device["name"] = r.device_name;
  device["arch"] = r.arch;
  device["sm_count"] = r.sm_count;
  device["peak_bandwidth_gbs"] = r.peak_bandwidth_gbs;
  device["nvrtc"] = r.nvrtc;
  device["devices"] = r.devices;
  nb::dict compile;
  compile["programs"] = r.programs;
  compile["from_cache"] = r.programs_from_cache;
  compile["seconds"] = r.compile_seconds;
  nb::dict out;
  out["results"] = results;
  out["ranking"] = r.ranking;
  out["best"] = r.best ? nb::cast(*r.best) : nb::none();
  out["device"] = device;
  out["notes"] = r.notes;
  out["strategy"] = r.strategy;
  out["objective"] = r.objective;
  out["wall_seconds"] = r.wall_seconds;
  out["compile"] = compile;
  out["seconds"] = r.seconds;
  out["journal"] = r.journal.empty() ? nb::none() : nb::cast(r.journal);
  out["stop_reason"] = r.stopped_early ? nb::cast(r.stop_reason) : nb::none();
  return out;
}

}  // namespace

void bind_tune(nb::module_& m) {
  m.def(
      "tune_kernel",
      [](nb::dict config, nb::dict arrays, nb::dict answers, nb::dict constants, nb::object verify,
         std::optional<std::string> journal, std::optional<std::vector<int>> devices, bool quiet) {
        // Where the kernel files are: the config's `kernel_dirs` (this call's, not a config key).
        EngineOptions options;
        nb::dict tree;
        for (auto [key, value] : config) {
          if (nb::cast<std::string>(nb::str(key)) == "kernel_dirs") {
            for (nb::handle d : value) options.kernel_dirs.emplace_back(nb::cast<std::string>(nb::str(d)));
          } else {
            tree[key] = value;
          }
        }
        TuneRequest request;
        request.config = json_of(tree, "config").dump(2);
        HostArrays host;
        for (auto [name, value] : arrays) {
          const std::string n = nb::cast<std::string>(name);
          request.inputs[n] = host.view(value, "arrays['" + n + "']");
        }
        for (auto [name, value] : answers) {
          const std::string n = nb::cast<std::string>(name);
          if (value.is_none()) request.answers[n] = std::nullopt;
          else request.answers[n] = host.view(value, "answers['" + n + "']");
        }
        for (auto [name, value] : constants) {
          const std::string n = nb::cast<std::string>(name);
          request.constants[n] = host.view(value, "constants['" + n + "']");
        }
        if (!verify.is_none()) request.verify = verify_of(verify);
        if (journal) request.journal = *journal;
        if (devices) request.devices = *devices;
        request.quiet = quiet;
        TuneResults results;
        {
          nb::gil_scoped_release release;
          const Engine engine(options);
          results = tune_kernel(engine, request);
        }
        return results_dict(results);
      },
      "config"_a, "arrays"_a, "answers"_a, "constants"_a, "verify"_a.none(), "journal"_a.none(), "devices"_a.none(),
      "quiet"_a,
      "One sweep of a declared kernel by gpuk's tuner (gpuk/tuning.hpp): `config` a declared tune config's keys "
      "(and `points:`, `kernel_dirs`), the arrays by argument name, the answers (None: not compared), constant "
      "memory by symbol, a verify(expected, got) function or None, a journal directory or None, the GPUs or None. "
      "Returns {results, ranking, best, device, notes, strategy, objective, wall_seconds, compile, journal, "
      "stop_reason}.");
}

}  // namespace gpuk::python
