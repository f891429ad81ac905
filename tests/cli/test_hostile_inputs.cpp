// What a careless or hostile user may hand each command, table-driven: every input ends with a
// clear exit status (never a signal, never a hang: each runs under `timeout`), at most a few KB
// of output, and no raw control byte echoed to the terminal. docs/reliability.md, "Hostile
// inputs", lists what each gets.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace fs = std::filesystem;

namespace {

struct Case {
  std::string what;
  std::string args;          // after `gpuk`
  std::vector<int> statuses;  // any of these
  std::string says;           // in the output ("" : anything)
  bool bounded = true;        // at most 8 KB of output (list's listing is longer by itself)
};

std::string big(std::size_t bytes, char c) { return std::string(bytes, c); }

}  // namespace

TEST_CASE("hostile inputs to every command: a clear status, a bounded message, no control bytes") {
  const gpuk::test::TempDir dir;
  const std::string d = dir.path().string();
  const std::string ok_config = "family: reduce\noperation: argmax\ndtype: float32\nsize: 1000\n";
  dir.write("empty.yaml", "");
  dir.write("binary.yaml", std::string("\x7f" "ELF\x02\x01\x01\0\0\0\x1b[2J\xff\xfe", 16));
  dir.write("huge.yaml", ok_config + "# " + big(2 << 20, 'x') + "\n");
  dir.write("long_list.yaml", ok_config + "kernel: onepass\nparams: {BLOCK: [" + [] {
              std::string s;
              for (int i = 0; i < 100000; ++i) s += (i ? ", " : "") + std::to_string(i);
              return s;
            }() + "]}\n");
  dir.write("escape_key.yaml", ok_config + "\x1b]0;owned\x07" + big(20000, 'k') + ": 1\n");
  dir.write("escape_value.yaml", "family: \"\\e[2J" + big(20000, 'f') + "\"\noperation: argmax\n");
  dir.write("list.yaml", "- 1\n- 2\n");
  dir.write("scalar.yaml", "just text\n");
  dir.write("deep.yaml", big(10000, '[') + big(10000, ']') + "\n");
  dir.write("anchors.yaml", ok_config + "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n");
  dir.write("misspelled.yaml", "family: reduce\noperaton: argmax\ndtype: float32\nsize: 1000\n");
  dir.write("size_zero.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 0\n");
  dir.write("size_huge.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 99999999999999999999999\n");
  dir.write("deep.json", big(100000, '[') + big(100000, ']'));
  dir.write("empty.json", "");
  dir.write("not_report.json", "{\"kernel\": 5}");
  dir.write("report.json", "{\"family\": \"reduce\", \"operation\": \"argmax\", \"kernel\": {\"median_ms\": 1, \"runs\": 9}}");
  dir.write("kernel.cu", "/* gpuk\nfamily: reduce\n" + big(3000, '\x1b') + "\n*/\n");
  dir.write("plain.cu", "__global__ void k() {}\n");
  fs::create_directories(dir.path() / "subdir.yaml");

  const std::vector<Case> cases = {
      {"no command", "", {2}, "give a command"},
      {"an unknown command with control bytes", "\"$(printf '\\033[2Jrunn')\"", {2}, "unknown command"},
      {"an unknown command of 100 KB", big(100000, 'r'), {2}, "unknown command"},
      {"an unknown option", "run --frobnicate " + d + "/empty.yaml", {2}, ""},
      {"run: no such file", "run " + d + "/missing.yaml", {2}, ""},
      {"run: a directory", "run " + d + "/subdir.yaml", {2}, ""},
      {"run: an empty file", "run " + d + "/empty.yaml", {2}, "mapping"},
      {"run: binary bytes", "run " + d + "/binary.yaml", {2}, ""},
      {"run: 2 MiB of config", "run " + d + "/huge.yaml", {2}, "over the limit"},
      {"run: /dev/zero", "run /dev/zero", {2}, "not a regular file"},
      {"run: a list of 100000 parameter values", "run " + d + "/long_list.yaml", {2}, "BLOCK"},
      {"run: a key of escape bytes", "run " + d + "/escape_key.yaml", {2}, "escape_key.yaml:5:"},
      {"run: a value of escape bytes", "run " + d + "/escape_value.yaml", {2}, ""},
      {"run: a YAML list", "run " + d + "/list.yaml", {2}, "mapping"},
      {"run: a YAML scalar", "run " + d + "/scalar.yaml", {2}, "mapping"},
      {"run: 10000 nested lists", "run " + d + "/deep.yaml", {2}, ""},
      {"run: an alias bomb", "run " + d + "/anchors.yaml", {2}, "unknown key"},
      {"run: a misspelled required key", "run " + d + "/misspelled.yaml", {2}, "operaton"},
      {"run: size 0", "run " + d + "/size_zero.yaml", {2}, "size"},
      {"run: a size past 64 bits", "run " + d + "/size_huge.yaml", {2}, "out of range"},
      {"run: a kernel file as config", "run " + d + "/kernel.cu", {2}, ""},
      {"check: no such file", "check " + d + "/missing.cu", {2}, ""},
      {"check: a directory", "check " + d + "/subdir.yaml", {2}, ""},
      {"check: /dev/zero", "check /dev/zero", {2}, "takes configs (.yaml, .yml) and kernel files (.cu)"},
      {"check: a JSON report", "check " + d + "/report.json", {2}, "not a .json file"},
      {"check: a kernel file of escape bytes", "check " + d + "/kernel.cu", {2}, ""},
      {"check: a .cu without metadata (plain CUDA: a kernel config declares it)", "check " + d + "/plain.cu", {0},
       "a plain kernel file without a declaration"},
      {"check: an empty config", "check " + d + "/empty.yaml", {2}, ""},
      {"check: 2 MiB of config", "check " + d + "/huge.yaml", {2}, "over the limit"},
      {"check: a bad architecture", "check --arch sm_\\$\\(reboot\\) " + d + "/kernel.cu", {2}, ""},
      {"compare: no such file", "compare " + d + "/missing.json " + d + "/report.json", {2}, ""},
      {"compare: an empty file", "compare " + d + "/empty.json " + d + "/report.json", {2}, "JSON"},
      {"compare: 100000 nested arrays", "compare " + d + "/deep.json " + d + "/report.json", {2}, ""},
      {"compare: not a report", "compare " + d + "/not_report.json " + d + "/report.json", {2}, "not a gpuk"},
      {"compare: a YAML config", "compare " + d + "/misspelled.yaml " + d + "/report.json", {2}, "JSON"},
      {"compare: /dev/zero", "compare /dev/zero " + d + "/report.json", {2}, ""},
      {"compare: itself", "compare " + d + "/report.json " + d + "/report.json", {0}, "same"},
      {"list: a kernel directory that is a file", "--kernels " + d + "/plain.cu list", {0, 2}, "", false},
      {"list: a kernel directory that is missing", "--kernels " + d + "/nowhere list", {0, 2}, "does not exist", false},
      {"tune: no such file", "tune " + d + "/missing.yaml", {2}, ""},
      {"tune: 2 MiB of config", "tune " + d + "/huge.yaml", {2}, "over the limit"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const auto r = gpuk::test::run_command("timeout 60 " + std::string(GPUK_EXE) + " " + c.args);
    CAPTURE(r.output.substr(0, 2000));
    CHECK(r.status != 124);  // not a hang
    CHECK(r.status >= 0);    // not a signal
    CHECK(std::find(c.statuses.begin(), c.statuses.end(), r.status) != c.statuses.end());
    if (c.bounded) CHECK(r.output.size() < 8192);
    CHECK(r.output.find('\x1b') == std::string::npos);
    CHECK(r.output.find('\x07') == std::string::npos);
    if (!c.says.empty()) CHECK(r.output.find(c.says) != std::string::npos);
  }
}
