// Which variant runs when a config names no kernel: the user's tuning database, then the file
// shipped for the GPU's architecture, then the family's own choice, then the metadata's defaults;
// a stale pick is passed over with a warning (no GPU: the device is described by hand, with an
// architecture no real shipped file covers).
#include <doctest/doctest.h>

#include "builtins.hpp"
#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "run/choose.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "tune/sweep/sweep.hpp"

#include <set>
#include <sstream>
#include <tuple>

using namespace gpuk;

namespace {

using test::plugins;
using test::test_gpu;

std::string entry_json(const std::string& gpu, const std::string& family, const std::string& operation,
                       const std::string& options, const std::string& dtype, int bucket, const std::string& kernel,
                       const std::string& params) {
  return "{\"gpu\": \"" + gpu + "\", \"arch\": \"sm_99\", \"family\": \"" + family + "\", \"operation\": \"" +
         operation + "\", \"options\": \"" + options + "\", \"dtype\": \"" + dtype + "\", \"size_bucket\": " +
         std::to_string(bucket) + ", \"kernel\": \"" + kernel + "\", \"params\": " + params +
         ", \"evaluated\": 12, \"median_ms\": 0.01, \"size\": " + std::to_string(std::uint64_t{1} << bucket) + "}";
}

std::string db_json(const std::vector<std::string>& entries) {
  std::string out = "{\"format\": \"gpuk-tuning-db\", \"version\": 1, \"entries\": [";
  for (std::size_t i = 0; i < entries.size(); ++i) out += (i ? ", " : "") + entries[i];
  return out + "]}\n";
}

const std::string kSortKeys = "order=ascending values=uint32";

// A kernel library of the built-in kernels plus a directory that may hold tuned/sm_99.json.
struct Setup {
  test::TempDir dir;
  std::unique_ptr<KernelLibrary> kernels;
  TuningSources tuning;

  void shipped(const std::vector<std::string>& entries) { dir.write("extra/tuned/sm_99.json", db_json(entries)); }
  void user(const std::vector<std::string>& entries) { dir.write("user.json", db_json(entries)); }
  void load() {
    std::filesystem::create_directories(dir.path() / "extra");
    kernels = std::make_unique<KernelLibrary>(std::vector<std::filesystem::path>{test::kernels_dir(), dir.path() / "extra"});
    tuning = {};
    add_user_tuning(tuning, dir.path() / "user.json", false);
    add_shipped_tuning(tuning, *kernels, "sm_99");
  }
  Choice choose(const std::string& yaml, const DeviceInfo& gpu = test_gpu()) const {
    const RunSpec spec = parse_run_spec(yaml, "c.yaml", plugins(), *kernels);
    return choose_variant(problem_of(spec), variant_request(spec), plugins().get(spec.family), *kernels, gpu, tuning);
  }
};

const std::string kSort4096 = "family: sort\noperation: sort\ndtype: uint32\nsize: 4096\n";

}  // namespace

TEST_CASE("the lookup order: user database, then shipped file, then the family's choice, then the defaults") {
  Setup s;
  s.user({entry_json("Test GPU", "sort", "sort", kSortKeys, "uint32", 12, "radix_block", "{\"BLOCK\": 256, \"ITEMS\": 16}")});
  s.shipped({entry_json("Another GPU of sm_99", "sort", "sort", kSortKeys, "uint32", 12, "rank_split", "{\"BLOCK\": 256}")});
  s.load();
  Choice c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::user_db);
  CHECK(c.file->name == "radix_block");
  CHECK(c.params.at("ITEMS") == 16);
  CHECK(c.why.rfind("user tuning database " + (s.dir.path() / "user.json").string() +
                        " (tuned at n = 2^12, n's size bucket): the fastest of 12 variants",
                    0) == 0);
  CHECK(c.warnings.empty());

  // Without a user entry for this GPU: the shipped file, matched by architecture.
  s.user({entry_json("Some other GPU", "sort", "sort", kSortKeys, "uint32", 12, "radix_block", "{}")});
  s.load();
  c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::shipped);
  CHECK(c.file->name == "rank_split");
  CHECK(c.why.find("shipped defaults for sm_99 (" + (s.dir.path() / "extra/tuned/sm_99.json").string()) == 0);

  // Without a shipped file: the sort family's own choice by size, which says why.
  std::filesystem::remove(s.dir.path() / "extra/tuned/sm_99.json");
  s.load();
  c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::family);
  CHECK(c.file->name == "rank_bucket");
  CHECK(c.params.at("ITEMS") == 4);
  CHECK(c.why.rfind("the sort family's choice for n <= 16384", 0) == 0);
  CHECK(c.why.find("no tuned entry for this GPU, no shipped defaults for sm_99") != std::string::npos);

  // A family without a choice (reduce): the default kernel's metadata defaults.
  c = s.choose("family: reduce\noperation: argmax\ndtype: float32\nsize: 2^20\n");
  CHECK(c.source == Choice::Source::defaults);
  CHECK(c.file->name == "onepass");
  CHECK(c.params.empty());
  CHECK(c.why == "kernel file defaults of onepass, the reduce family's default kernel: no tuned entry for this GPU, "
                 "no shipped defaults for sm_99");
}

TEST_CASE("sources a TuningPolicy leaves out are said to be left out, not to be missing") {
  Setup s;
  s.shipped({entry_json("Another GPU of sm_99", "sort", "sort", kSortKeys, "uint32", 12, "rank_split", "{\"BLOCK\": 256}")});
  s.load();
  // TuningPolicy::none(): neither the user's database nor the shipped file is read.
  s.tuning = {};
  s.tuning.user_off = s.tuning.shipped_off = true;
  const std::string reduce = "family: reduce\noperation: argmax\ndtype: float32\nsize: 2^20\n";
  Choice c = s.choose(reduce);
  CHECK(c.source == Choice::Source::defaults);
  CHECK(c.why == "kernel file defaults of onepass, the reduce family's default kernel: the TuningPolicy leaves the "
                 "user's tuning database out, the TuningPolicy leaves the tuning files shipped for sm_99 out");
  CHECK(c.why.find("shipped defaults") == std::string::npos);
  // TuningPolicy::shipped_only(): the shipped file answers; without an entry the sentence names the policy.
  s.tuning = {};
  s.tuning.user_off = true;
  add_shipped_tuning(s.tuning, *s.kernels, "sm_99");
  c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::shipped);
  c = s.choose(reduce);
  CHECK(c.why.find("the TuningPolicy leaves the user's tuning database out") != std::string::npos);
  CHECK(c.why.find("no tuned entry for this GPU") == std::string::npos);
}

TEST_CASE("the nearest size bucket within a factor 4, and the sort family's choice by size") {
  Setup s;
  s.user({entry_json("Test GPU", "sort", "sort", kSortKeys, "uint32", 10, "rank_split", "{\"BLOCK\": 128}")});
  s.load();
  // 4,096 is two buckets above the tuned 2^10: within 4x.
  Choice c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::user_db);
  CHECK(c.why.find("(n within 4x of the tuned 2^10)") != std::string::npos);
  // 2^13 is three buckets away: the entry is not used.
  c = s.choose("family: sort\noperation: sort\ndtype: uint32\nsize: 8192\n");
  CHECK(c.source == Choice::Source::family);
  CHECK(c.params.at("ITEMS") == 8);
  // rank_bucket holds at most 64 KiB of keys: 8-byte keys above 8,192 and any key above 16,384
  // go to the radix sort (uint32: the measured parameters; 64-bit keys: its defaults).
  c = s.choose("family: sort\noperation: sort\ndtype: uint32\nsize: 16384\n");
  CHECK(c.file->name == "rank_bucket");
  CHECK(c.params.at("ITEMS") == 16);
  c = s.choose("family: sort\noperation: sort\ndtype: uint32\nsize: 16385\n");
  CHECK(c.source == Choice::Source::family);
  CHECK(c.file->name == "radix");
  CHECK(c.params.at("LB32") == 1);
  c = s.choose("family: sort\noperation: sort\ndtype: float64\nsize: 16384\n");
  CHECK(c.source == Choice::Source::defaults);
  CHECK(c.file->name == "radix");
}

TEST_CASE("a shipped file holds entries per GPU model: this model's first, else any of the architecture") {
  Setup s;
  s.shipped({entry_json("Another GPU of sm_99", "sort", "sort", kSortKeys, "uint32", 12, "rank_split", "{\"BLOCK\": 256}"),
             entry_json("Test GPU", "sort", "sort", kSortKeys, "uint32", 14, "radix_block", "{\"ITEMS\": 16}")});
  s.load();
  // This model's entry, though another model's is in n's own bucket (this one is 2^14, within 4x).
  Choice c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::shipped);
  CHECK(c.file->name == "radix_block");
  CHECK(c.params.at("ITEMS") == 16);
  CHECK(c.why.find("; this GPU model's entry, n within 4x of the tuned 2^14") != std::string::npos);
  CHECK(c.why.find("on Test GPU") != std::string::npos);
  // A model the file does not name: the architecture's entry nearest n.
  DeviceInfo other = test_gpu();
  other.name = "A third GPU of sm_99";
  c = s.choose(kSort4096, other);
  CHECK(c.source == Choice::Source::shipped);
  CHECK(c.file->name == "rank_split");
  CHECK(c.why.find("this GPU model's entry") == std::string::npos);
  CHECK(c.why.find("on Another GPU of sm_99") != std::string::npos);
  // This model's entry too far from n (2^14 for n = 2^20): the architecture's, nearer, answers.
  s.shipped({entry_json("Test GPU", "sort", "sort", kSortKeys, "uint32", 14, "radix_block", "{\"ITEMS\": 16}"),
             entry_json("Another GPU of sm_99", "sort", "sort", kSortKeys, "uint32", 20, "rank_split", "{}")});
  s.load();
  c = s.choose("family: sort\noperation: sort\ndtype: uint32\nsize: 2^20\n");
  CHECK(c.file->name == "rank_split");
}

TEST_CASE("a shipped pick whose kernel or parameter value is gone: one warning, and the next source") {
  Setup s;
  s.shipped({entry_json("Another GPU of sm_99", "sort", "sort", kSortKeys, "uint32", 12, "radix_gone", "{}")});
  s.load();
  Choice c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::family);
  CHECK(c.file->name == "rank_bucket");
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("shipped defaults for sm_99") == 0);
  CHECK(c.warnings[0].find("names radix_gone for sort sort order=ascending values=uint32 uint32 n = 4096, which "
                           "cannot run here: no sort kernel named 'radix_gone'") != std::string::npos);
  CHECK(c.warnings[0].find("the next source is asked") != std::string::npos);
  CHECK(c.why.find("the shipped defaults for sm_99 (") == std::string::npos);

  // A value the metadata no longer allows.
  s.shipped({entry_json("Another GPU of sm_99", "sort", "sort", kSortKeys, "uint32", 12, "radix_block",
                        "{\"BLOCK\": 4096}")});
  s.load();
  c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::family);
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("BLOCK = 4096 is not allowed") != std::string::npos);

  // A user entry that does not serve this n (a constraint on n): the shipped one is asked next,
  // without a warning (the entry is not stale; it serves other sizes), and the choice says why.
  s.user({entry_json("Test GPU", "sort", "sort", kSortKeys, "uint32", 12, "radix_block",
                     "{\"BLOCK\": 256, \"ITEMS\": 1}")});
  s.shipped({entry_json("Another GPU of sm_99", "sort", "sort", kSortKeys, "uint32", 12, "rank_split", "{}")});
  s.load();
  c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::shipped);
  CHECK(c.warnings.empty());
}

TEST_CASE("an entry tuned at 2^12 whose constraints fail for the rest of its bucket is passed by without a warning") {
  // rank_bucket holds n <= BLOCK * ITEMS = 4,096: right for 2^12, not for 4,097..8,191 (issue 27).
  Setup s;
  s.shipped({entry_json("Another GPU of sm_99", "sort", "sort", kSortKeys, "uint32", 12, "rank_bucket",
                        "{\"BLOCK\": 512, \"ITEMS\": 8, \"BUCKET_BITS\": 12}")});
  s.load();
  Choice c = s.choose(kSort4096);
  CHECK(c.source == Choice::Source::shipped);
  CHECK(c.file->name == "rank_bucket");
  for (const int n : {4097, 6000, 8191}) {
    CAPTURE(n);
    c = s.choose("family: sort\noperation: sort\ndtype: uint32\nsize: " + std::to_string(n) + "\n");
    CHECK(c.warnings.empty());
    CHECK(c.source == Choice::Source::family);
    CHECK(c.why.find("the shipped entry nearest n does not serve n = " + std::to_string(n)) != std::string::npos);
  }
}

TEST_CASE("the shipped defaults for sm_90 warn for no size from 1 to 2^31 of any problem they hold") {
  const KernelLibrary kernels({test::kernels_dir()});
  TuningSources tuning;
  add_shipped_tuning(tuning, kernels, "sm_90");
  REQUIRE(tuning.shipped.size() == 1);
  REQUIRE(tuning.warnings.empty());
  DeviceInfo h100 = test_gpu();
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.cc_minor = 0;
  std::set<std::tuple<std::string, std::string, std::string, std::string>> problems;
  for (const auto& e : tuning.shipped.front().db->entries())
    problems.insert({e.key.family, e.key.operation, e.key.options, e.key.dtype});
  std::vector<std::uint64_t> sizes;
  for (int k = 0; k <= 31; ++k) {
    const std::uint64_t p = std::uint64_t{1} << k;
    for (const std::uint64_t n : {p - 1, p, p + 1, p + p / 2, 2 * p - 1})
      if (n >= 1 && n <= (std::uint64_t{1} << 31)) sizes.push_back(n);
  }
  int warned = 0;
  for (const auto& [family, operation, options, dtype] : problems) {
    Problem p;
    p.family = family;
    p.operation = operation;
    p.dtype = *parse_dtype(dtype);
    std::istringstream words(options);
    for (std::string word; words >> word;) p.options[word.substr(0, word.find('='))] = word.substr(word.find('=') + 1);
    for (const std::uint64_t n : sizes) {
      p.n = p.max_n = n;
      const Choice c = choose_variant(p, VariantRequest{}, plugins().get(family), kernels, h100, tuning);
      if (!c.warnings.empty() && warned++ < 5) CHECK_MESSAGE(false, c.warnings.front());
    }
  }
  CHECK(warned == 0);
}

TEST_CASE("a config that names its kernel runs exactly that; variant: default runs the metadata's defaults") {
  Setup s;
  s.user({entry_json("Test GPU", "sort", "sort", kSortKeys, "uint32", 12, "radix_block", "{}")});
  s.load();
  Choice c = s.choose(kSort4096 + "kernel: rank_split\nparams: {BLOCK: 128}\n");
  CHECK(c.source == Choice::Source::named);
  CHECK(c.file->name == "rank_split");
  CHECK(c.params == std::map<std::string, std::int64_t>{{"BLOCK", 128}});
  c = s.choose(kSort4096 + "variant: default\n");
  CHECK(c.source == Choice::Source::defaults);
  CHECK(c.file->name == "radix");
  CHECK(c.params.empty());
  CHECK(s.choose(kSort4096 + "variant: auto\n").source == Choice::Source::user_db);
}

TEST_CASE("tuning files that cannot be read: a damaged database is left out with a warning, a given one is an error") {
  Setup s;
  s.dir.write("user.json", "{ not json");
  s.dir.write("extra/tuned/sm_99.json", "{\"format\": \"something else\"}");
  s.load();
  REQUIRE(s.tuning.warnings.size() == 2);
  CHECK(s.tuning.warnings[0].find("the lookup goes on without it") != std::string::npos);
  CHECK(s.tuning.warnings[1].find("the shipped tuning file is left out") != std::string::npos);
  CHECK_FALSE(s.tuning.user.has_value());
  CHECK(s.tuning.shipped.empty());
  CHECK(s.choose(kSort4096).source == Choice::Source::family);
  TuningSources given;
  CHECK_THROWS_AS(add_user_tuning(given, s.dir.path() / "user.json", true), ConfigError);
  CHECK_THROWS_WITH_AS(add_user_tuning(given, s.dir.path() / "missing.json", true),
                       doctest::Contains("missing.json: the tuning file does not exist"), ConfigError);
}
