// The host side of a run, made before any GPU is touched (run/host_side.hpp).
#include "run/host_side.hpp"

#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

#include "config/config.hpp"
#include "device/host_memory.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"
#include "plugin/plugin.hpp"
#include "run/output_check.hpp"

namespace gpuk {

HostArray run_input(const RunSpec& spec) {
  HostArray input = spec.data.file ? load_file(spec.data) : generate(spec.data, spec.dtype, spec.size);
  if (input.dtype() != spec.dtype || input.size() != spec.size)
    throw ConfigError(spec.path.string() + ": the data file holds " + std::to_string(input.size()) + " " +
                      std::string(dtype_name(input.dtype())) + " elements, but the config asks for " +
                      std::to_string(spec.size) + " " + std::string(dtype_name(spec.dtype)));
  return input;
}

namespace {

HostArray copy_of(const HostArray& a) {
  HostArray out(a.dtype(), a.size());
  if (a.bytes() > 0) std::memcpy(out.data(), a.data(), a.bytes());
  return out;
}

// A declared kernel's data: each input array generated (or read) on its own, and the expected
// outputs of a .npy reference; the view's own array is empty.
InputView declared_input(const RunSpec& spec, std::string* pin_note) {
  InputView view(std::make_shared<const HostArray>(HostArray(spec.dtype, 0)), 1);
  for (const DeclaredArg* a : spec.declared->declaration->arrays()) {
    const auto data = spec.arg_data.find(a->name);
    if (data == spec.arg_data.end()) continue;  // an output
    const auto length = static_cast<std::uint64_t>(eval_sizes(a->length, spec.sizes));
    const auto given = spec.input_arrays.find(a->name);
    HostArray array = given != spec.input_arrays.end() ? copy_of(*given->second)
                      : data->second.file              ? load_file(data->second)
                                                       : generate(data->second, a->dtype, length);
    if (array.dtype() != a->dtype || array.size() != length)
      throw ConfigError(spec.path.string() + ": the data of " + a->name + " holds " + std::to_string(array.size()) +
                        " " + std::string(dtype_name(array.dtype())) + " elements; it takes " + std::to_string(length) +
                        " " + std::string(dtype_name(a->dtype)));
    // Page-locked only where it is uploaded from (Bench: pin_note given); a sweep's parent, which
    // forks its GPU workers, must not start CUDA.
    if (pin_note) {
      const std::string note = array.pin();
      if (pin_note->empty()) *pin_note = note;
    }
    view.arrays[a->name] = std::make_shared<const HostArray>(std::move(array));
  }
  for (const auto& [name, file] : spec.expected)
    view.expected[name] = std::make_shared<const HostArray>(read_npy(file));
  for (const auto& [name, array] : spec.expected_arrays) view.expected[name] = array;
  return view;
}

}  // namespace

std::unique_ptr<Workload> make_run_workload(const RunSpec& spec, const FamilyPlugin& plugin, std::string* pin_note) {
  if (spec.declared) {
    const InputView view = declared_input(spec, pin_note);
    try {
      if (spec.output_check) return checked_by(spec, plugin.make_workload(problem_of(spec), view));
      return plugin.make_workload(problem_of(spec), view);
    } catch (const ConfigError& e) {
      throw ConfigError(spec.path.string() + ": " + e.what());
    }
  }
  HostArray input = run_input(spec);
  if (pin_note) *pin_note = input.pin();
  const InputView view(std::make_shared<const HostArray>(std::move(input)), spec.data.seed);
  try {
    return plugin.make_workload(problem_of(spec), view);
  } catch (const ConfigError& e) {
    throw ConfigError(spec.path.string() + ": " + e.what());
  }
}

HostSide make_host_side(const RunSpec& spec, const FamilyPlugin& plugin) {
  refuse_if_host_memory_short(spec, plugin);
  HostSide side;
  std::exception_ptr failed;
  std::thread worker([&] {
    try {
      const auto since = [](std::chrono::steady_clock::time_point from) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
      };
      auto at = std::chrono::steady_clock::now();
      side.workload = make_run_workload(spec, plugin);
      side.data_seconds = since(at);
      at = std::chrono::steady_clock::now();
      (void)side.workload->cpu_reference(1);
      side.reference_seconds = since(at);
    } catch (...) {
      failed = std::current_exception();
    }
  });
  worker.join();
  if (failed) std::rethrow_exception(failed);
  return side;
}

void refuse_if_host_memory_short(const RunSpec& spec, const FamilyPlugin& plugin) {
  refuse_if_host_memory_short(spec, plugin.host_bytes(problem_of(spec)));
}

void refuse_if_host_memory_short(const RunSpec& spec, std::uint64_t needed) {
  const HostMemory host = available_host_memory();
  if (needed <= host.available) return;
  throw Error("the " + spec.family + " run of " + std::to_string(spec.size) + " " + std::string(dtype_name(spec.dtype)) +
              " elements needs " + bytes_text(needed) +
              " of host memory (its input, CPU reference and downloaded result); this machine has " +
              bytes_text(host.available) + " available (" + host.source + ")");
}

}  // namespace gpuk
