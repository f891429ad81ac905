// What the files of the gpuk command share: the exit status, one-line errors, the commands that
// live beside tools/cli/gpuk.cpp. Nothing here knows a family.
#pragma once
#include <string>
#include <vector>

#include "run/runtime.hpp"

namespace gpuk::cli {

// The exit status of every command (README.md, "Exit status").
enum Exit : int {
  kOk = 0,
  kError = 1,         // anything below does not cover: a compile error, a CUDA error, a file not written
  kBadInput = 2,      // a bad config, kernel file metadata, argument or command line
  kWrongAnswer = 3,   // run: verification failed; tune: no variant verified
  kFaulted = 4,       // a variant faulted or ran past its time limit
  kNoGpu = 5,         // no NVIDIA driver or no GPU: nothing could run
  kSlower = 6,        // compare: a row slower than the threshold, or timed in A and not in B
};

// One line on stderr, "gpuk: " before it unless the message names gpuk itself. A message may
// quote what the user gave: control bytes are escaped and it stops after 4 KB (a compile log's
// first errors are the ones that matter).
void print_error(const std::string& what, const char* end = "\n");

// `gpuk list` (tools/cli/list.cpp): the families, the kernel files and their parameters.
int cmd_list(const RuntimeOptions& g);

// `gpuk check [TARGETS] [--arch sm_XX]` (tools/cli/check.cpp): NVRTC only, no GPU needed.
int cmd_check(const RuntimeOptions& g, const std::vector<std::string>& targets, const std::string& arch_option);

}  // namespace gpuk::cli
