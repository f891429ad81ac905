// Files that readers see whole or not at all: written to a temporary file beside the target,
// flushed to disk (fsync), then renamed over it (rename is atomic within a file system), and the
// directory flushed too. Each step is a fault point (util/fault_point.hpp).
#pragma once
#include <filesystem>
#include <string_view>
#include <vector>

namespace gpuk {

// Writes `bytes` to `path` atomically, creating its directory. Throws Error naming `what`
// ("the tuning database") and the path when it cannot; the temporary file is removed then.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes, std::string_view what);
// The same for bytes in pieces (a header and a large array: no copy of them joined).
void write_file_atomically(const std::filesystem::path& path, const std::vector<std::string_view>& pieces,
                           std::string_view what);

// A file the user named for output (a report, a matrix cell's report): written atomically, as
// above, when PATH is a regular file or not there yet, so that a killed process never leaves half
// a report where a whole one was (the temporary files of earlier writers of PATH that were killed
// are removed first); written straight into anything else (a FIFO, /dev/stdout, a symbolic
// link), with every write checked. Throws Error naming `what` and PATH.
void write_output_file(const std::filesystem::path& path, std::string_view bytes, std::string_view what);
void write_output_file(const std::filesystem::path& path, const std::vector<std::string_view>& pieces,
                       std::string_view what);

// A temporary name beside `path`, unique per process and call: PATH.tmp-PID-N.
std::filesystem::path temporary_path(const std::filesystem::path& path);

// Removes the temporary files in `dir` (with a prefix: those of PREFIX only) whose writing process
// is gone (killed while it wrote: SIGKILL runs no clean-up; a zombie counts as gone). A live
// writer's file is kept, as is one of a process id this machine does not know to be dead.
// Returns how many it removed.
int remove_orphaned_temporaries(const std::filesystem::path& dir, std::string_view prefix = {});

// Removes every temporary file of `path` (PATH.tmp-*), live writer or not: for a file whose every
// writer holds a lock that the caller holds now, so that any such file is a killed writer's (a
// killed writer lets go of its lock while it exits, before it is reaped or even a zombie: a
// check of its process id may still find it). Returns how many it removed.
int remove_temporaries_of(const std::filesystem::path& path);

}  // namespace gpuk
