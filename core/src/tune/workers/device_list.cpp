// Which GPUs a pooled sweep uses: `--devices all|0,1,...`, and the count of GPUs taken in a
// child process, so that the process that forks the workers never initialises CUDA (tune/workers/pool.hpp).
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include "gpuk/error.hpp"
#include "tune/workers/isolate.hpp"
#include "tune/workers/pool.hpp"
#include "tune/workers/pool_wire.hpp"
#include "util/timeline.hpp"

namespace gpuk {

std::vector<int> parse_device_list(const std::string& text, int count) {
  const std::string there = count == 0   ? "there is no GPU"
                            : count == 1 ? "there is 1 GPU (ordinal 0)"
                                         : "there are " + std::to_string(count) + " GPUs (ordinals 0 to " +
                                               std::to_string(count - 1) + ")";
  std::vector<int> out;
  if (text == "all") {
    if (count == 0) throw ConfigError("--devices all: " + there);
    for (int i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    int ordinal = -1;
    try {
      ordinal = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || ordinal < 0)
      throw ConfigError("--devices takes 'all' or GPU ordinals separated by commas (0,1), not '" + text + "'");
    if (ordinal >= count) throw ConfigError("--devices " + text + ": GPU " + item + " does not exist; " + there);
    out.push_back(ordinal);
  }
  if (out.empty()) throw ConfigError("--devices takes 'all' or GPU ordinals separated by commas (0,1), not '" + text + "'");
  return out;
}

DeviceCounting::DeviceCounting() {
  int fds[2];
  if (::pipe(fds) != 0) throw Error("cannot create a pipe to count the GPUs");
  pid_ = fork_process(
      [&] {
        ::close(fds[0]);
        timeline("counting child: start");
        std::string reason;
        const int n = device_count(&reason);
        nlohmann::json devices = nlohmann::json::array();
        try {
          for (int i = 0; i < n; ++i) devices.push_back(detail::device_json(device_info(i)));
        } catch (const std::exception&) {
          devices = nlohmann::json::array();  // counted, not described: the workers will say
        }
        timeline("counting child: counted");
        const std::string msg = nlohmann::json{{"count", n}, {"why", reason}, {"devices", devices}}.dump();
        (void)!::write(fds[1], msg.data(), msg.size());
        ::close(fds[1]);  // the answer is complete now, not when this process has left CUDA
        return 0;
      },
      "a process to count the GPUs");
  ::close(fds[1]);
  fd_ = fds[0];
}

DeviceCounting::~DeviceCounting() {
  if (fd_ >= 0) (void)wait();
  // Reaped here, not in wait(): its exit (the driver's teardown) takes tens of milliseconds after
  // its answer, which nothing needs to wait for.
  if (pid_ > 0) (void)wait_process(pid_);
}

bool DeviceCounting::answered() const {
  if (fd_ < 0) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

int DeviceCounting::wait(std::string* why, std::vector<DeviceInfo>* devices) {
  if (fd_ < 0) throw Error("internal: the GPUs were counted already");
  std::string msg;
  char buf[4096];
  for (;;) {
    const ssize_t got = ::read(fd_, buf, sizeof buf);
    if (got > 0) msg.append(buf, static_cast<std::size_t>(got));
    else if (got == 0 || errno != EINTR) break;
  }
  ::close(fd_);
  fd_ = -1;
  const nlohmann::json j = nlohmann::json::parse(msg, nullptr, false);
  if (!j.is_object() || !j.contains("count")) {
    if (why) *why = "the process that counts the GPUs died";
    return 0;
  }
  if (why) *why = j.value("why", std::string());
  if (devices) {
    devices->clear();
    for (const auto& d : j.at("devices")) devices->push_back(detail::device_of(d));
  }
  return j.at("count").get<int>();
}

int count_devices_in_child(std::string* why) { return DeviceCounting().wait(why); }

}  // namespace gpuk
