// The pipes between a pooled sweep's parent and its workers: one JSON object per line
// (tune/workers/pool_wire.hpp).
#include "tune/workers/pool_wire.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "gpuk/error.hpp"

namespace gpuk::detail {

using nlohmann::json;

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("a worker's pipe closed");
    done += static_cast<std::size_t>(n);
  }
}

void send(int fd, const json& message) { write_all(fd, message.dump() + "\n"); }

std::optional<std::string> LineReader::next() {
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    char chunk[65536];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

json device_json(const DeviceInfo& d) {
  return {{"ordinal", d.ordinal}, {"name", d.name}, {"cc_major", d.cc_major}, {"cc_minor", d.cc_minor},
          {"sm_count", d.sm_count}, {"max_threads_per_block", d.max_threads_per_block},
          {"max_shared_per_block_optin", d.max_shared_per_block_optin}, {"l2_bytes", d.l2_bytes},
          {"total_memory", d.total_memory}, {"peak_bandwidth_gbs", d.peak_bandwidth_gbs},
          {"driver_version", d.driver_version}, {"pci_bus_id", d.pci_bus_id}};
}

DeviceInfo device_of(const json& j) {
  DeviceInfo d;
  d.ordinal = j.at("ordinal");
  d.name = j.at("name");
  d.cc_major = j.at("cc_major");
  d.cc_minor = j.at("cc_minor");
  d.sm_count = j.at("sm_count");
  d.max_threads_per_block = j.at("max_threads_per_block");
  d.max_shared_per_block_optin = j.at("max_shared_per_block_optin");
  d.l2_bytes = j.at("l2_bytes");
  d.total_memory = j.at("total_memory");
  d.peak_bandwidth_gbs = j.at("peak_bandwidth_gbs");
  d.driver_version = j.at("driver_version");
  d.pci_bus_id = j.value("pci_bus_id", std::string());
  return d;
}

json times_to_json(const SweepTimes& t) {
  return {t.start, t.data, t.reference, t.compile_wall, t.compile_sum, t.compile_wait, t.measure,
          t.verify,  t.recheck, t.save, t.scratch, t.idle, t.total};
}

SweepTimes times_from_json(const json& j) {
  SweepTimes t;
  const auto v = j.get<std::vector<double>>();
  if (v.size() != 13) return t;
  t = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]};
  return t;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return "died of signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

}  // namespace gpuk::detail
