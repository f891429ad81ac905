#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>

#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "helpers.hpp"

namespace {

using Result = gpuk::test::CommandResult;

Result gpuk_cli(const std::string& args) { return gpuk::test::run_command(std::string(GPUK_EXE) + " " + args); }

bool has_gpu() { return gpuk::device_count() > 0; }

}  // namespace

TEST_CASE("gpuk --help names the commands, and each command has its own --help") {
  const Result help = gpuk_cli("--help");
  CHECK(help.status == 0);
  for (const char* command : {"run", "list", "check"}) CHECK(help.output.find(command) != std::string::npos);
  const Result run_help = gpuk_cli("run --help");
  CHECK(run_help.status == 0);
  CHECK(run_help.output.find("--json") != std::string::npos);
  CHECK(gpuk_cli("check --help").output.find("--arch") != std::string::npos);
}

TEST_CASE("gpuk list shows the reduce family, its kernel files and their parameters") {
  const Result list = gpuk_cli("list");
  CHECK(list.status == 0);
  CHECK(list.output.find("reduce") != std::string::npos);
  CHECK(list.output.find("libgpuk_family_reduce.so") != std::string::npos);
  CHECK(list.output.find("onepass") != std::string::npos);
  CHECK(list.output.find("param BLOCK") != std::string::npos);
  CHECK(list.output.find("Problems") == std::string::npos);
  // An option with no default (reduce's segments, channels) says so, not "(default )".
  CHECK(list.output.find("(default )") == std::string::npos);
  CHECK(list.output.find("option      segments (none unless given)") != std::string::npos);
  // A family whose operations are declared (kernel) says so, not an empty line.
  CHECK(list.output.find("operations  \n") == std::string::npos);
  CHECK(list.output.find("operations  declared by each kernel file") != std::string::npos);
}

TEST_CASE("gpuk list picks up a kernel directory given on the command line") {
  const gpuk::test::TempDir dir;
  std::string source = "/* gpuk\nfamily: reduce\noperations: [max]\nsummary: my drop-in\n"
                       "launch:\n  - {entry: mine, grid: 1, block: 32}\n*/\n"
                       "template <class R> __global__ void mine(const typename R::T* in, long long n,"
                       " typename R::Acc* out, typename R::Acc* p, unsigned* c) {}\n";
  dir.write("mine.cu", source);
  const Result list = gpuk_cli("--kernels " + dir.path().string() + " list");
  CHECK(list.output.find("my drop-in") != std::string::npos);
}

TEST_CASE("gpuk refuses a kernel directory everyone can write, unless --allow-unsafe-dirs") {
  const gpuk::test::ScopedEnv strict("GPUK_ALLOW_UNSAFE_DIRS", nullptr);
  const gpuk::test::TempDir dir;
  dir.write("open/mine.cu", "/* gpuk\nfamily: reduce\noperations: [max]\nsummary: my drop-in\n"
                            "launch:\n  - {entry: mine, grid: 1, block: 32}\n*/\n"
                            "template <class R> __global__ void mine() {}\n");
  std::filesystem::permissions(dir.path() / "open", std::filesystem::perms::all);
  const Result refused = gpuk_cli("--kernels " + (dir.path() / "open").string() + " list");
  CHECK(refused.status == 2);
  CHECK(refused.output.find("refusing the kernel directory " + (dir.path() / "open").string()) != std::string::npos);
  CHECK(refused.output.find("is world-writable (mode 0777)") != std::string::npos);
  const Result allowed = gpuk_cli("--allow-unsafe-dirs --kernels " + (dir.path() / "open").string() + " list");
  CHECK(allowed.status == 0);
  CHECK(allowed.output.find("my drop-in") != std::string::npos);
  CHECK(allowed.output.find("warning: using the kernel directory") != std::string::npos);
}

TEST_CASE("gpuk check compiles a kernel file for a given architecture without a GPU") {
  const Result r = gpuk_cli("--no-cache check --arch sm_90 " + (gpuk::test::kernels_dir() / "reduce/single_thread.cu").string());
  CHECK(r.status == 0);
  CHECK(r.output.find("ok    ") != std::string::npos);
  CHECK(r.output.find("for sm_90") != std::string::npos);
}

TEST_CASE("gpuk check reports a kernel file that does not compile, with file:line:column") {
  const gpuk::test::TempDir dir;
  const auto path = dir.write("bad.cu",
                              "/* gpuk\nfamily: reduce\noperations: [max]\nlaunch:\n  - {entry: bad, grid: 1, block: 32}\n*/\n"
                              "#include \"gpuk/reduce.cuh\"\ntemplate <class R> __global__ void bad(const typename R::T* in) {\n"
                              "  undefined_name = 1;\n}\n");
  const Result r = gpuk_cli("--no-cache check --arch sm_90 " + path.string());
  CHECK(r.status == 1);
  CHECK(r.output.find(path.string() + ":9:3: error") != std::string::npos);
  CHECK(r.output.find("  undefined_name = 1;") != std::string::npos);
}

TEST_CASE("gpuk run reports a bad config with its line and column, and exits 2") {
  const gpuk::test::TempDir dir;
  const auto path = dir.write("c.yaml", "family: reduce\noperation: argmax\nsize: 100\nrepeat: 5\n");
  const Result r = gpuk_cli("run " + path.string());
  CHECK(r.status == 2);
  CHECK(r.output.find(path.string() + ":4:1: unknown key 'repeat' in the config (did you mean 'repeats'?)") !=
        std::string::npos);
}

TEST_CASE("the library API and gpuk run refuse the same mistakes with the same words") {
  const gpuk::Engine engine;
  struct Mistake {
    gpuk::OperationSpec spec;
    std::string config;  // the same mistake in a config
  };
  const auto spec = [](const char* family, const char* operation, gpuk::DType dtype, std::uint64_t n,
                       std::optional<std::string> kernel = std::nullopt) {
    gpuk::OperationSpec s;
    s.family = family;
    s.operation = operation;
    s.dtype = dtype;
    s.n = n;
    s.kernel = std::move(kernel);
    return s;
  };
  const Mistake mistakes[] = {
      {spec("reduce", "sum", gpuk::DType::float32, 0), "family: reduce\noperation: sum\nsize: 0\n"},
      {spec("search", "find", gpuk::DType::uint64, 100), "family: search\noperation: find\ndtype: uint64\nsize: 100\n"},
      {spec("reduce", "argmax", gpuk::DType::float32, 100, "onepas"),
       "family: reduce\noperation: argmax\nkernel: onepas\nsize: 100\n"},
      {spec("reduce", "argmx", gpuk::DType::float32, 100), "family: reduce\noperation: argmx\nsize: 100\n"},
      {spec("reduc", "argmax", gpuk::DType::float32, 100), "family: reduc\noperation: argmax\nsize: 100\n"},
  };
  const gpuk::test::TempDir dir;
  for (const Mistake& m : mistakes) {
    CAPTURE(m.config);
    std::string api;
    try {
      (void)engine.prepare(m.spec);
    } catch (const gpuk::ConfigError& e) {
      api = e.what();
    }
    REQUIRE_FALSE(api.empty());  // refused before the GPU, with or without one
    const Result cli = gpuk_cli("run " + dir.write("c.yaml", m.config).string());
    CAPTURE(cli.output);
    CHECK(cli.status == 2);
    CHECK(cli.output.find(": " + api + "\n") != std::string::npos);  // after the config's file:line:column
  }
}

TEST_CASE("without a GPU, gpuk run fails with one clear sentence") {
  if (has_gpu()) {
    MESSAGE("this machine has a GPU: the no-GPU message cannot be checked here");
    return;
  }
  const Result r = gpuk_cli("run " + (gpuk::test::source_dir() / "configs/argmax.yaml").string());
  CHECK(r.status == 5);  // no GPU: its own status (README.md, Exit status), which tools/setup.sh reads
  CHECK(r.output.find("needs an NVIDIA GPU") != std::string::npos);
  CHECK(r.output.find("error while loading shared libraries") == std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}

TEST_CASE("gpuk tune --help shows its options, and gpuk --help lists tune") {
  CHECK(gpuk_cli("--help").output.find("tune") != std::string::npos);
  const Result r = gpuk_cli("tune --help");
  CHECK(r.status == 0);
  for (const char* option : {"--json", "--csv", "--strategy", "--budget", "--seconds", "--seed", "--export"})
    CHECK(r.output.find(option) != std::string::npos);
}

TEST_CASE("gpuk tune reports a bad tune config with its line and column, and exits 2") {
  const gpuk::test::TempDir dir;
  const auto path = dir.write("t.yaml", "family: reduce\noperation: argmax\nsize: 100\nkernels: [onepass]\n"
                                        "params:\n  BLOCK: [128]\n  UNROL: [1, 2]\n");
  const Result r = gpuk_cli("tune " + path.string());
  CHECK(r.status == 2);
  CHECK(r.output.find(path.string() + ":7:3: no kernel being tuned has a parameter 'UNROL' (did you mean 'UNROLL'?)") !=
        std::string::npos);
}

TEST_CASE("without a GPU, gpuk tune fails with one clear sentence") {
  if (has_gpu()) {
    MESSAGE("this machine has a GPU: the no-GPU message cannot be checked here");
    return;
  }
  const Result r = gpuk_cli("tune " + (gpuk::test::source_dir() / "configs/tune_argmax.yaml").string());
  CHECK(r.status == 5);
  CHECK(r.output.find("needs an NVIDIA GPU") != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}

TEST_CASE("--devices: without a GPU one clear sentence, for run and tune; a bad list is a usage error") {
  if (!has_gpu()) {
    for (const std::string cmd : {"run --devices all configs/argmax.yaml", "tune --devices 0,1 configs/tune_argmax.yaml"}) {
      CAPTURE(cmd);
      const Result r = gpuk_cli(cmd.substr(0, cmd.rfind(' ') + 1) +
                                (gpuk::test::source_dir() / cmd.substr(cmd.rfind(' ') + 1)).string());
      CHECK(r.status == 5);
      CHECK(r.output.find("needs an NVIDIA GPU") != std::string::npos);
      CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    }
  }
  // A list that is no list is said before any GPU is asked, with or without one.
  for (const std::string cmd : {"run", "tune"}) {
    for (const std::string list : {"x", "0,,1", "-1"}) {
      CAPTURE(cmd);
      CAPTURE(list);
      const Result r = gpuk_cli(cmd + " --devices " + list + " " +
                                (gpuk::test::source_dir() / (cmd == "run" ? "configs/argmax.yaml" : "configs/tune_argmax.yaml")).string());
      CHECK(r.status == 2);
      CHECK(r.output.find("--devices takes 'all' or GPU ordinals separated by commas (0,1), not '" + list + "'") !=
            std::string::npos);
    }
  }
  const Result both = gpuk_cli("tune --devices all --device 1 " +
                               (gpuk::test::source_dir() / "configs/tune_argmax.yaml").string());
  CHECK(both.status != 0);
  CHECK(both.output.find("--device excludes --devices") != std::string::npos);
}

TEST_CASE("gpuk tune --export writes the tuning database; run --tuning needs a config that names no kernel") {
  const gpuk::test::TempDir dir;
  const auto db = dir.write("db.json",
                            "{\"format\": \"gpuk-tuning-db\", \"version\": 1, \"entries\": [{\"gpu\": \"G\", \"arch\": "
                            "\"sm_90\", \"family\": \"reduce\", \"operation\": \"max\", \"options\": \"abs=false\", "
                            "\"dtype\": \"float32\", \"size_bucket\": 20, \"kernel\": \"onepass\", \"params\": "
                            "{\"BLOCK\": 512}}]}\n");
  const auto out = dir.path() / "export.json";
  const Result r = gpuk_cli("--tuning-db " + db.string() + " tune --export " + out.string());
  CHECK(r.status == 0);
  CHECK(r.output.find("exported 1 of 1 entry") != std::string::npos);
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"kernel\": \"onepass\"") != std::string::npos);
  CHECK(text.find("\"size_bucket\": 20") != std::string::npos);

  const Result none = gpuk_cli("tune");
  CHECK(none.status == 2);
  CHECK(none.output.find("needs a CONFIG") != std::string::npos);

  const auto config = dir.write("c.yaml", "family: reduce\noperation: max\nkernel: onepass\nsize: 100\n");
  const Result tuning = gpuk_cli("run --tuning " + db.string() + " " + config.string());
  CHECK(tuning.status == 2);
  CHECK(tuning.output.find("--tuning FILE replaces the tuning database that chooses the variant of a config naming "
                           "none; this config names its variant") != std::string::npos);
}
