// One NVRTC program, start to end, as plain data: what Jit::compile hands to NVRTC (in this
// process, or in a compile process: jit/nvrtc_processes.hpp) and what comes back.
#pragma once
#include <string>
#include <vector>

namespace gpuk {

struct NvrtcRequest {
  std::string source;
  std::string name;                  // the program's name in NVRTC's messages (the file's path)
  std::vector<std::string> entries;  // name expressions
  std::vector<std::string> options;
  // NVRTC's automatic precompiled header (jit/pch_source.hpp), where the program is compiled in
  // a compile process (which has a folder for it); else ignored.
  bool pch = false;
  std::string cwd;  // the caller's working directory, where relative paths start
};

struct NvrtcOutcome {
  bool compiled = false;
  std::string log;    // NVRTC's log, trailing newlines and NULs removed
  std::string error;  // an NVRTC call that failed (not the program's errors: those are in log)
  std::vector<char> cubin;
  std::vector<std::string> lowered;  // per entry, when compiled
};

// Runs NVRTC here. Never throws for what NVRTC says: a failed call is `error`. `pch_dir`: the
// folder of this process's precompiled headers, when request.pch asks for one (only a compile
// process, whose one thread is NVRTC's, gives one); the PCH heap grows when a header needs more.
NvrtcOutcome run_nvrtc(const NvrtcRequest& request, const std::string* pch_dir = nullptr);

// The wire form of both (a compile process's socket): lengths and bytes.
std::string encode(const NvrtcRequest& request);
std::string encode(const NvrtcOutcome& outcome);
bool decode(const std::string& bytes, NvrtcRequest& request);
bool decode(const std::string& bytes, NvrtcOutcome& outcome);

}  // namespace gpuk
