// Faulting and hanging kernels (tests/data/kernels/reduce/faulty.cu: FAULT 0 is correct, 1 writes
// through a wild pointer, 2 traps, 3 spins forever). `gpuk tune` goes on with the sweep in a fresh
// process after each; `gpuk run` names the variant and the error and exits 4. They run as child
// `gpuk` processes under `timeout` (a fault kills the CUDA context of the process it happens in,
// for good), so that a hang fails the test instead of hanging it. Without a GPU this program
// prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "helpers.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "tune/sweep/sweep.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

fs::path test_kernels() { return test::source_dir() / "tests" / "data" / "kernels"; }

struct Gpu {
  Runtime runtime{test::runtime_options()};
  const PluginRegistry& plugins = runtime.plugins();
  Device device{0};
  const CompileCache& cache = runtime.cache();
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

using Cli = test::CommandResult;

// `gpuk ARGS` with the test kernels, killed after `limit` seconds (status 137 then).
Cli gpuk_cli(const std::string& args, int limit) {
  return test::run_command("timeout -s KILL " + std::to_string(limit) + " " + std::string(GPUK_EXE) + " --kernels " +
                           test_kernels().string() + " " + args);
}

std::string run_config(int fault) {
  return "family: reduce\noperation: max\ndtype: float32\nsize: 100000\nkernel: faulty\n"
         "params: {FAULT: " + std::to_string(fault) + ", BLOCK: 256}\n"
         "data: {generator: uniform, low: -1, high: 1, seed: 5}\nwarmup: 2\nrepeats: 5\n";
}

}  // namespace

TEST_CASE("the faulty kernel file compiles for every FAULT, and FAULT 0 is a correct reduction") {
  const Runtime runtime(test::runtime_options({test_kernels()}));
  const KernelLibrary& kernels = runtime.kernels();
  RunSpec spec = parse_run_spec(run_config(0), "faulty.yaml", gpu().plugins, kernels);
  spec.baseline = false;
  const RunReport r = run(spec, {runtime}, gpu().device);
  CHECK(r.verified);
  CHECK(r.verification.passed);
}

TEST_CASE("gpuk tune over faulting variants finishes, marks each with its CUDA error, and picks a correct one") {
  const test::TempDir dir;
  // onepass first, then faulty (FAULT 1 and 2 fault, 0 is a correct but slow single block): each
  // fault ends one process's part of the sweep and a fresh process goes on. The best three, all
  // onepass and all measured by the first process, are rechecked by the last one, which has
  // nothing left to measure: the measurements cross the process boundary.
  const fs::path config = dir.write(
      "tune.yaml",
      "family: reduce\noperation: max\ndtype: float32\nsize: 1_000_000\n"
      "data: {generator: uniform, low: -1, high: 1, seed: 3}\n"
      "kernels: [onepass, faulty]\n"
      "params:\n  FAULT: [0, 1, 2]\n  BLOCK: [256]\n  UNROLL: [1, 4]\n  LOAD: [0]\n  SPLIT: [0]\n  WAVES: [1]\n  FOLD: [1]\n"
      "warmup: 2\nrepeats: 5\nrecheck: {top: 3, repeats: 8}\n");
  const fs::path json = dir.path() / "tune.json";
  const Cli r = gpuk_cli("--tuning-db " + (dir.path() / "db.json").string() + " tune " + config.string() +
                             " --fresh --json " + json.string(),  // --fresh: the faults happen again on every run
                         150);
  CAPTURE(r.output);
  MESSAGE("gpuk tune over FAULT 0, 1, 2 and onepass: exit " << r.status << " after " << r.seconds << " s\n"
                                                             << r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("faulted:") != std::string::npos);
  CHECK(r.output.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
  CHECK(r.output.find("the sweep goes on in a fresh process") != std::string::npos);
  REQUIRE(fs::exists(json));
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["aborted"] == false);
  CHECK(j["stopped"] == "");
  int faulted = 0, ok = 0, rechecked = 0;
  for (const auto& v : j["variants"]) {
    CAPTURE(v.dump());
    const std::string label = v["variant"];
    if (label.rfind("faulty FAULT=1", 0) == 0 || label.rfind("faulty FAULT=2", 0) == 0) {
      CHECK(v["status"] == "faulted");
      CHECK(v["why"].get<std::string>().rfind("CUDA_ERROR_", 0) == 0);
      CHECK(v["detail"].get<std::string>().find("faulty.cu faulted: CUDA_ERROR_") != std::string::npos);
      CHECK(v["rank"].is_null());
      ++faulted;
    } else if (v["status"] != "pruned") {
      CHECK(v["status"] == "ok");
      ++ok;
    }
    if (label.rfind("faulty FAULT=1", 0) == 0) CHECK(v["why"].get<std::string>().find("ILLEGAL_ADDRESS") != std::string::npos);
    if (!v["rank"].is_null() && v["rank"].get<int>() <= 3) {
      CHECK(label.rfind("onepass", 0) == 0);
      CHECK(v["rechecked"] == true);
      ++rechecked;
    }
  }
  CHECK(rechecked == 3);
  CHECK(faulted == 2);
  CHECK(ok >= 2);
  REQUIRE(j.contains("best"));
  CHECK(j["best"]["variant"].get<std::string>().find("FAULT=1") == std::string::npos);
  CHECK(j["best"]["variant"].get<std::string>().find("FAULT=2") == std::string::npos);
}

TEST_CASE("gpuk run of a faulting variant exits 4 naming the variant, the kernel file and the CUDA error") {
  const test::TempDir dir;
  for (int fault : {1, 2}) {
    CAPTURE(fault);
    const fs::path config = dir.write("fault" + std::to_string(fault) + ".yaml", run_config(fault));
    const Cli r = gpuk_cli("run " + config.string(), 120);
    CAPTURE(r.output);
    CHECK(r.status == 4);
    CHECK(r.output.find("gpuk: variant faulty FAULT=" + std::to_string(fault) + " BLOCK=256") != std::string::npos);
    CHECK(r.output.find("faulty.cu faulted: CUDA_ERROR_") != std::string::npos);
    if (fault == 1) CHECK(r.output.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
    MESSAGE("gpuk run, FAULT=" << fault << ": exit " << r.status << "\n" << r.output);
  }
}

TEST_CASE("gpuk run of a hanging variant is abandoned after its time limit and exits 4") {
  const test::TempDir dir;
  const fs::path config = dir.write("hang.yaml", run_config(3));
  const Cli r = gpuk_cli("run " + config.string() + " --time-limit 2", 90);
  CAPTURE(r.output);
  CHECK(r.status == 4);
  CHECK(r.output.find("ran past its time limit of 2 s and was abandoned") != std::string::npos);
  CHECK(r.output.find("variant faulty FAULT=3 BLOCK=256") != std::string::npos);
  CHECK(r.seconds < 30);
  MESSAGE("gpuk run, FAULT=3: exit " << r.status << " after " << r.seconds << " s\n" << r.output);
}

TEST_CASE("gpuk tune abandons a hanging variant after its time limit, goes on in a fresh process and finishes") {
  const test::TempDir dir;
  const fs::path config = dir.write(
      "tune.yaml",
      "family: reduce\noperation: max\ndtype: float32\nsize: 100000\n"
      "data: {generator: uniform, low: -1, high: 1, seed: 3}\n"
      "kernels: [faulty]\nparams:\n  FAULT: [3, 1, 0]\n  BLOCK: [256]\n"
      "warmup: 2\nrepeats: 5\nrecheck: {top: 1, repeats: 4}\n");
  const fs::path json = dir.path() / "tune.json";
  const Cli r = gpuk_cli("--tuning-db " + (dir.path() / "db.json").string() + " tune " + config.string() +
                             " --fresh --time-limit 2 --json " + json.string(),
                         150);
  CAPTURE(r.output);
  MESSAGE("gpuk tune over FAULT 3, 1, 0: exit " << r.status << " after " << r.seconds << " s\n" << r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("time limit:") != std::string::npos);
  CHECK(r.output.find("faulted:") != std::string::npos);
  CHECK(r.output.find("best     faulty FAULT=0 BLOCK=256") != std::string::npos);
  REQUIRE(fs::exists(json));
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["aborted"] == false);
  std::map<std::int64_t, std::string> status;
  for (const auto& v : j["variants"]) status[v["params"]["FAULT"].get<std::int64_t>()] = v["status"];
  CHECK(status[3] == "time limit");
  CHECK(status[1] == "faulted");
  CHECK(status[0] == "ok");
}

TEST_CASE("an input larger than the device's memory is refused up front by run and tune, with the sizes") {
  const test::TempDir dir;
  // Twice the device's memory, so that it cannot fit whatever else is resident. The refusal
  // comes before the data is generated: a few seconds, not the minutes twice the device's memory would take.
  const std::int64_t elements = gpu().device.info().total_memory / 8 * 2;
  const std::string data = "dtype: float64\nsize: " + std::to_string(elements) +
                           "\ndata: {generator: uniform, low: -1, high: 1, seed: 3}\n";
  const std::vector<std::pair<std::string, std::string>> configs = {
      {"run", "family: reduce\noperation: argmax\n" + data},
      {"run", "family: search\noperation: find\nvalue_index: 5\n" + data},
      {"run", "family: sort\noperation: sort\n" + data},
      {"tune", "family: reduce\noperation: max\nkernels: [onepass]\n"
               "params: {BLOCK: [256, 512], LOAD: [0], SPLIT: [0], WAVES: [1], FOLD: [1]}\n" +
                   data}};
  int i = 0;
  for (const auto& entry : configs) {
    const std::string& command = entry.first;  // not a structured binding: CAPTURE takes it by reference
    const std::string& text = entry.second;
    CAPTURE(text);
    const fs::path config = dir.write("huge" + std::to_string(i++) + ".yaml", text);
    const Cli r = gpuk_cli("--tuning-db " + (dir.path() / "db.json").string() + " " + command + " " +
                               config.string(),
                           60);
    CAPTURE(r.output);
    MESSAGE("gpuk " << command << " of " << elements << " float64: exit " << r.status << " after " << r.seconds
                    << " s\n" << r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find("the input needs " + std::to_string(elements * 8) + " bytes of device memory") !=
          std::string::npos);
    CHECK(r.output.find("bytes free") != std::string::npos);
    CHECK(r.seconds < 20);
  }
}

TEST_CASE("a sort whose input fits but whose buffers do not is refused up front, with the sizes") {
  const test::TempDir dir;
  Gpu& g = gpu();
  // Sized from this device's free memory (the H100's 80 GB once was written in: on an H200 the
  // buffers of 2^32 - 1 uint64 keys fit). The sort kernels take n < 2^32; the keys are uint64, the
  // widest; where keys alone (in, out, the digit passes' spare) cannot outgrow the free memory,
  // sort_pairs adds as many uint64 values.
  const std::uint64_t free = g.device.free_memory();
  const std::uint64_t n = std::min<std::uint64_t>(4294967295ull, free / 16);  // input: at most half the free memory
  const std::string head = "family: sort\ndtype: uint64\nsize: " + std::to_string(n) +
                           "\ndata: {generator: uniform, low: 0, high: 1000, seed: 3}\n";
  std::string text;
  std::uint64_t buffers = 0;
  for (const char* operation : {"operation: sort\n", "operation: sort_pairs\nvalues: uint64\n"}) {
    text = head + operation;
    buffers = run_device_bytes(parse_run_spec(text, "sort.yaml", g.plugins, g.runtime.kernels()), g.plugins.get("sort"));
    if (buffers > free + free / 8) break;  // over it with room: the gpuk process's own context is no worry
  }
  if (buffers <= free + free / 8) {
    MESSAGE("skipped: " << g.device.info().name << " has " << free << " bytes free, room for the buffers of every sort "
                        << "of fewer than 2^32 uint64 keys and values (" << buffers << ")");
    return;
  }
  REQUIRE(n * 8 < free);
  const fs::path config = dir.write("sort.yaml", text);
  CAPTURE(text);
  const Cli r = gpuk_cli("run " + config.string(), 60);
  CAPTURE(r.output);
  MESSAGE("gpuk run of " << n << " uint64 keys (" << buffers << " bytes of buffers, " << free << " free): exit "
                         << r.status << " after " << r.seconds << " s\n" << r.output);
  CHECK(r.status == 1);
  const std::string needs = "the input needs " + std::to_string(n * 8) + " bytes of device memory (";
  const auto at = r.output.find(needs);
  REQUIRE(at != std::string::npos);
  // The run's buffers, plus the scratch words of the plan (well under a byte per key).
  const std::uint64_t total = std::stoull(r.output.substr(at + needs.size()));
  CHECK(total >= buffers);
  CHECK(total < buffers + n);
  CHECK(r.output.find(std::to_string(total) + " with the sort run's other buffers)") != std::string::npos);
  CHECK(r.seconds < 20);
}

TEST_CASE("gpuk tune --devices 0,0: two worker processes share a sweep over faulting variants; the faults end "
          "only the worker they happen in") {
  const test::TempDir dir;
  const fs::path config = dir.write(
      "tune.yaml",
      "family: reduce\noperation: max\ndtype: float32\nsize: 1_000_000\n"
      "data: {generator: uniform, low: -1, high: 1, seed: 3}\n"
      "kernels: [onepass, faulty]\n"
      "params:\n  FAULT: [0, 1, 2]\n  BLOCK: [128, 256]\n  UNROLL: [1, 2, 4]\n  LOAD: [0]\n  SPLIT: [0]\n  WAVES: [1]\n  FOLD: [1]\n"
      "warmup: 2\nrepeats: 5\nrecheck: {top: 3, repeats: 8}\n");
  const fs::path json = dir.path() / "tune.json";
  // --fresh: the journal of the tests before (the same problem) would give points no worker measured.
  const Cli r = gpuk_cli("--tuning-db " + (dir.path() / "db.json").string() + " tune --devices 0,0 --fresh " +
                             config.string() + " --json " + json.string(),
                         150);
  CAPTURE(r.output);
  MESSAGE("gpuk tune --devices 0,0: exit " << r.status << " after " << r.seconds << " s\n" << r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("pooled   GPU 0") != std::string::npos);
  REQUIRE(fs::exists(json));
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["aborted"] == false);
  CHECK(j["pooled_devices"].size() == 2);
  int faulted = 0, ok = 0;
  for (const auto& v : j["variants"]) {
    CAPTURE(v.dump());
    const std::string label = v["variant"];
    if (v["status"] == "pruned") continue;
    CHECK(v.value("device", -1) == 0);
    if (label.rfind("faulty FAULT=1", 0) == 0 || label.rfind("faulty FAULT=2", 0) == 0) {
      CHECK(v["status"] == "faulted");
      CHECK(v["why"].get<std::string>().rfind("CUDA_ERROR_", 0) == 0);
      ++faulted;
    } else {
      CHECK(v["status"] == "ok");
      ++ok;
    }
  }
  CHECK(faulted == 4);
  CHECK(ok == 2 * 3 * 4 + 2);  // onepass: BLOCKS_PER_SM over its metadata values; faulty FAULT=0
  REQUIRE(j.contains("best"));
  CHECK(j["best"]["variant"].get<std::string>().rfind("onepass", 0) == 0);
  // The winner went to the database, under this GPU's model.
  std::ifstream db(dir.path() / "db.json");
  CHECK(nlohmann::json::parse(db)["entries"].size() == 1);
}

TEST_CASE("gpuk run --devices all: one row per GPU, each verified") {
  const test::TempDir dir;
  const fs::path config = dir.write("run.yaml", run_config(0));
  const Cli r = gpuk_cli("run --devices all " + config.string(), 60);
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("configs") == std::string::npos);  // the config given, not a shipped one
  CHECK(r.output.find("run.yaml on ") != std::string::npos);
  CHECK(r.output.find(" GPU") != std::string::npos);
  CHECK(r.output.find("PASS") != std::string::npos);
}
