// The pipes between a pooled sweep's parent and its workers (tune/workers/pool.hpp): one JSON object per
// line, the GPU described in JSON, and the worker process's entry point. Not installed.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tune/workers/isolate.hpp"
#include "tune/workers/pool.hpp"

namespace gpuk::detail {

constexpr int kLostExit = kGoOnExit;  // a worker whose CUDA context a variant took down

void write_all(int fd, const std::string& text);
void send(int fd, const nlohmann::json& message);

// Reads lines from a pipe; next() blocks, buffered() says whether a whole line is buffered.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  int fd() const { return fd_; }
  bool buffered() const { return buffer_.find('\n') != std::string::npos; }
  // The next line, or nullopt at the end of the stream.
  std::optional<std::string> next();

 private:
  int fd_;
  std::string buffer_;
};

nlohmann::json device_json(const DeviceInfo& d);
DeviceInfo device_of(const nlohmann::json& j);
// A worker's time breakdown on the wire (every part, in SweepTimes' order).
nlohmann::json times_to_json(const SweepTimes& t);
SweepTimes times_from_json(const nlohmann::json& j);

// "died of signal 9", "exited with status 1": a wait status in words.
std::string exit_text(int status);

// The worker process: serves requests until "quit" or the end of its input, then leaves without
// exit handlers (a kernel abandoned past its time limit may still run).
[[noreturn]] void worker_main(int in_fd, int out_fd, const Space& space, const WorkerFactory& factory, int ordinal);

}  // namespace gpuk::detail
