// The edge between core and a family's objects: every call core makes into a plugin's Launcher or
// Workload, and the FamilyPlugin calls that make them (make_launcher, make_workload, host_bytes),
// passes here. Whatever the plugin throws stops at the edge as a value (PluginFault: the kind of
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

// The family's Launcher and Workload behind the edge: each call of theirs is guarded.
std::unique_ptr<Launcher> family_launcher(const FamilyPlugin& plugin, const Problem& problem);
std::unique_ptr<Workload> family_workload(const FamilyPlugin& plugin, const Problem& problem, InputView input);
std::uint64_t family_host_bytes(const FamilyPlugin& plugin, const Problem& problem);

// What a run asks the family for once, before anything else: its one Launcher (behind the edge)
// and the host memory it will hold at its peak.
struct FamilyParts {
  std::unique_ptr<Launcher> launcher;
  std::uint64_t host_bytes = 0;
};
FamilyParts family_parts(const FamilyPlugin& plugin, const Problem& problem);

}  // namespace gpuk
