// The edge between core and a family: every call core makes into a loaded plugin, its
// FamilyPlugin and the Launchers and Workloads it makes, passes here. Whatever the plugin throws stops at the edge as a value (PluginFault: the kind of
// error and its words) and core raises it again as one of its own errors: a gpuk error keeps its
// kind and words; anything else (std::out_of_range, std::bad_alloc, an int) becomes an Error
// naming the family and the call, never an exception core does not know and cannot report.
//
// The catch is on core's side of dlopen: a plugin's frames still unwind to here. Catching inside
// the plugin would need a shim compiled into it around each call, with other signatures (a C
// function table: docs/plugins.md says when that is worth it); the plugins are built in this tree
// with core's compiler and standard library, and refused when their ABI version differs.
#pragma once
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "plugin/plugin.hpp"

namespace gpuk {

// What a plugin threw, as a value.
struct PluginFault {
  enum class Kind { error, config, device, no_device, compile, fault, time_limit };
  Kind kind = Kind::error;
  std::string message;
};

// `thrown` as a value. A gpuk error keeps its kind and words; anything else says
// "the <family> plugin's <call> failed: <what>".
PluginFault fault_of(const std::exception_ptr& thrown, const std::string& family, const std::string& call);
// Throws the gpuk error of `fault`'s kind with its words.
[[noreturn]] void raise(const PluginFault& fault);

// `plugin` behind the edge: each of its calls, and each call of the Launchers and Workloads it
// makes, guarded. The registry (PluginRegistry) hands out only these, so that every call core
// makes into a loaded family passes here; `family` names it in the words of a foreign exception.
// `plugin` must outlive what this returns.
std::unique_ptr<FamilyPlugin> guard_plugin(const FamilyPlugin& plugin, const std::string& family);

// What a run asks the family for once, before anything else: its one Launcher (behind the edge)
// and the host memory it will hold at its peak.
struct FamilyParts {
  std::unique_ptr<Launcher> launcher;
  std::uint64_t host_bytes = 0;
};
FamilyParts family_parts(const FamilyPlugin& plugin, const Problem& problem);

}  // namespace gpuk
