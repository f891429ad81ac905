// What a user meets at the command line: exit statuses (README.md, "Exit status"), suggestions,
// `check` catching what a launch would, `compare`, and the shell completions.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "data/data.hpp"
#include "helpers.hpp"

namespace {

using Result = gpuk::test::CommandResult;

Result shell(const std::string& command) { return gpuk::test::run_command(command); }

Result cli(const std::string& args) { return shell(std::string(GPUK_EXE) + " " + args); }

using gpuk::test::contains;

// A run report with only what compare reads; the kernel's median and a +-1% interquartile range.
std::string report(double median) {
  return "{\"family\": \"reduce\", \"kernel\": {\"median_ms\": " + std::to_string(median) +
         ", \"q1_ms\": " + std::to_string(median * 0.99) + ", \"q3_ms\": " + std::to_string(median * 1.01) +
         ", \"runs\": 100}}\n";
}

}  // namespace

TEST_CASE("a bad command line is exit status 2 everywhere, never CLI11's own codes") {
  const Result missing = cli("run nonexist.yaml");
  CHECK(missing.status == 2);
  CHECK(contains(missing.output, "nonexist.yaml"));
  CHECK(cli("run --no-such-option x.yaml").status == 2);
  CHECK(cli("run").status == 2);
  CHECK(cli("").status == 2);
  CHECK(cli("compare only_one.json").status == 2);
  CHECK(cli("--help").status == 0);
  CHECK(cli("--version").status == 0);
}

TEST_CASE("an unknown command suggests the nearest one") {
  const Result r = cli("chek");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "gpuk: unknown command 'chek' (did you mean 'check'?)"));
  CHECK(contains(cli("--no-cache comapre a b").output, "(did you mean 'compare'?)"));
}

TEST_CASE("gpuk --help shows an example of every command and the exit statuses") {
  const Result r = cli("--help");
  for (const char* example : {"gpuk run ", "gpuk tune ", "gpuk list", "gpuk check ", "gpuk compare "})
    CHECK(contains(r.output, example));
  CHECK(contains(r.output, "Exit status"));
}

TEST_CASE("check exits 2 on a bad config, as run does, and 1 on a kernel that does not compile") {
  const gpuk::test::TempDir dir;
  const auto config = dir.write("c.yaml", "family: reduce\noperation: argmax\nsize: 100\nrepeat: 5\n");
  CHECK(cli("--no-cache check " + config.string()).status == 2);
  CHECK(cli("run " + config.string()).status == 2);
}

TEST_CASE("check fails on a config whose data file does not exist, at the file's line") {
  const gpuk::test::TempDir dir;
  const auto config = dir.write("c.yaml", "family: reduce\noperation: max\ndata: {file: gone.npy}\n");
  const Result r = cli("--no-cache check --arch sm_90 " + config.string());
  CHECK(r.status == 2);
  CHECK(contains(r.output, config.string() + ":3:14: "));
  CHECK(contains(r.output, "gone.npy: no such file"));
}

TEST_CASE("check catches an unknown name in a grid expression and an operation the family lacks") {
  const gpuk::test::TempDir dir;
  const std::string body = "*/\ntemplate <class R, int BLOCK> __global__ void k() {}\n";
  const auto typo = dir.write("reduce/typo.cu",
                              "/* gpuk\nfamily: reduce\noperations: [max]\nparams:\n  BLOCK: {default: 256}\n"
                              "launch:\n  - {entry: k, grid: \"ceil_div(n, BLOK)\", block: BLOCK}\n" + body);
  const Result r = cli("--no-cache check --arch sm_90 " + typo.string());
  CHECK(r.status == 2);
  CHECK(contains(r.output, typo.string() + ":7:"));
  CHECK(contains(r.output, "names 'BLOK', which is not a parameter (did you mean 'BLOCK'?)"));

  const auto ops = dir.write("reduce/ops.cu",
                             "/* gpuk\nfamily: reduce\noperations: [max, argmaxx]\nparams:\n  BLOCK: {default: 256}\n"
                             "launch:\n  - {entry: k, grid: 1, block: BLOCK}\n" + body);
  const Result o = cli("--no-cache check --arch sm_90 " + ops.string());
  CHECK(o.status == 2);
  CHECK(contains(o.output, ops.string() + ":3:19: the reduce family has no operation 'argmaxx' (did you mean 'argmax'?)"));
}

TEST_CASE("an unknown kernel name in a config hints at --kernels") {
  const gpuk::test::TempDir dir;
  const auto config = dir.write("c.yaml", "family: reduce\noperation: max\nkernel: onepas\nsize: 100\n");
  const Result r = cli("run " + config.string());
  CHECK(r.status == 2);
  CHECK(contains(r.output, "(did you mean 'onepass'?)"));
  CHECK(contains(r.output, "--kernels DIR"));
}

TEST_CASE("gpuk list shows each kernel file's dtypes") {
  const Result r = cli("list");
  CHECK(r.status == 0);
  CHECK(contains(r.output, "      dtypes: "));
}

TEST_CASE("gpuk list exits non-zero when no family plugin loads") {
  // gpuk and its library copied without the plugins: gpuk finds its files next to the library.
  const gpuk::test::TempDir dir;
  const auto lib = std::filesystem::path(GPUK_EXE).parent_path() / "lib" / "libgpuk_core.so";
  std::filesystem::create_directories(dir.path() / "lib");
  std::filesystem::copy_file(GPUK_EXE, dir.path() / "gpuk");
  std::filesystem::copy_file(std::filesystem::canonical(lib), dir.path() / "lib" / "libgpuk_core.so");
  const Result r = shell((dir.path() / "gpuk").string() + " list");
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(contains(r.output, "no family plugin loaded"));
}

TEST_CASE("messages never say gpuk twice, nor '1 kernels'") {
  const Result tune = cli("tune");
  CHECK(tune.status == 2);
  CHECK_FALSE(contains(tune.output, "gpuk: gpuk"));
  const Result check = cli("--no-cache check --arch sm_90 " +
                            (gpuk::test::kernels_dir() / "reduce/single_thread.cu").string());
  CHECK_FALSE(contains(check.output, " 1 kernels "));
}

TEST_CASE("gpuk compare exits 6 on a known slowdown, 0 on two reports within the noise, 2 on a bad report") {
  const gpuk::test::TempDir dir;
  const auto a = dir.write("a.json", report(1.0));
  const auto slow = dir.write("slow.json", report(1.3));
  const auto same = dir.write("same.json", report(1.005));
  const Result r = cli("compare " + a.string() + " " + slow.string());
  CHECK(r.status == 6);
  CHECK(contains(r.output, "slower (past 5%)"));
  const Result s = cli("compare " + a.string() + " " + same.string());
  CHECK(s.status == 0);
  CHECK(contains(s.output, "same"));
  CHECK(cli("compare --threshold 50 " + a.string() + " " + slow.string()).status == 0);
  const Result md = cli("compare --markdown " + a.string() + " " + slow.string());
  CHECK(contains(md.output, "| kernel | 1.000 | 1.300 | 1.300x |"));
  CHECK(cli("compare " + a.string() + " " + dir.write("bad.json", "{}").string()).status == 2);
}

TEST_CASE("run --input takes a .npy file only") {
  const gpuk::test::TempDir dir;
  const auto config = dir.write("c.yaml", "family: reduce\noperation: max\nsize: 100\n");
  const auto raw = dir.write("x.bin", "1234");
  const Result r = cli("run --input " + raw.string() + " " + config.string());
  CHECK(r.status == 2);
  CHECK(contains(r.output, "give a .npy file"));
}

TEST_CASE("the bash completion completes commands and knows every command") {
  const auto script = gpuk::test::source_dir() / "tools/cli/completions/gpuk.bash";
  const Result r = shell("bash -c 'source " + script.string() +
                         "; COMP_WORDS=(gpuk ch); COMP_CWORD=1; _gpuk; echo \"${COMPREPLY[@]}\"'");
  CHECK(r.output == "check\n");
  const Result run = shell("bash -c 'source " + script.string() +
                           "; COMP_WORDS=(gpuk run --mark); COMP_CWORD=2; _gpuk; echo \"${COMPREPLY[@]}\"'");
  CHECK(run.output == "--markdown\n");
  std::ifstream zsh(gpuk::test::source_dir() / "tools/cli/completions/_gpuk");
  const std::string z((std::istreambuf_iterator<char>(zsh)), std::istreambuf_iterator<char>());
  for (const char* command : {"run", "tune", "list", "check", "compare"}) {
    CHECK(contains(z, std::string("'") + command + ":"));
    CHECK(contains(shell("bash -c 'source " + script.string() +
                         "; COMP_WORDS=(gpuk \"\"); COMP_CWORD=1; _gpuk; echo \"${COMPREPLY[@]}\"'")
                       .output,
                   command));
  }
}

TEST_CASE("gpuk check reads tune configs and tuning matrices as gpuk tune does: every shipped one passes") {
  std::string targets;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(gpuk::test::source_dir() / "configs"))
    if (entry.path().filename().string().rfind("tune_", 0) == 0) targets += " " + entry.path().string(), ++count;
  REQUIRE(count >= 10);
  const auto r = gpuk::test::run_command(std::string(GPUK_EXE) + " check --arch sm_90" + targets);
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("tuning matrix of ") != std::string::npos);
  CHECK(r.output.find("tune config, ") != std::string::npos);
  CHECK(r.output.find("FAIL") == std::string::npos);
  // A tune config with a mistake fails with its line, as gpuk tune would.
  const gpuk::test::TempDir dir;
  const auto bad = dir.write("t.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 2^20\n"
                                       "kernels: [onepass]\nstrategy: fastest\n");
  const auto b = gpuk::test::run_command(std::string(GPUK_EXE) + " check " + bad.string());
  CHECK(b.status == 2);
  CHECK(b.output.find("t.yaml:") != std::string::npos);
}

TEST_CASE("check's failures go to stderr, its ok lines and summary to stdout") {
  const gpuk::test::TempDir dir;
  const auto bad = dir.write("bad.cu", "/* gpuk\nfamily: reduce\n*/\n");
  const auto r = gpuk::test::run_command("(" + std::string(GPUK_EXE) + " check " + bad.string() + " 2>/dev/null)");
  CHECK(r.status == 2);
  CHECK(r.output.find("FAIL") == std::string::npos);
  CHECK(r.output.find("1 failed") != std::string::npos);
}

TEST_CASE("the shell completions know every option of every command, as --help lists them") {
  const auto script = gpuk::test::source_dir() / "tools/cli/completions/gpuk.bash";
  std::ifstream zsh(gpuk::test::source_dir() / "tools/cli/completions/_gpuk");
  const std::string z((std::istreambuf_iterator<char>(zsh)), std::istreambuf_iterator<char>());
  for (const char* command : {"run", "tune", "check", "compare"}) {
    CAPTURE(std::string(command));
    const std::string help = gpuk::test::run_command(std::string(GPUK_EXE) + " " + command + " --help").output;
    const std::string offered =
        shell("bash -c 'source " + script.string() + "; COMP_WORDS=(gpuk " + command +
              " --); COMP_CWORD=2; _gpuk; echo \"${COMPREPLY[@]}\"'")
            .output;
    std::istringstream lines(help);
    int options = 0;
    for (std::string line; std::getline(lines, line);) {
      const auto at = line.find("--");
      if (at == std::string::npos || line.find_first_not_of(' ') != at) continue;
      const std::string option = line.substr(at, line.find_first_of(" ,", at) - at);
      if (option == "--help") continue;
      CAPTURE(option);
      ++options;
      CHECK(contains(" " + offered + " ", " " + option + " "));
      CHECK((contains(z, "'" + option + "[") || contains(z, "'*" + option + "[")));
    }
    CHECK(options >= 1);
  }
}
