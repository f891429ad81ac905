// What every run would refuse, refused up front, by kind (docs/reliability.md's table): numbers
// that are not numbers (NaN, inf) for the options of seconds and percent, an empty --shard (an
// unset variable in a job script), and configs that `gpuk check` once passed although every
// run refuses them, and messages (file:line:column, contradictions, bounded memory). Each case
// names what it stands for; each ends with exit 2 and the reason.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace {

struct Refusal {
  std::string what, args;
  int status;
  std::string says;
};

void check_cases(const std::vector<Refusal>& cases) {
  for (const Refusal& c : cases) {
    CAPTURE(c.what);
    const auto r = gpuk::test::run_command("timeout -s KILL 60 " + std::string(GPUK_EXE) + " " + c.args);
    CAPTURE(r.output);
    CHECK(r.status == c.status);
    CHECK(r.output.find(c.says) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("numbers that are not finite, and an empty --shard, are refused before anything runs") {
  const gpuk::test::TempDir dir;
  const std::string run_config = dir.write("run.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 1000\n").string();
  const std::string tune_config = dir.write("tune.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 1000\n"
                                                         "kernels: [onepass]\n").string();
  const std::string matrix = dir.write("matrix.yaml", "family: reduce\nsizes: [1000]\nkernels: [onepass]\n"
                                                      "operations:\n  - operation: argmax\n    dtypes: [float32]\n").string();
  const std::string a = dir.write("a.json", "{}").string();
  std::vector<Refusal> cases;
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e999", "0", "-1", "", "5s"}) {
    const std::string v = std::string("'") + bad + "'";
    cases.push_back({"run --time-limit " + v, "run " + run_config + " --time-limit " + v, 2, "--time-limit"});
    cases.push_back({"tune --time-limit " + v, "tune " + tune_config + " --time-limit " + v, 2, "--time-limit"});
    cases.push_back({"tune --seconds " + v, "tune " + tune_config + " --seconds " + v, 2, "--seconds"});
    cases.push_back({"tune --stop-after " + v, "tune " + matrix + " --stop-after " + v, 2, "--stop-after"});
  }
  for (const char* bad : {"nan", "inf", "-1", "", "x"})
    cases.push_back({std::string("compare --threshold '") + bad + "'",
                     "compare " + a + " " + a + " --threshold '" + bad + "'", 2, "--threshold"});
  cases.push_back({"tune --shard ''", "tune " + matrix + " --shard ''", 2, "--shard: is empty"});
  cases.push_back({"tune --shard= (an unset variable)", "tune " + matrix + " --shard=", 2, "--shard"});
  check_cases(cases);
}

TEST_CASE("gpuk check refuses, as every run does, a layout its kernel cannot serve and a launch that can never run") {
  const gpuk::test::TempDir dir;
  const auto config = [&](const std::string& name, const std::string& text) {
    return "--no-cache check --arch sm_90 " + dir.write(name, "family: reduce\noperation: argmax\ndtype: float32\n" + text).string();
  };
  check_cases({
      {"segments, and a kernel without segments", config("segments.yaml", "size: 100000\nsegments: 10\nkernel: onepass\n"),
       2, "kernel entry reduce_onepass reduces one contiguous array"},
      {"channels, and a kernel of one contiguous array",
       config("channels_onepass.yaml", "size: 17000\nchannels: 17\nkernel: onepass\n"), 2, "reduces one contiguous array"},
      {"channels above the block size",
       config("channels.yaml", "size: 512000\nchannels: 512\nkernel: per_channel\nparams: {BLOCK: 256}\n"), 2,
       "channels: 512 needs BLOCK >= 512"},
      {"a named variant breaking its kernel's constraint",
       config("constraint.yaml", "size: 17000\nchannels: 17\nkernel: per_channel\nparams: {BLOCK: 1024, BLOCKS_PER_SM: 4}\n"),
       2, "breaks the constraint"},
  });
}

namespace {

// A float32 .npy of `count` elements (version 1.0 header, padded to 64 bytes).
std::string npy_float32(std::size_t count) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(count * 4, '\0');
}

// The largest resident memory of `gpuk ARGS` (fork, exec, wait4), in MiB, and its status.
std::pair<long, int> peak_mib(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv;
    const std::string exe = GPUK_EXE;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  return {usage.ru_maxrss / 1024, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

}  // namespace

TEST_CASE("messages, by kind: where the mistake is (file:line:column), and contradictions refused") {
  const gpuk::test::TempDir dir;
  const auto check = [&](const std::string& name, const std::string& text) {
    return "check --arch sm_90 " + dir.write(name, text).string();
  };
  dir.write("data.npy", npy_float32(1000));
  std::filesystem::create_directories(dir.path() / "kernels.d");
  check_cases({
      {"a directory given to check (once: 'not a file without an extension')",
       "check " + (dir.path() / "kernels.d").string(), 2, "kernels.d: a directory; gpuk check takes configs"},
      {"an unterminated double quote (once: a missing key)",
       check("quote.yaml", "family: \"reduce\noperation: argmax\ndtype: float32\nsize: 1000\n"), 2,
       "quote.yaml:1:9: the string opened here with \" is never closed"},
      {"an unterminated single quote", check("quote1.yaml", "family: reduce\noperation: 'argmax\ndtype: float32\n"),
       2, "quote1.yaml:2:12: the string opened here with ' is never closed"},
      {"a sort option out of range, at its line", check("bits.yaml", "family: sort\noperation: sort\ndtype: int32\n"
                                                                      "size: 1000\nbegin_bit: 40\n"),
       2, "bits.yaml:5:12: begin_bit must be"},
      {"a layout option, at its line", check("channels.yaml", "family: reduce\noperation: argmax\ndtype: float32\n"
                                                               "size: 1000\nchannels: 7\n"),
       2, "channels.yaml:5:11: size 1000 is not a multiple of channels"},
      {"data.dtype against the .npy's own",
       check("npy.yaml", "family: reduce\noperation: argmax\ndata: {file: data.npy, dtype: float64}\n"), 2,
       "data.dtype says float64, but the .npy file holds float32"},
  });
}

// The peak a gpuk list may reach below: the bound is for the blow-up (22 GB before), not for
// AddressSanitizer, whose redzones, quarantine and shadow memory about double a process (the
// sanitizer stage of tools/test.sh: 40,000 parameters peaked at 302 MiB there).
#if defined(__SANITIZE_ADDRESS__)
constexpr int kListPeakMib = 400;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kListPeakMib = 400;
#else
constexpr int kListPeakMib = 200;
#endif
#else
constexpr int kListPeakMib = 200;
#endif

TEST_CASE("a kernel file of a few MB costs a few MB: its YAML values are counted before they are built") {
  // 3.8 MB of one-digit parameter values once took 650-950 MB; 100,000 parameters 22 GB and
  // two minutes (the values are counted first; past that, parameters, constraints and launches).
  const gpuk::test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "k" / "reduce");
  std::filesystem::permissions(dir.path() / "k", std::filesystem::perms(0755));
  std::filesystem::permissions(dir.path() / "k" / "reduce", std::filesystem::perms(0755));
  std::string values;
  for (int i = 0; i < 1250000; ++i) values += i ? ", 1" : "1";
  std::string params;
  for (int i = 0; i < 40000; ++i) params += "  P" + std::to_string(i) + ": {default: 1}\n";
  const std::string tail = "launch:\n  - {entry: k, grid: 1, block: 32}\n*/\ntemplate <class T> __global__ void k() {}\n";
  struct Refusal {
    std::string what, text, says;
  };
  for (const Refusal& c : {Refusal{"1.25 million one-digit values", "/* gpuk\nfamily: reduce\noperations: [max]\nparams:\n  A: {default: 1, values: [" + values + "]}\n" + tail, "more than 200000 YAML values"},
                        Refusal{"40,000 parameters", "/* gpuk\nfamily: reduce\noperations: [max]\nparams:\n" + params + tail, "params: 40000 of them"}}) {
    CAPTURE(c.what);
    dir.write("k/reduce/big.cu", c.text);
    const auto r = gpuk::test::run_command(std::string(GPUK_EXE) + " --kernels " + (dir.path() / "k").string() + " list");
    CHECK(r.output.find(c.says) != std::string::npos);
    const auto [mib, status] = peak_mib({"--kernels", (dir.path() / "k").string(), "list"});
    MESSAGE(c.what << ": gpuk list peaked at " << mib << " MiB");
    CHECK(status == 0);
    CHECK(mib < kListPeakMib);
  }
}

TEST_CASE("gpuk list prints a kernel file's own words escaped: its summary's terminal escapes never reach the terminal") {
  const gpuk::test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "k" / "reduce");
  std::filesystem::permissions(dir.path() / "k", std::filesystem::perms(0755));
  std::filesystem::permissions(dir.path() / "k" / "reduce", std::filesystem::perms(0755));
  dir.write("k/reduce/loud.cu", "/* gpuk\nfamily: reduce\noperations: [max]\nsummary: \"\\e]0;owned\\a\\e[2J cleared\"\n"
                                "launch:\n  - {entry: k, grid: 1, block: 32}\n*/\ntemplate <class T> __global__ void k() {}\n");
  const auto r = gpuk::test::run_command(std::string(GPUK_EXE) + " --kernels " + (dir.path() / "k").string() + " list");
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("cleared") != std::string::npos);  // the file loaded and its summary was printed
  CHECK(r.output.find('\x1b') == std::string::npos);
  CHECK(r.output.find('\x07') == std::string::npos);
}
